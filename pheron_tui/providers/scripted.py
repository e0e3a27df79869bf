"""A deterministic provider that replays replies from a script, for tests, demos and snapshots.

The script is JSON: ``{"replies": {"classify": [...], "chat": [...], "plan": [...],
"critic": [...]}}``. A reply is a string, or a list of chunks streamed exactly as written; a chunk
is a string, ``{"tool_call": {"name": …, "arguments": {…}}}`` (a call the "server" parsed),
``{"think": "…"}`` (reasoning the "server" separated) or ``{"usage": {…}}``. Replies for a
purpose are used in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from pheron_tui.core.messages import (
    Chunk,
    CompletionRequest,
    DoneChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.core.provider import Progress, ProviderError
from pheron_tui.providers.stop_strings import StopStrings


class _ScriptedCall(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class _ToolCallItem(BaseModel):
    tool_call: _ScriptedCall


class _ThinkItem(BaseModel):
    think: str


class _UsageItem(BaseModel):
    usage: Usage


ScriptChunk = str | _ToolCallItem | _ThinkItem | _UsageItem
ScriptReply = str | list[ScriptChunk]


class Script(BaseModel):
    replies: dict[str, list[ScriptReply]] = Field(default_factory=dict)
    delay_s: float = 0.0
    """Pause between chunks, to make streaming visible in demos."""
    native_tools: bool = True
    context_window: int | None = None
    """Tokens the pretend model holds (None: unknown, never compacted)."""


def load_script(path: Path) -> Script:
    """Read a script file; raise ProviderError with one clear line when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProviderError(f"cannot read script {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ProviderError(f"script {path} is not UTF-8 text (byte {exc.start})") from None
    try:
        return Script.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        if first["type"] == "json_invalid":
            raise ProviderError(f"script {path} is not valid JSON: {first['msg']}") from None
        raise ProviderError(f"script {path}: {where}: {first['msg']}") from None


class ScriptedProvider:
    name = "scripted"
    engine_reason = ""

    def __init__(self, script: Script, model: str = "script") -> None:
        self.script = script
        self.model = model
        self._cursor: dict[str, int] = {}
        self.requests: list[CompletionRequest] = []
        """Every request received, for tests that check what the model was shown."""

    @classmethod
    def from_replies(cls, native_tools: bool = True, **replies: list[Any]) -> ScriptedProvider:
        return cls(Script.model_validate({"replies": replies, "native_tools": native_tools}))

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return ()  # not known here; the common chat-template markers are defused anyway

    @property
    def display_model(self) -> str:
        return self.model

    @property
    def native_tools(self) -> bool:
        return self.script.native_tools

    @property
    def context_window(self) -> int | None:
        return self.script.context_window

    async def load(self, progress: Progress | None = None) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def _next_reply(self, purpose: str) -> ScriptReply:
        replies = self.script.replies.get(purpose, [])
        index = self._cursor.get(purpose, 0)
        if index >= len(replies):
            raise ProviderError(
                f"the script has no {purpose!r} reply left ({len(replies)} given, "
                f"request {index + 1} asked)"
            )
        self._cursor[purpose] = index + 1
        return replies[index]

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        reply = self._next_reply(request.purpose)
        items = [reply] if isinstance(reply, str) else reply
        reported_usage = False
        stops = StopStrings(request.stop)
        for item in items:
            if self.script.delay_s:
                await asyncio.sleep(self.script.delay_s)
            else:
                await asyncio.sleep(0)  # a real stream yields to the loop; so does this one
            if isinstance(item, str):
                if text := stops.feed(item):
                    yield TextChunk(text=text)
            elif isinstance(item, _ToolCallItem):
                yield ToolCallChunk(name=item.tool_call.name, arguments=item.tool_call.arguments)
            elif isinstance(item, _ThinkItem):
                yield ReasoningChunk(text=item.think)
            else:
                reported_usage = True
                yield UsageChunk(usage=item.usage)
        if rest := stops.finish():
            yield TextChunk(text=rest)
        if not reported_usage:
            # Deterministic figures (no clocks), so demos and snapshots never differ by timing.
            prompt = sum(len(m.content) for m in request.messages) // 4
            texts = sum(isinstance(item, str) for item in items)
            yield UsageChunk(usage=Usage(prompt_tokens=prompt, completion_tokens=texts))
        yield DoneChunk(finish_reason="stop")
