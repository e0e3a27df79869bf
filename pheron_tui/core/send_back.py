"""Replies that do not end a task, and the note each is sent back to the model with.

A planning reply that is no tool call is an answer or a question for the user, unless one of
these rules finds it moves nothing: then the reply is kept, answered with the rule's note, and
the task goes on. Each rule fires a bounded number of times (``TaskState`` remembers which),
so a model that insists is heard.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pheron_tui.core.intent import named_entries
from pheron_tui.core.parsing import ParsedReply
from pheron_tui.core.removal_order import ordered_removed
from pheron_tui.core.setting_answer import Contradiction, contradicted
from pheron_tui.core.task_notes import (
    CONTRADICTED_SETTING_MESSAGE,
    ECHO_MESSAGE,
    EMPTY_MESSAGE,
    FAILED_CHANGE_MESSAGE,
    IGNORED_RESULT_MESSAGE,
    PARROT_MESSAGE,
    PASSED_OVER_FAILURE_MESSAGE,
    RETRY_MESSAGE,
    UNSUPPORTED_NUMBER_MESSAGE,
    failed_check_message,
    undeleted_message,
    unread_file_message,
)
from pheron_tui.core.task_state import MALFORMED, TaskState, parrots, words
from pheron_tui.core.tools import LIKELY_MEANT


@dataclass(frozen=True)
class SendBack:
    """A reply sent back: ``note`` answers it; the next step must call a tool if ``call``."""

    note: str
    said: str | None = None
    """What is kept of the reply (None: the reply as it came)."""
    call: bool = True


async def before_question(
    state: TaskState, parsed: ParsedReply, workspace: Path
) -> SendBack | None:
    """Rules for any reply, asked before a question goes to the user or calls run."""
    if parsed.kind == "clarify" and parrots(parsed.text, state.request):
        # Small models "ask" the user's own request back. That is no question: tell the model
        # to look, and go on.
        return SendBack(PARROT_MESSAGE)
    # The check the request names failed: that is the work, not news for the user.
    if parsed.kind != "tool_calls" and state.only_reports_check():
        # Sent to "read the code it points to", the 1.5B model read the check itself: where the
        # functions its output calls are defined is said.
        defined = await asyncio.to_thread(state.failing_definitions, workspace)
        state.tell_to_fix()
        return SendBack(failed_check_message(state.check, defined))
    # Small models give up after a failed call and "ask" the user, even when the result names
    # the fix ("did you mean config.py?"): they are told to correct the call instead. A real
    # question, once per task; a CLARIFY that only says what failed, once for each different
    # failure (a fix that uncovers the next failing test).
    failure = _last_failure(state)
    retry = failure and ("a question" if parsed.text.rstrip().endswith("?") else failure)
    if parsed.kind == "clarify" and retry and retry not in state.retried_after:
        state.retried_after.add(retry)
        return SendBack(RETRY_MESSAGE)
    asks = parsed.text.rstrip().endswith("?")
    undeleted = (
        await asyncio.to_thread(undeleted_now, state, workspace)
        if parsed.kind == "clarify" and not asks
        else []
    )
    if parsed.kind == "clarify" and not asks and (sent := _work_left(state, undeleted)):
        # A CLARIFY that asks nothing hands the work back: "Please check the implementation
        # of km_to_miles", from the 1.5B model told to fix it and shown the faulty line;
        # "Please run the check again to verify", after its change.
        return sent
    if parsed.kind == "clarify" and not asks and not state.told_to_read:
        # A CLARIFY that asks nothing, on a request naming a file never read: "The search
        # found the definition of average, but it does not provide any information about the
        # bug", from the 1.5B model shown three lines of calc.py by a search.
        unread = await asyncio.to_thread(_named_unread, state, workspace)
        if unread:
            state.told_to_read = True
            return SendBack(unread_file_message(unread))
    echoed = state.echoed_note(parsed.text) if parsed.kind != "tool_calls" else None
    if echoed:
        # The note is ours, addressed to the model; handed to the user as an answer or a
        # question, it says nothing they did not just do themselves.
        state.refusal_echoed = True
        return SendBack(echoed, call=False)
    return None


def undeleted_now(state: TaskState, workspace: Path) -> list[str]:
    """What the request orders deleted that still exists, once per task (blocking: a few
    file checks)."""
    if state.undeleted_told or not state.orders_change:
        return []
    return ordered_removed(state.request, workspace)


def before_answer(
    state: TaskState, text: str, answer_now: bool, undeleted: Sequence[str] = ()
) -> SendBack | None:
    """Rules for a reply that would be the task's final answer (``text``); when the answer is
    due (``answer_now``) it is not sent back for what is left undone. ``undeleted``:
    ``undeleted_now``."""
    if not text:
        return SendBack(EMPTY_MESSAGE, said="")
    if number := state.unsupported_number(text):
        # Before the echo rule: "The value of TIMEOUT_S is 60" repeats the request's words, but
        # what is wrong with it is the 60. Once: a number the model worked out may stand when
        # it says it again.
        state.numbers_checked = True
        return SendBack(UNSUPPORTED_NUMBER_MESSAGE.format(number=number))
    if printed := state.ignored_result(text):
        # Once: the model may say why what it ran is not the answer.
        state.result_checked = True
        return SendBack(IGNORED_RESULT_MESSAGE.format(printed=printed), call=False)
    if (command := state.passed_over_failure(text)) and state.right_question:
        # Once: the check may be what is wrong, and the model may say so.
        state.fault_checked = True
        note = PASSED_OVER_FAILURE_MESSAGE.format(command=command, name=state.right_question.name)
        return SendBack(note, call=False)
    if not state.setting_checked and (found := contradicted_setting(state, text)):
        # "Yes, debug is turned on", from the 1.5B model shown `"debug": false`. Once: the
        # model may read the setting otherwise and say why.
        state.setting_checked = True
        message = CONTRADICTED_SETTING_MESSAGE.format(said=found.said, setting=found.setting)
        return SendBack(message, call=False)
    if not answer_now:
        if len(words(text)) >= 4 and not state.echoed and state.echoes_request(text):
            # Small models sometimes "answer" with the request itself. That is no answer: say
            # so once, and ask for the work.
            state.echoed = True
            return SendBack(ECHO_MESSAGE)
        if sent := _work_left(state, undeleted):
            return sent
    failure = _last_failure(state)
    if failure and LIKELY_MEANT in failure and failure not in state.retried_after:
        # The failed call's result names what was likely meant ("tests does not exist; did
        # you mean test_units.py?"): the 1.5B model answered "test_units.py is the correct
        # file to test" instead of reading it. Once per failure.
        state.retried_after.add(failure)
        return SendBack(RETRY_MESSAGE)
    if failure and failure not in state.retried_after and state.change_failed():
        # Once per failure, as for a question above: the answer may only report it.
        state.retried_after.add(failure)
        return SendBack(FAILED_CHANGE_MESSAGE)
    return None


def contradicted_setting(state: TaskState, answer: str) -> Contradiction | None:
    """The setting a result of this task shows against the answer's Yes or No."""
    outputs = [step.output for step in state.steps if step.status == "ok"]
    return contradicted(state.request, answer, outputs)


