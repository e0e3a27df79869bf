"""Running one request: provider chunks → think guard → (markup hold) → events on the bus."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from pheron_tui.core import events as ev
from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import (
    CompletionRequest,
    DoneChunk,
    PromptProgressChunk,
    ReasoningChunk,
    StartChunk,
    TextChunk,
    ToolCallChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.core.parsing import LEGACY_CALL_START, TOOL_CALL_OPEN, MarkupHold
from pheron_tui.core.provider import Provider
from pheron_tui.core.think import ThinkGuard

LOOP_MIN_CHARS = 400
"""A reply whose tail repeats one span for at least this many characters is looping."""
LOOP_MAX_PERIOD = 400
LOOP_CHECK_EVERY = 48


def repeating_tail(text: str) -> str | None:
    """The span ``text`` ends by repeating (at least three times, over LOOP_MIN_CHARS), or
    None. Small models stuck in a loop write the same line or sentence until the token budget
    runs out; spotting it early saves the user minutes."""
    if len(text) < LOOP_MIN_CHARS:
        return None
    # A period p can only repeat if the last few characters also sit p earlier: find those
    # places (str.rfind, nearest first) instead of trying every p.
    key_len = 4
    key, end = text[-key_len:], len(text) - key_len
    limit = min(LOOP_MAX_PERIOD, len(text) // 3)
    pos = text.rfind(key, 0, len(text) - 1)
    while pos != -1:
        period = end - pos
        if period > limit:
            break
        times = max(3, -(-LOOP_MIN_CHARS // period))
        if times * period > len(text):
            break
        unit = text[-period:]
        repeated = all(text[-(i + 1) * period : -i * period] == unit for i in range(1, times))
        if repeated and unit.strip():
            return unit
        pos = text.rfind(key, 0, pos + key_len - 1)
    return None


class LoopGuard:
    """Watches a streamed reply and says when it has started repeating itself."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._length = 0
        self._checked = 0
        self.unit: str | None = None

    def feed(self, text: str) -> bool:
        self._text.append(text)
        self._length += len(text)
        if self._length - self._checked < LOOP_CHECK_EVERY:
            return False
        self._checked = self._length
        tail = "".join(self._text)[-(LOOP_MAX_PERIOD * 3 + LOOP_MIN_CHARS) :]
        self._text = [tail]
        self.unit = repeating_tail(tail)
        return self.unit is not None


_COMPLETE_CALL = re.compile(r"<tool_call>.*?</tool_call>|CALL\(.*?\n", re.DOTALL)
"""A call written out to its end: a native block, or a legacy line with its newline."""


