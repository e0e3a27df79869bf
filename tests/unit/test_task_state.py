"""What TaskState makes of an answer before it ends the task."""

from __future__ import annotations

import pytest

from pheron_tui.core.critic import Step
from pheron_tui.core.task_state import TaskState


def _asked(request: str, printed: str) -> TaskState:
    run = Step(
        "shell_exec", {"command": "python3 -c ..."}, "execute", "ok", f"exit code 0\n{printed}"
    )
    return TaskState(request=request, only_to_know=True, run_hint="run it", steps=[run])


@pytest.mark.parametrize(
    ("request_text", "printed", "answer", "sent_back"),
    [
        ("Which city in stations.csv is the warmest?", "Cairo", "The warmest is Cairo.", False),
        ("Which city in stations.csv is the warmest?", "Cairo", "No temperatures here.", True),
        # Every word printed is the request's: the line itself must be said.
        (
            "What does slugify return for 'Big Red Apple'?",
            "'big-red-apple'",
            "slugify returns '-'.join(title.lower().split()) for 'Big Red Apple'",
            True,
        ),
        (
            "What does slugify return for 'Big Red Apple'?",
            "'big-red-apple'",
            "big-red-apple",
            False,
        ),
        ("Which books are by Le Guin?", "['Earthsea', 'Lathe']", "Earthsea and Lathe.", False),
        ("How many rows?", "4", "There are 4 rows.", False),
        ("How many rows?", "4", "There are 3 rows.", True),
    ],
)
def test_an_answer_must_say_what_the_questions_run_printed(
    request_text: str, printed: str, answer: str, sent_back: bool
) -> None:
    state = _asked(request_text, printed)
    assert (state.ignored_result(answer) == printed) == sent_back


def test_only_a_short_line_printed_by_a_run_that_worked_is_held_to() -> None:
    listing = _asked("Which files are big?", "a.txt\nb.txt")
    assert listing.ignored_result("None.") is None
    failed = _asked("What is x?", "1")
    failed.steps[0] = Step("shell_exec", {}, "execute", "failed", "exit code 1\nNameError")
    assert failed.ignored_result("I could not work it out.") is None
    untold = TaskState(request="What is x?", only_to_know=True, steps=_asked("x", "1").steps)
    assert untold.ignored_result("2") is None  # no run was what answers it


def test_an_answer_that_repeats_the_note_on_a_repeated_call_is_an_echo() -> None:
    state = TaskState(request="Sort names.txt")
    echo = (
        "Your last call did not go through. Its result says why; make the call it asks for instead."
    )
    assert state.echoed_note(echo) is not None
    assert state.echoed_note("I sorted names.txt: Alex, Ben, Maya, Omar, Zoe.") is None
