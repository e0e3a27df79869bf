"""Running one proposed tool call: risk, approval, events, the tool itself, cancellation.

The orchestrator decides *which* calls to run and what goes back to the model; this runs one
call and reports every step of it on the bus.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pheron_tui.core import events as ev
from pheron_tui.core.approval import (
    NOBODY_TO_ASK,
    ApprovalGate,
    CallFacts,
    GateDecision,
    shown_rules,
)
from pheron_tui.core.bus import EventBus
from pheron_tui.core.capped import CappedOutput
from pheron_tui.core.diffs import FileChange, apply_hunks, describe_hunks
from pheron_tui.core.safety import shorten
from pheron_tui.core.tools import PreparedCall, RiskAssessment, ToolContext, ToolResult, ubid

log = logging.getLogger("pheron_tui.execution")

PLAN_MODE_REFUSAL = (
    "Plan mode is on: only read-only tools run, so this call did not. Finish investigating "
    "and reply with a numbered plan of the changes you would make."
)

if TYPE_CHECKING:  # the orchestrator imports this module
    from pheron_tui.core.orchestrator import AgentSettings


def _cap(text: str, limit: int) -> str:
    capped = CappedOutput(limit)
    capped.add(text)
    return capped.text()


def _denial(by: str) -> str:
    """What the model is told about a call that was not allowed to run, by whom."""
    if by == "policy:none":
        return (
            "Tool calls are turned off (approval policy 'none'); this call did not run. "
            "Answer without tools."
        )
    if by.endswith(NOBODY_TO_ASK):
        return (
            "This call needs the user's approval and there is no one to ask (a headless run); "
            "it did not run. Answer with what you have, or say what you would need to run."
        )
    if by.startswith("rule:"):
        return f"A rule denied this call ({by}); it did not run."
    return "The user denied this call; it did not run."


MAX_DIFF_CHARS = 60_000
"""A diff longer than this is shown cut (and the call can then only be decided whole)."""


def _shown_diff(change: FileChange | None) -> tuple[str, int]:
    """The diff as the card and the log show it, and how many hunks a person may decide one
    by one: two or more, of an existing file, all of them shown."""
    if change is None:
        return "", 0
    diff = change.diff
    if len(diff) > MAX_DIFF_CHARS:
        cut = diff[:MAX_DIFF_CHARS].rsplit("\n", 1)[0]
        left = diff.count("\n") - cut.count("\n")
        return f"{cut}\n… {left:,} more lines of the diff not shown\n", 0
    count = len(change.hunks) if change.before is not None else 0
    return diff, count if count >= 2 else 0


@dataclass(frozen=True)
class CallOutcome:
    status: ev.CallStatus
    observation: str
    """What the model is told."""
    unchanged: tuple[str, ...] = ()
    """A command's files left as they were (``ToolResult.unchanged``)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ToolExecutor:
    def __init__(self, bus: EventBus, gate: ApprovalGate, settings: AgentSettings) -> None:
        self.bus = bus
        self.gate = gate
        self.settings = settings
        self.seen: dict[Path, tuple[int, int]] = {}
        """The files the model has been shown (``ToolContext.seen``), kept from call to call."""
        self.warned: set[tuple[str, ...]] = set()
        """Calls the model was warned about once (``ToolContext.warned``)."""

    def forget_files(self) -> None:
        """The conversation no longer holds what the tools showed (rewound, compacted,
        replaced): a file must be read again before it is added to or replaced."""
        self.seen.clear()
        self.warned.clear()

    async def run(
        self,
        turn_id: int,
        call_id: str,
        call: PreparedCall,
        withheld: tuple[str, str] | None = None,
        kept: tuple[str, ...] = (),
    ) -> CallOutcome:
        """Propose the call, ask or apply the policy, run it. ``withheld`` is (why, by whom)
        when the turn itself rules the call out: it is shown, then denied without asking.
        ``kept``: the files the turn keeps as they are (``ToolContext.kept``)."""
        tool, args = call.tool, call.args
        context = ToolContext(
            workspace=self.settings.workspace,
            shell_timeout_s=self.settings.shell_timeout_s,
            output_cap_chars=self.settings.output_cap_chars,
            on_output=lambda text: self.bus.emit(
                ev.ToolOutputDelta, turn_id, call_id=call_id, text=text
            ),
            shell_prefix=self.settings.shell_prefix,
            shell_refusal=self.settings.shell_refusal,
            protected=self.settings.protected_paths,
            kept=kept,
            seen=self.seen,
            warned=self.warned,
        )
        try:
            assessment = tool.assess(args, context)
        except Exception as exc:  # an assessment bug must not let a call through unchecked
            assessment = RiskAssessment("dangerous", [f"its risk could not be assessed ({exc})"])
        refusal, by = tool.refusal(args, context), "workspace"
        if refusal is None and self.settings.plan_mode and assessment.tier != "read":
            refusal, by = PLAN_MODE_REFUSAL, "plan mode"
        elif refusal is None and withheld is not None:
            refusal, by = withheld
        # A refused call is not previewed: a preview may show the model a file (a write to a
        # file it has not seen), and a refused call's result says only why it was refused.
        preview = await self._preview(call, context) if refusal is None else None
        change = preview if isinstance(preview, FileChange) else None
        diff, hunks = _shown_diff(change)
        self.bus.emit(
            ev.ToolCallProposed,
            turn_id,
            call_id=call_id,
            tool=tool.name,
            arguments=call.arguments,
            ubid=ubid(tool.name),
            risk=assessment.tier,
            risk_reasons=assessment.reasons,
            diff=diff,
            hunks=hunks,
        )
        if refusal is not None:
            # Nothing to ask about: the tool would refuse it anyway.
            self.bus.emit(ev.ToolCallDecided, turn_id, call_id=call_id, decision="denied", by=by)
            return self._finished(turn_id, call_id, CallOutcome("denied", refusal))
        if isinstance(preview, ToolResult) and not preview.ok:
            # Nor about a change that cannot be made (`old` not in the file, a file never
            # read): it fails as it would have run, without troubling anyone.
            failed = CallOutcome(
                "failed", _cap(preview.observation, self.settings.output_cap_chars)
            )
            return self._finished(turn_id, call_id, failed)
        facts = CallFacts(
            tool=tool.name,
            risk=assessment.tier,
            commands=assessment.commands,
        )
        started: float | None = None
        try:
            decision = (
                self.gate.automatic(facts)
                or self._plan_mode_read(facts)
                or await self._ask(turn_id, call_id, facts)
            )
            self.bus.emit(
                ev.ToolCallDecided,
                turn_id,
                call_id=call_id,
                decision=decision.label,
                by=decision.by,
                hunks=sorted(n + 1 for n in decision.hunks) if decision.hunks else None,
            )
            if decision.added:
                self.bus.emit(ev.RulesChanged, turn_id, rules=shown_rules(self.gate.rules))
            if not decision.approved:
                return self._finished(turn_id, call_id, CallOutcome("denied", _denial(decision.by)))
            await self._checkpoint(turn_id, call_id, call, context)
            self.bus.emit(ev.ToolCallStarted, turn_id, call_id=call_id)
            started = time.perf_counter()
            try:
                if decision.hunks is not None and change is not None:
                    text = apply_hunks(change, set(decision.hunks))
                    result = await tool.write_reviewed(change, text, context)
                    told = describe_hunks(change, set(decision.hunks))
                    result = ToolResult(result.ok, f"{told}\n{result.observation}")
                else:
                    result = await tool.run(args, context)
                outcome = CallOutcome(
                    "ok" if result.ok else "failed",
                    _cap(result.observation, self.settings.output_cap_chars),
                    result.unchanged,
                )
            except (OSError, ValueError, RuntimeError) as exc:
                failure = f"the tool failed: {type(exc).__name__}: {shorten(str(exc), 300)}"
                outcome = CallOutcome("failed", failure)
        except asyncio.CancelledError:
            # Cancelled while waiting for approval (``started`` None), the call took no time.
            cancelled = CallOutcome("cancelled", "cancelled by the user")
            self._finished(turn_id, call_id, cancelled, started)
            raise
        return self._finished(turn_id, call_id, outcome, started)

    def _plan_mode_read(self, facts: CallFacts) -> GateDecision | None:
        """Plan mode is for looking: a read call runs without asking (deny rules and the
        "none" policy still stop it, in ``automatic``), as under the read-only policy."""
        if self.settings.plan_mode and facts.risk == "read":
            return GateDecision(approved=True, auto=True, by="plan mode")
        return None

    @staticmethod
    async def _preview(call: PreparedCall, context: ToolContext) -> FileChange | ToolResult | None:
        """The file change to show, or why it cannot be made; a preview that breaks shows
        none (running says why)."""
        try:
            return await call.tool.preview(call.args, context)
        except Exception:
            log.exception("previewing %s failed", call.tool.name)
            return None

    async def _checkpoint(
        self, turn_id: int, call_id: str, call: PreparedCall, context: ToolContext
    ) -> None:
        """Record what the call's files are now, before it changes them; a tool whose
        effects cannot be known beforehand is recorded as such."""
        checkpointer = self.settings.checkpointer
        tool = call.tool
        if checkpointer is None or tool.risk == "read":
            return
        paths = tool.touches(call.args, context)
        files: list[ev.SavedFile] = []
        complete = False
        if paths:
            try:
                files, complete = await checkpointer.save(paths, context)
            except Exception:  # the call still runs; the rewind screen says it is not saved
                log.exception("checkpointing %s failed", paths)
        self.bus.emit(
            ev.FilesCheckpointed,
            turn_id,
            call_id=call_id,
            tool=tool.name,
            files=files,
            complete=complete,
        )

    async def _ask(self, turn_id: int, call_id: str, facts: CallFacts) -> GateDecision:
        self.bus.emit(
            ev.ToolCallAwaitingDecision,
            turn_id,
            call_id=call_id,
            choices=facts.choices(),
            always=[rule.describe() for rule in facts.always_rules()],
        )
        return await self.gate.wait(call_id, facts)

    def _finished(
        self, turn_id: int, call_id: str, outcome: CallOutcome, started: float | None = None
    ) -> CallOutcome:
        """Report the call's end; a call that never ran (``started`` None) took no time."""
        took = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        self.bus.emit(
            ev.ToolCallFinished,
            turn_id,
            call_id=call_id,
            ok=outcome.ok,
            status=outcome.status,
            observation=outcome.observation,
            duration_ms=took,
        )
        return outcome