class RepeatedCallGuard:
    """Watches a reply's answer text and says when it writes a call it already wrote. A
    reply may hold several calls; a small model given that room writes the same call line
    after line, and nothing after the first copy is worth waiting for."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.repeated = False

    def feed(self, text: str) -> None:
        self._parts.append(text)
        if "\n" not in text and ">" not in text:  # no call can have just ended
            return
        written = "".join(self._parts)
        self._parts = [written]
        if LEGACY_CALL_START not in written and TOOL_CALL_OPEN not in written:
            return  # prose: nothing to scan
        calls = [" ".join(m.group(0).split()) for m in _COMPLETE_CALL.finditer(written)]
        self.repeated = len(calls) != len(set(calls))


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


class DeltaBatcher:
    """Turns many small text pieces into few delta events.

    Text is flushed when the kind changes, at the end, and whenever ``window_s`` has passed
    since the last flush; the first piece and any piece after a pause go out at once, so a slow
    stream is never delayed and a fast one costs one event per window, not one per token.
    """

    def __init__(
        self, bus: EventBus, turn_id: int, phase: ev.Phase, step: int, window_s: float = 0.008
    ) -> None:
        self.bus, self.turn_id, self.phase, self.step = bus, turn_id, phase, step
        self.window_s = window_s
        self._kind = ""
        self._parts: list[str] = []
        self._last_flush = 0.0

    def add(self, kind: str, text: str) -> None:
        if kind != self._kind:
            self.flush()
            self._kind = kind
        self._parts.append(text)
        now = time.perf_counter()
        if now - self._last_flush >= self.window_s:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        self._last_flush = time.perf_counter() if now is None else now
        if not self._parts:
            return
        text = "".join(self._parts)
        self._parts.clear()
        if self._kind == "think":
            self.bus.emit(ev.ThinkDelta, self.turn_id, text=text, phase=self.phase, step=self.step)
        else:
            self.bus.emit(ev.AnswerDelta, self.turn_id, text=text)


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
    hold = None
    if hold_markup:  # planning only: classify and critic requests show nothing held
        hold = MarkupHold(
            {spec.function.name: spec.function.parameters for spec in request.tools or ()}
        )
    think_parts: list[str] = []
    answer_parts: list[str] = []
    shown_parts: list[str] = []
    deltas = DeltaBatcher(bus, turn_id, phase, step)
    reply = StreamedReply()
    started = time.perf_counter()
    first_token_at: float | None = None
    chunks = 0
    loop = LoopGuard()
    calls = RepeatedCallGuard()
    reading: PromptProgressChunk | None = None  # the last progress of a prompt being read

    def progress(processed: int, total: int) -> None:
        bus.emit(ev.PromptProgress, turn_id, processed=processed, total=total, phase=phase)

    def route(segments: Sequence[tuple[str, str]]) -> None:
        for kind, text in segments:
            if kind == "think":
                think_parts.append(text)
                deltas.add("think", text)
                continue
            answer_parts.append(text)
            calls.feed(text)
            if not show_answer:
                continue
            visible = hold.feed(text) if hold is not None else text
            if visible:
                shown_parts.append(visible)
                deltas.add("answer", visible)

    try:
        async with contextlib.aclosing(provider.stream(request)) as stream:  # type: ignore[type-var]
            async for chunk in stream:
                if isinstance(chunk, TextChunk | ReasoningChunk):
                    chunks += isinstance(chunk, TextChunk)
                    if first_token_at is None:
                        first_token_at = time.perf_counter()
                        if reading is not None:  # said, so no "reading 512/3,922" lingers
                            progress(reading.total, reading.total)
                    if isinstance(chunk, TextChunk):
                        route(guard.feed(chunk.text))
                    else:
                        route([("think", chunk.text)])
                    if loop.feed(chunk.text):
                        # Stop generating: closing the stream stops the engine at once.
                        reply.finish_reason = "loop"
                        break
                    if calls.repeated:  # the calls before the copy stand; not an error
                        reply.finish_reason = "stop"
                        break
                elif isinstance(chunk, ToolCallChunk):
                    reply.provider_calls.append(chunk)
                elif isinstance(chunk, StartChunk):
                    if chunk.starts_in_think:
                        guard = ThinkGuard(starts_in_think=True)
                elif isinstance(chunk, UsageChunk):
                    reply.usage = chunk.usage
                elif isinstance(chunk, PromptProgressChunk):
                    reading = chunk
                    progress(chunk.processed, chunk.total)
                elif isinstance(chunk, DoneChunk):
                    reply.finish_reason = chunk.finish_reason
    except BaseException:
        # What arrived before a failure or a cancel still reaches the screen and the log.
        deltas.flush()
        raise
    route(guard.finish())
    if hold is not None and show_answer and (rest := hold.finish()):
        shown_parts.append(rest)
        deltas.add("answer", rest)
    deltas.flush()

    if reply.finish_reason == "loop":
        shown = (loop.unit or "").strip()[:60]
        bus.emit(
            ev.ErrorRaised,
            turn_id,
            message=f"the model kept repeating itself ({shown!r}…), so its reply was cut off",
            recoverable=True,
        )
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
        mask_ms_per_token=usage.mask_ms_per_token,
        estimated=usage.estimated,
    )
    return reply


def _estimate_usage(chunks: int, started: float, first_token_at: float | None) -> Usage:
    """Usage for providers that report none: chunks stand in for tokens."""
    now = time.perf_counter()
    ttft = ((first_token_at or now) - started) * 1000
    generating = now - (first_token_at or now)
    rate = chunks / generating if generating > 0 and chunks > 1 else 0.0
    return Usage(completion_tokens=chunks, tokens_per_s=rate, ttft_ms=ttft, estimated=True)
