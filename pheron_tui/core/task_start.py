"""What a task starts from: the request read for what it orders and asks (``TaskState``), and
the notes put before its first step (how to run the check it names, the run that answers a
question about data, where the code it names is). Small models do better told these than
left to find them: each note says which failure it answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core.correctness_question import right_question
from pheron_tui.core.data_question import data_question_hint
from pheron_tui.core.intent import (
    asks_only_to_know,
    code_like_words,
    code_places,
    orders_a_change,
    orders_a_run,
    orders_only_a_run,
    python_use_hint,
)
from pheron_tui.core.prompts import (
    check_run_note,
    code_places_note,
    defuse,
    word_entries_note,
)
from pheron_tui.core.request_check import (
    PYTEST_RUN,
    checked_script,
    named_check,
    names_apart_from_check,
)
from pheron_tui.core.result_question import result_run_hint
from pheron_tui.core.task_state import TaskState
from pheron_tui.core.word_entries import entries_named_by_words

CODE_PLACES_SHOWN = 6
"""Lines of the code a request names shown before the first step, at most."""
WORD_ENTRIES_SHOWN = 6
"""Files and folders a request names by plain words shown before the first step, at most."""


@dataclass
class TaskStart:
    state: TaskState
    notes: list[str] = field(default_factory=list)
    """Said to the model, in this order, as the user's, before its first step."""


async def start_task(
    text: str,
    workspace: Path,
    *,
    about_workspace: bool,
    can: Callable[..., bool],
    special_tokens: Sequence[str],
) -> TaskStart:
    """The task ``text`` asks for. ``can(*risks)``: whether a tool of one of these risks is
    offered. Reads the workspace off the event loop."""
    can_run = can("execute")
    run_hint = await asyncio.to_thread(python_use_hint, text, workspace) if can_run else ""
    state = TaskState(
        request=text,
        about_workspace=about_workspace,
        only_to_know=asks_only_to_know(text),
        orders_change=orders_a_change(text) and can("write", "execute"),
        orders_run=orders_a_run(text) and can_run,
        only_to_run=orders_only_a_run(text) and can_run,
        run_hint=run_hint,
    )
    start = TaskStart(state)
    check = await asyncio.to_thread(named_check, text, workspace) if can_run else None
    if check:
        # "Fix calc.py so that `python3 test_calc.py` passes": what fails is where the fix
        # starts. Told to fix first, the 1.5B model edited the function the check does not
        # fail on, again and again. The model runs it: run by the agent before the first
        # step, the check's failure was answered by an edit of the check's assertion, four
        # runs of four.
        state.check, state.must_call, state.act_with = check, True, ("execute",)
        script = checked_script(text, check)
        if script and not names_apart_from_check(text, script):
            state.kept_script = script
        if check.startswith(PYTEST_RUN):
            start.notes.append(check_run_note(check))
    elif run_hint == "" and can_run and state.only_to_know:
        # "How many books in books.json came out before 1950?": counted by Python, not by a
        # small model reading the file. Only a question: "remove the oldest book from
        # books.json" is done by an edit, and needs no run.
        run_hint = await asyncio.to_thread(data_question_hint, text, workspace)
        if run_hint:
            state.run_hint, state.orders_run = run_hint, True
            start.notes.append(defuse(run_hint, special_tokens))
    by_words = await asyncio.to_thread(_entries_named_only_by_words, text, workspace)
    if by_words:
        start.notes.append(word_entries_note(by_words[:WORD_ENTRIES_SHOWN], special_tokens))
    named = any(code_like_words(text))  # most requests name none: no walk, no thread
    places = (
        await asyncio.to_thread(code_places, text, workspace, most=CODE_PLACES_SHOWN + 1)
        if named
        else []
    )
    if places:
        found = [(p.path, p.line, p.text) for p in places[:CODE_PLACES_SHOWN]]
        more = len(places) > CODE_PLACES_SHOWN
        note = code_places_note(found, special_tokens, more=more)
        run = result_run_hint(text, places) if can_run else ""
        if can_run and not (run or state.run_hint or state.orders_change or state.check):
            # "Is there a bug in average?": the checks that call it tell, where a small
            # model's reading of the code did not.
            question = await asyncio.to_thread(right_question, text, places, workspace)
            state.right_question = question
            run = question.hint if question else ""
        if run and not state.run_hint:
            # "What does shout return for 'hi'?": run, not worked out by a small model.
            # Answered without running, the reply is sent back once with the same hint.
            state.run_hint, state.orders_run = run, True
            note = f"{note}\n\n{defuse(run, special_tokens)}"
        start.notes.append(note)
    return start


def _entries_named_only_by_words(text: str, workspace: Path) -> list[str]:
    """The entries the request names by a plain word: folders (with a slash after them, so
    "recipes" reads as the folder it is), and files it does not name by their file name too."""
    lowered = text.lower()
    shown = []
    for path in entries_named_by_words(text, workspace):
        if (workspace / path).is_dir():
            shown.append(path + "/")
        elif path.rsplit("/", 1)[-1].lower() not in lowered:
            shown.append(path)
    return shown
