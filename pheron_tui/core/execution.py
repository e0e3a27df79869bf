"""Running one proposed tool call: risk, approval, events, the tool itself, cancellation.

The orchestrator decides *which* calls to run and what goes back to the model; this runs one
call and reports every step of it on the bus.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from pheron_tui.core import events as ev
from pheron_tui.core.approval import ApprovalGate
from pheron_tui.core.bus import EventBus
from pheron_tui.tools.registry import PreparedCall, ToolContext, ubid

if TYPE_CHECKING:  # the orchestrator imports this module
    from pheron_tui.core.orchestrator import AgentSettings

OBSERVATION_CAP = 16_000


def _cap(text: str, limit: int = OBSERVATION_CAP) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


class ToolExecutor:
    def __init__(self, bus: EventBus, gate: ApprovalGate, settings: AgentSettings) -> None:
        self.bus = bus
        self.gate = gate
        self.settings = settings

    async def run(self, turn_id: int, call_id: str, call: PreparedCall) -> tuple[bool, str]:
        tool, args = call.tool, call.args
        context = ToolContext(
            workspace=self.settings.workspace,
            shell_timeout_s=self.settings.shell_timeout_s,
            output_cap_chars=self.settings.output_cap_chars,
            on_output=lambda text: self.bus.emit(
                ev.ToolOutputDelta, turn_id, call_id=call_id, text=text
            ),
            shell_prefix=self.settings.shell_prefix,
        )
        risk = tool.risk_for(args, context)
        self.bus.emit(
            ev.ToolCallProposed,
            turn_id,
            call_id=call_id,
            tool=tool.name,
            arguments=call.arguments,
            ubid=ubid(tool.name),
            risk=risk,
        )
        started = time.perf_counter()
        try:
            decision = self.gate.automatic(tool.name, risk) or await self.gate.wait(
                call_id, tool.name
            )
            self.bus.emit(
                ev.ToolCallDecided,
                turn_id,
                call_id=call_id,
                decision=decision.label,
                by=decision.by,
            )
            if not decision.approved:
                if decision.by == "policy:none":
                    observation = (
                        "Tool calls are turned off (approval policy 'none'); this call did not "
                        "run. Answer without tools."
                    )
                else:
                    observation = "The user denied this call; it did not run."
                self.bus.emit(
                    ev.ToolCallFinished,
                    turn_id,
                    call_id=call_id,
                    ok=False,
                    observation=observation,
                    duration_ms=0.0,
                )
                return False, observation
            self.bus.emit(ev.ToolCallStarted, turn_id, call_id=call_id)
            started = time.perf_counter()
            try:
                result = await tool.run(args, context)
                ok, observation = result.ok, _cap(result.observation)
            except (OSError, ValueError, RuntimeError) as exc:
                ok, observation = False, f"the tool failed: {type(exc).__name__}: {exc}"
        except asyncio.CancelledError:
            self.bus.emit(
                ev.ToolCallFinished,
                turn_id,
                call_id=call_id,
                ok=False,
                observation="cancelled by the user",
                duration_ms=(time.perf_counter() - started) * 1000,
            )
            raise
        self.bus.emit(
            ev.ToolCallFinished,
            turn_id,
            call_id=call_id,
            ok=ok,
            observation=observation,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return ok, observation
