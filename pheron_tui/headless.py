"""``pheron-tui run``: one turn without the TUI.

With ``--json`` every event is printed as one JSON line on stdout (the session-log format).
Otherwise the answer goes to stdout as it streams and tool activity to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from typing import TextIO

from pheron_tui.core import events as ev
from pheron_tui.core.approval import NOBODY_TO_ASK
from pheron_tui.core.bus import EventBus, Subscription
from pheron_tui.core.safety import printable, shorten
from pheron_tui.runtime import Runtime

EXIT_CODES = {"finished": 0, "failed": 1, "denied": 1, "cancelled": 130}


def approval_hint(denied: dict[str, int]) -> str | None:
    """What to pass next time when calls were denied for want of a person or by the policy."""
    if not denied:
        return None
    tools = ", ".join(f"{tool} ×{n}" if n > 1 else tool for tool, n in denied.items())
    return (
        f"{sum(denied.values())} tool call(s) did not run ({tools}): a headless run cannot "
        "ask you. To let them run, pass --approve read-only (read_file, list_dir, "
        "search_files) or --approve all (everything, including writes and shell commands)."
    )


def _shown_arguments(value: object) -> object:
    """A call's arguments with each long string cut: a log line, not the whole file a write
    holds (``--json`` has every byte)."""
    if isinstance(value, str):
        return shorten(value, 200)
    if isinstance(value, dict):
        return {shorten(str(k), 60): _shown_arguments(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown_arguments(v) for v in value]
    return value


class PlainPrinter:
    """Human-readable output: answer on ``out``, everything else on ``err``."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self._answer_open = False

    def _say(self, line: str) -> None:
        if self._answer_open:
            self.out.write("\n")
            self.out.flush()
            self._answer_open = False
        self.err.write(printable(line) + "\n")
        self.err.flush()

    def handle(self, event: ev.Event) -> None:
        match event:
            case ev.AnswerDelta(text=text):
                self.out.write(printable(text))
                self.out.flush()
                self._answer_open = not text.endswith("\n")
            case ev.AnswerSentBack(note=note):
                self._say(f"(not the answer: sent back to the model: {shorten(note, 200)})")
            case ev.ClarifyRequested(question=question):
                self.out.write(printable(question) + "\n")
                self.out.flush()
            case ev.ToolCallProposed(
                tool=tool, arguments=arguments, risk=risk, risk_reasons=reasons
            ):
                shown = json.dumps(_shown_arguments(arguments), ensure_ascii=False)
                self._say(f"→ {tool} {shown} [{risk}]")
                for reason in reasons:
                    self._say(f"  ⚠ {reason}")
            case ev.ToolCallDecided(decision="denied", by=by):
                self._say(f"  denied ({by})")
            case ev.ToolCallFinished(ok=ok, observation=observation, duration_ms=ms):
                first = observation.strip().splitlines()[0] if observation.strip() else ""
                self._say(f"  {'✓' if ok else '✗'} {first[:100]} ({ms:.0f} ms)")
            case ev.CriticVerdict(verdict=verdict, reason=reason, auto=auto):
                self._say(f"critic: {verdict}{' (auto)' if auto else ''} — {reason}")
            case ev.ErrorRaised(message=message):
                self._say(f"error: {message}")
            case ev.TurnFinished(status=status, reason=reason) if status != "finished":
                self._say(f"{status}: {reason}")
            case ev.TurnFinished():
                if self._answer_open:
                    self.out.write("\n")
                    self.out.flush()
                    self._answer_open = False


class JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def handle(self, event: ev.Event) -> None:
        self.out.write(ev.event_to_json(event) + "\n")
        self.out.flush()


async def _print_events(
    subscription: Subscription, printer: PlainPrinter | JsonPrinter
) -> dict[str, int]:
    """Print every event; return the tools whose calls were denied for want of approval."""
    proposed: dict[str, str] = {}
    unasked: dict[str, int] = {}
    async for event in subscription:
        printer.handle(event)
        match event:
            case ev.ToolCallProposed(call_id=call_id, tool=tool):
                proposed[call_id] = tool
            case ev.ToolCallDecided(call_id=call_id, decision="denied", by=by) if (
                by == "policy:none" or by.endswith(NOBODY_TO_ASK)
            ):
                tool = proposed.get(call_id, "?")
                unasked[tool] = unasked.get(tool, 0) + 1
    return unasked


async def run_headless(
    runtime: Runtime,
    prompt: str,
    as_json: bool,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    bus: EventBus = runtime.bus
    printer = JsonPrinter(out) if as_json else PlainPrinter(out, err)
    for warning in runtime.warnings():
        err.write(f"pheron-tui: WARNING: {warning}\n")
    if runtime.sandbox.prefix is None and runtime.orchestrator.settings.policy != "none":
        err.write(f"pheron-tui: shell commands: {runtime.sandbox.label}\n")
    subscription = bus.add_subscriber(maxsize=1_000_000)
    printing = asyncio.create_task(_print_events(subscription, printer))
    runtime.start_recording()
    runtime.start_mcp()  # starts while the model loads
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, runtime.orchestrator.cancel)
    try:
        if not await runtime.load_model():
            return 1
        await runtime.mcp.settled()  # a headless run's first step should see the tools
        result = await runtime.orchestrator.submit(prompt)
        return EXIT_CODES[result.status]
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await runtime.mcp.aclose()  # before the printer stops: "stopped" is printed too
        bus.remove_subscriber(subscription)
        if hint := approval_hint(await printing):
            err.write(f"pheron-tui: {hint}\n")
        await runtime.aclose()
