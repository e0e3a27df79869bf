"""The context budget: how much of the model's window a request uses, and compaction.

Counts are estimates (about four characters per token for English and code) unless the
provider reported the real prompt size, which the status bar shows. Compaction never drops
anything silently: older turns become a summary the model wrote, the conversation says so, and
the system prompt, the tools and the latest turns stay as they were.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pheron_tui.core.errors import PheronError
from pheron_tui.core.messages import CompletionRequest, Message, ToolSpec
from pheron_tui.core.prompts import COMPACT_SYSTEM

CHARS_PER_TOKEN = 4
COMPACT_AT = 0.75
"""Compact when a request would fill this share of the window (the reply needs room too)."""
SUMMARY_TOKENS = 512
TRANSCRIPT_MESSAGE_CHARS = 2000
"""Each old message is cut to this much in the text the summary is written from."""
SUMMARY_PREFIX = "Summary of the earlier conversation, which was compacted to fit the context:"


class ContextFull(PheronError, ValueError):
    """A request cannot fit the model's window even after compacting."""


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def message_tokens(messages: Sequence[Message]) -> int:
    total = 0
    for message in messages:
        total += 4 + estimate_tokens(message.content or "")  # role and template markers
        total += estimate_tokens(message.reasoning_content or "")
        for call in message.tool_calls:
            total += estimate_tokens(call.name + json.dumps(call.arguments, default=str))
    return total


def tools_tokens(specs: Sequence[ToolSpec]) -> int:
    return estimate_tokens(json.dumps([spec.model_dump(mode="json") for spec in specs]))


def request_tokens(request: CompletionRequest) -> int:
    return message_tokens(request.messages) + tools_tokens(request.tools or [])


@dataclass(frozen=True)
class ContextPart:
    name: str
    tokens: int
    estimated: bool = True


async def breakdown(
    system: str,
    instructions: str,
    specs: Sequence[ToolSpec],
    history: Sequence[Message],
    tools_in_system: bool,
    count: Callable[[Sequence[str]], Awaitable[list[int]]] | None = None,
) -> list[ContextPart]:
    """What the model sees on the next planning step, part by part: counted with the
    model's tokenizer when ``count`` is given (and works), else estimated. ``tools_in_system``:
    the legacy format describes the tools in the system prompt itself."""
    tools_text = "" if tools_in_system else json.dumps([s.model_dump(mode="json") for s in specs])
    conversation = "\n".join(
        (m.content or "") + "".join(c.name + json.dumps(c.arguments) for c in m.tool_calls)
        for m in history
    )
    texts = [system, instructions, tools_text, conversation]
    names = [
        "system prompt" + (f" (with the {len(specs)} tools)" if tools_in_system else ""),
        "instructions (AGENTS.md, modes)",
        "tools (in the system prompt)" if tools_in_system else f"tools ({len(specs)})",
        f"conversation ({len(history)} messages)",
    ]
    if count is not None:
        try:
            counted = await count(texts)
            return [ContextPart(n, c, estimated=False) for n, c in zip(names, counted, strict=True)]
        except Exception:  # a tokenizer that fails leaves the estimate, not an error
            pass
    estimates = [
        estimate_tokens(system),
        estimate_tokens(instructions),
        0 if tools_in_system else tools_tokens(specs),
        message_tokens(history),
    ]
    return [ContextPart(n, c) for n, c in zip(names, estimates, strict=True)]


def needs_compaction(request: CompletionRequest, window: int | None) -> bool:
    return window is not None and request_tokens(request) > COMPACT_AT * window


def transcript(messages: Sequence[Message], per_message: int = TRANSCRIPT_MESSAGE_CHARS) -> str:
    """Old messages as plain text for the summariser (each one capped)."""
    lines = []
    for message in messages:
        text = (message.content or "").strip()
        for call in message.tool_calls:
            text += f"\n[called {call.name} {json.dumps(call.arguments, default=str)}]"
        if not text:
            continue
        if len(text) > per_message:
            text = text[:per_message] + " […]"
        who = {"user": "User", "assistant": "Assistant", "tool": f"Tool {message.name}"}.get(
            message.role, message.role
        )
        lines.append(f"{who}: {text}")
    return "\n\n".join(lines)


async def summarise(
    old: Sequence[Message],
    generate: Callable[[CompletionRequest], Awaitable[str]],
    window: int | None = None,
) -> list[Message]:
    """The messages that stand for ``old``: the model's summary, said as a note to it. The
    text it is written from keeps the latest part when all of it would not fit ``window``."""
    text = transcript(old)
    if window is not None:
        room = max(window - SUMMARY_TOKENS - 200, 256) * CHARS_PER_TOKEN // 2
        if len(text) > room:
            # Every message keeps its beginning, so the summary still covers all of them.
            text = transcript(old, max(room // max(len(old), 1) - 24, 80))  # 24: labels
        if len(text) > room:
            text = "[…earlier part left out…]\n" + text[-room:]
    request = CompletionRequest(
        messages=[
            Message(role="system", content=COMPACT_SYSTEM),
            Message(role="user", content=text),
        ],
        enable_thinking=False,
        max_tokens=SUMMARY_TOKENS,
        purpose="compact",
    )
    summary = (await generate(request)).strip() or "(the model wrote no summary)"
    return [
        Message(role="user", content=f"{SUMMARY_PREFIX}\n{summary}"),
        Message(role="assistant", content="Understood; I will continue from that summary."),
    ]
