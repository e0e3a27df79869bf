"""One reply's tool calls, run in order: each prepared, checked, run and observed.

A reply may hold several calls. Each is prepared against its tool's schema (a malformed or
unknown one is reported back, not run); a call that repeats one that already worked is not
run again; a change written before an earlier call's result was seen waits (``call_order``);
on a first step, a call whose values nobody gave (``grounding``) or whose tool does not do
what was asked (``tool_fit``) is shown denied. Then the reply and the results are remembered,
in the order the model will read them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pheron_tui.core import events as ev
from pheron_tui.core.bus import EventBus
from pheron_tui.core.call_format import CallFormat, FirstStep
from pheron_tui.core.call_order import CallOrder
from pheron_tui.core.critic import Step
from pheron_tui.core.execution import CallOutcome, ToolExecutor
from pheron_tui.core.fix_target import off_target
from pheron_tui.core.grounding import guessed_values, without_guessed_items, without_unasked
from pheron_tui.core.messages import Message, ToolCall
from pheron_tui.core.parsing import ParsedCall
from pheron_tui.core.prompts import observation_message
from pheron_tui.core.provider import Provider
from pheron_tui.core.safety import shorten
from pheron_tui.core.streaming import StreamedReply
from pheron_tui.core.task_notes import (
    ALREADY_CALLED,
    REPEATED_CALL_MESSAGE,
    UNMADE_CHANGE_MESSAGE,
    check_kept_message,
    guessed_values_message,
    same_failure_message,
    unfit_call_message,
)
from pheron_tui.core.task_state import MALFORMED, TaskState
from pheron_tui.core.tool_fit import does_not_fit
from pheron_tui.core.tools import PreparedCall, ToolCallError, ToolContext, ToolRegistry

log = logging.getLogger("pheron_tui.orchestrator")


@dataclass
class _ReplyRun:
    """One reply's calls as they run: what the model will be told, and which calls wait."""

    fmt: CallFormat
    said: str
    """What was said before the reply's calls, where their values must come from."""
    start: FirstStep | None
    order: CallOrder = field(default_factory=CallOrder)
    results: list[Message] = field(default_factory=list)
    put_off: set[int] = field(default_factory=set)
    """The calls (their places in the reply) put off to the next step (``call_order``)."""
    repeat_told: bool = False
    """A repeated call of the reply was answered with what the next step must do."""