def _work_left(state: TaskState, undeleted: Sequence[str] = ()) -> SendBack | None:
    """The order not yet tried, an entry it orders deleted still there, or a change not yet
    checked by the command the request names: what the next step is told to do instead of
    answering."""
    if undone := state.undone_order():
        state.tell_to_act(undone)
        return SendBack(undone)
    if undeleted and not state.undeleted_told:
        # "Remove the build folder": the 1.5B model deleted one of its two files and said
        # "The build folder now contains no files". Once: a refusal may be the answer.
        state.undeleted_told = True
        return SendBack(undeleted_message(undeleted))
    if unchecked := state.unchecked_change():
        state.check_told, state.act_with = True, ("execute",)
        return SendBack(unchecked)
    return None


def _named_unread(state: TaskState, workspace: Path) -> str | None:
    """The first file the request names that no read_file of this task has read."""
    for path in named_entries(state.request, workspace):
        if (workspace / path).is_file() and not state.has_read(path):
            return path
    return None


def _last_failure(state: TaskState) -> str | None:
    """What the last call's failure said: its result, or why it could not be run at all (a
    call cut off in its JSON has no result, and a CLARIFY after it went to the user: "The
    JSON file is not properly formatted", from the 1.5B model whose write_file was cut)."""
    if not state.last_failed:
        return None
    if state.last_failure and state.last_failure[0] == MALFORMED:
        return state.last_failure[1]
    return state.last_result[1]
