"""Running one request: provider chunks → think guard → (markup hold) → events on the bus."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pheron_tui.core import events as ev
from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import (
    CompletionRequest,
    DoneChunk,
    ReasoningChunk,
    StartChunk,
    TextChunk,
    ToolCallChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.core.parsing import MarkupHold
from pheron_tui.core.think import ThinkGuard
from pheron_tui.providers.base import Provider


@dataclass
class StreamedReply:
    think: str = ""
    answer: str = ""
    """Answer text with think text removed, markup included (the parser reads this)."""
    shown: str = ""
    """What reached the chat pane as AnswerDelta."""
    provider_calls: list[ToolCallChunk] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None


async def stream_reply(
    provider: Provider,
    bus: EventBus,
    turn_id: int,
    request: CompletionRequest,
    *,
    step: int = 0,
    show_answer: bool = True,
    hold_markup: bool = False,
) -> StreamedReply:
    """Stream ``request``; think text goes out as ThinkDelta, answer text as AnswerDelta.

    With ``hold_markup`` (planning) the answer is shown only up to the first tool-call, CLARIFY
    or ``<final>`` marker. With ``show_answer`` off nothing is shown (classify, critic).
    """
    phase = request.purpose
    guard = ThinkGuard()
    hold = MarkupHold() if hold_markup else None
    think_parts: list[str] = []
    answer_parts: list[str] = []
    shown_parts: list[str] = []
    reply = StreamedReply()
    started = time.perf_counter()
    first_token_at: float | None = None
    chunks = 0

    def route(segments: list[tuple[str, str]]) -> None:
        for kind, text in segments:
            if kind == "think":
                think_parts.append(text)
                bus.emit(ev.ThinkDelta, turn_id, text=text, phase=phase, step=step)
                continue
            answer_parts.append(text)
            if not show_answer:
                continue
            visible = hold.feed(text) if hold is not None else text
            if visible:
                shown_parts.append(visible)
                bus.emit(ev.AnswerDelta, turn_id, text=visible)

    async for chunk in provider.stream(request):
        if isinstance(chunk, TextChunk):
            chunks += 1
            if first_token_at is None:
                first_token_at = time.perf_counter()
            route(guard.feed(chunk.text))
        elif isinstance(chunk, ReasoningChunk):
            if first_token_at is None:
                first_token_at = time.perf_counter()
            route([("think", chunk.text)])
        elif isinstance(chunk, ToolCallChunk):
            reply.provider_calls.append(chunk)
        elif isinstance(chunk, StartChunk):
            if chunk.starts_in_think:
                guard = ThinkGuard(starts_in_think=True)
        elif isinstance(chunk, UsageChunk):
            reply.usage = chunk.usage
        elif isinstance(chunk, DoneChunk):
            reply.finish_reason = chunk.finish_reason
    route(guard.finish())
    if hold is not None and show_answer and (rest := hold.finish()):
        shown_parts.append(rest)
        bus.emit(ev.AnswerDelta, turn_id, text=rest)

    reply.think = "".join(think_parts).strip()
    reply.answer = "".join(answer_parts).strip()
    reply.shown = "".join(shown_parts)
    usage = reply.usage or _estimate_usage(chunks, started, first_token_at)
    reply.usage = usage
    bus.emit(
        ev.Usage,
        turn_id,
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        completion_tokens=usage.completion_tokens,
        tokens_per_s=usage.tokens_per_s,
        ttft_ms=usage.ttft_ms,
        purpose=phase,
    )
    return reply


def _estimate_usage(chunks: int, started: float, first_token_at: float | None) -> Usage:
    """Usage for providers that report none: chunks stand in for tokens."""
    now = time.perf_counter()
    ttft = ((first_token_at or now) - started) * 1000
    generating = now - (first_token_at or now)
    rate = chunks / generating if generating > 0 and chunks > 1 else 0.0
    return Usage(completion_tokens=chunks, tokens_per_s=rate, ttft_ms=ttft)