class CallRunner:
    """Runs the calls of the replies of one conversation (call ids count across its turns)."""

    def __init__(
        self, provider: Provider, registry: ToolRegistry, executor: ToolExecutor, bus: EventBus
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.executor = executor
        self.bus = bus
        self._call_ids = itertools.count(1)

    def _asked_only(self, call: ParsedCall, said: str, start: FirstStep | None) -> Any:
        """The call's arguments without the optional ones ``said`` gives no sign of
        (``unasked_options``): the tool's defaults stand for what nobody asked. On a first
        step whose values are checked (``start``), also without the items of a list of names
        that nobody said, beside ones that were (``without_guessed_items``)."""
        tool = self.registry.get(call.name)
        if tool is None or not isinstance(call.arguments, dict):
            return call.arguments
        schema = self.registry.spec(tool).function.model_dump()
        asked = call.arguments
        if start and tool.values_said:
            asked = without_guessed_items(asked, schema, said, chosen=start.call != "named")
            if asked != call.arguments:
                log.info("%s: kept only the items said of %s", call.name, call.arguments)
        if tool.options_said:
            asked = without_unasked(asked, schema, said)
            if len(asked) < len(call.arguments):
                log.info(
                    "%s: left out %s, which nobody asked for",
                    call.name,
                    call.arguments.keys() - asked.keys(),
                )
        return asked

    async def _off_target(
        self, state: TaskState, key: tuple[str, str], call: PreparedCall
    ) -> tuple[str, str] | None:
        """(why, by what) an edit is held back once: made to pass a failing check, it changes a
        function the check's output does not name, beside one it does (``fix_target``)."""
        failing = state.failing_check()
        if failing is None or key in state.held_off_target:
            return None
        workspace = self.executor.settings.workspace
        found = await asyncio.to_thread(off_target, call.arguments, failing, workspace)
        if found is None:
            return None
        state.held_off_target.add(key)
        return found.note(str(call.arguments["path"])), "fix check"

    def _guessed(self, call: PreparedCall, said: str, start: FirstStep) -> list[float | str]:
        """The values ``call`` needs that ``said`` does not give, judged as closely as ``start``
        asks (none for a tool whose values the model writes, ``Tool.values_said``)."""
        if not call.tool.values_said:
            return []
        tool = self.registry.spec(call.tool).function.model_dump()
        return guessed_values(call.arguments, tool, said, chosen=start.call != "named")

    async def _unfit(self, call: PreparedCall, text: str, start: FirstStep) -> bool:
        """Whether a first call the request did not name goes to a tool not made for what
        ``text`` asks, in the model's own judgement (``tool_fit``). A workspace tool the
        model chose is not judged: looking around before answering is its to choose. A call
        it was made to make at a low chance (``unsure``) must clearly fit, whatever the tool."""
        unsure = start.call == "unsure"
        if start.call == "named" or (call.tool.on_workspace and not unsure):
            return False
        tool = self.registry.spec(call.tool).function
        return await does_not_fit(self.provider, text, tool, sure=unsure)

    async def run(
        self,
        turn_id: int,
        state: TaskState,
        reply: StreamedReply,
        prose: str,
        calls: list[ParsedCall],
        fmt: CallFormat,
        remember: Callable[[Message], None],
        said: str = "",
        start: FirstStep | None = None,
    ) -> None:
        """Run the reply's calls in order, then ``remember`` the reply and their results.
        ``said``: on the task's first step, what was said before this reply's calls (the
        conversation and the reply's reasoning), where their values must come from; an
        optional argument it gives no sign of is left out (``without_unasked``). ``start``: a
        first step about no file of the workspace, where a call whose values nobody gave is
        not run either (``guessed_values``, as closely as the step's call was vouched for)
        and the answer is asked for instead."""
        # Every call in the reply, in order: a PreparedCall to run, or the problem to report.
        planned: list[tuple[str, ParsedCall, PreparedCall | str]] = []
        for call in calls:
            call_id = f"call-{next(self._call_ids)}"
            if call.error is not None and call.name and self.registry.get(call.name) is None:
                # CALL(test_calc.py): the name is the first thing wrong, and the tools'
                # names are what helps the model most (it meant shell_exec).
                planned.append((call_id, call, self.registry.unknown(call.name)))
                continue
            if call.error is not None:
                named = shorten(call.name, 60) or "the call"
                planned.append((call_id, call, f"{named}: {shorten(call.error, 400)}"))
                continue
            arguments = self._asked_only(call, said, start) if said else call.arguments
            try:
                planned.append((call_id, call, self.registry.prepare(call.name, arguments)))
            except ToolCallError as exc:
                planned.append((call_id, call, str(exc)))
        structured = [
            ToolCall(
                id=call_id,
                name=item.tool.name
                if isinstance(item, PreparedCall)
                else call.name or "invalid_call",
                arguments=item.arguments if isinstance(item, PreparedCall) else call.arguments,
            )
            for call_id, call, item in planned
        ]
        run = _ReplyRun(fmt, said, start)
        try:
            for number, (call_id, call, item) in enumerate(planned):
                await self._run_one(turn_id, state, run, number, call_id, call, item)
        finally:
            # The reply is remembered after its calls ran, without those put off: shown to the
            # user, but to the model as if never written (told of them, the 1.5B model wrote
            # the same guessed edits again, or answered with the note).
            kept = [call for n, call in enumerate(structured) if n not in run.put_off]
            answer = fmt.written_calls(prose, kept) if run.put_off else reply.answer
            remember(fmt.assistant_message(answer, prose, reply.think, kept))
            for message in run.results:
                remember(message)

    async def _run_one(
        self,
        turn_id: int,
        state: TaskState,
        run: _ReplyRun,
        number: int,
        call_id: str,
        call: ParsedCall,
        item: PreparedCall | str,
    ) -> None:
        """Run the reply's call ``number`` (or report why it cannot run)."""
        fmt, said, start, order = run.fmt, run.said, run.start, run.order
        if isinstance(item, str):
            order.add(call.name or "invalid_call", None, ok=False)
            self.bus.emit(
                ev.ErrorRaised,
                turn_id,
                message=f"the model's tool call was not run: {item}",
                recoverable=True,
                kind="tool_call",
            )
            run.results.append(
                fmt.result_message(call_id, call.name or "invalid_call", fmt.call_error(item))
            )
            state.note_outcome((MALFORMED, item), "failed")
            return
        key = (item.tool.name, json.dumps(item.arguments, sort_keys=True))
        if key == state.last_success or key in state.reads_done:
            # Small models loop on a call that already worked, or between two reads
            # (read, search, read, search…). Running it again tells them nothing new;
            # saying so, and asking for the answer, does. Not an error the user has to
            # read: the answer follows.
            log.info("turn %s: %s repeated; not run again", turn_id, item.tool.name)
            # What the next step must do is said once a reply: told to act on its first
            # repeated read and to answer on its second, the 1.5B model was made to answer
            # and gave the request back.
            note = ALREADY_CALLED
            unmade = state.steps[-1] if state.steps else None
            if unmade is not None and unmade.risk != "read" and unmade.status != "ok":
                # Reading again after a change that did not go through: the file is as read,
                # and what to do is mend that change, not answer.
                note = f"{ALREADY_CALLED} {UNMADE_CHANGE_MESSAGE}"
            elif not run.repeat_told:
                run.repeat_told = True
                undone = state.undone_order()
                if undone:
                    # Reading round and round instead of doing what was ordered.
                    state.tell_to_act(undone)
                    note = f"{ALREADY_CALLED} {undone}"
                else:
                    state.answer_now, note = True, REPEATED_CALL_MESSAGE
            run.results.append(fmt.result_message(call_id, item.tool.name, note))
            order.add(item.tool.name, item.tool.risk, ok=True)
            return
        if item.tool.risk in ("read", "execute") and key == state.last_failure:
            # A read or a command that just failed fails the same way again: a call that
            # worked since would have cleared ``last_failure``. The 1.5B model searched the
            # missing folder "tests" twice, then answered that test_units.py was not there;
            # asked whether average has a bug, it ran the failing tests three times over.
            log.info("turn %s: %s failed and repeated; not run again", turn_id, item.tool.name)
            note = same_failure_message(state.last_result[1])
            run.results.append(fmt.result_message(call_id, item.tool.name, note))
            order.add(item.tool.name, item.tool.risk, ok=False)
            state.note_outcome(key, "failed")
            return
        # A small model asked "Which function reverses a string?" may edit the file, told
        # to run the tests it may write one: the user asked for no change, so the write is
        # shown denied, never asked.
        withheld = state.writes_refused if item.tool.risk == "write" else None
        workspace = self.executor.settings.workspace
        if (
            withheld is None
            and item.tool.risk != "read"
            and state.kept_script
            and state.changes_check(
                item.tool.named_writes(item.args, ToolContext(workspace=workspace))
            )
        ):
            # A shell command too: `sed -i` on the check does what a refused edit would.
            defined = await asyncio.to_thread(state.failing_definitions, workspace)
            withheld = check_kept_message(state.kept_script, defined), "check"
        waits = None if withheld else order.waits(item.tool.name, item.tool.risk)
        deferred = waits is not None
        if waits:
            # Several calls in one reply: a change written before an earlier call's result
            # was seen is a guess at it (call_order). Shown, not run; the model sees first.
            withheld = (waits, "order check")
        if withheld is None and item.tool.name == "edit_file":
            withheld = await self._off_target(state, key, item)
        guessed = self._guessed(item, said, start) if start else []
        if guessed:
            # Made to call with no tool that fits, a small model calls the nearest one with
            # numbers and names of its own. Nothing the user gave goes in: not run, and the
            # model answers without it (or asks for the values).
            withheld = (guessed_values_message(item.tool.name, guessed), "value check")
            state.answer_now, deferred = True, False
        elif start and await self._unfit(item, state.request, start):
            # Or with the values the user did give: a lawyer search for a security
            # guard. Not run either.
            withheld = (unfit_call_message(item.tool.name), "fit check")
            state.answer_now, deferred = True, False
        kept = (state.kept_script,) if state.kept_script else ()
        outcome = await self.executor.run(turn_id, call_id, item, withheld, kept)
        order.add(item.tool.name, item.tool.risk, outcome.ok)
        if deferred:
            run.put_off.add(number)  # not a step: the model does not see it
            return
        observation = outcome.observation
        state.last_success = key if outcome.ok else None
        if item.tool.risk == "read":
            if outcome.ok:
                state.reads_done.add(key)
        elif not _changed_nothing(item, outcome):
            state.reads_done.clear()
        state.last_result = (item.tool.name, observation)
        state.steps.append(
            Step(
                item.tool.name,
                item.arguments,
                item.tool.risk,
                outcome.status,
                observation,
                changed_nothing=bool(outcome.unchanged),
            )
        )
        shown = observation_message(item.tool.name, observation, self.provider.special_tokens)
        run.results.append(fmt.result_message(call_id, item.tool.name, shown))
        state.note_outcome(key, outcome.status)


def _changed_nothing(item: PreparedCall, outcome: CallOutcome) -> bool:
    """Whether a call that could change files is known to have changed none: it was not
    run, or failed whole. What was read before it is still so: after each failed edit the
    1.5B model read the same file again, and made the same edit again, three times."""
    return outcome.status == "denied" or (outcome.status == "failed" and item.tool.fails_whole)
