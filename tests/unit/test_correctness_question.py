"""A question whether a function is right is answered by running the checks that call it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pheron_tui.core.correctness_question import admits_a_fault, asks_if_right, checks_calling
from pheron_tui.core.critic import Step
from pheron_tui.core.task_start import TaskStart, start_task

CALC = "def average(numbers):\n    return sum(numbers) / (len(numbers) - 1)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "test_calc.py").write_text(
        "from calc import average\n\nassert average([2, 4, 6]) == 4\nprint('ok')\n"
    )
    (tmp_path / "report.py").write_text("from calc import average\nprint(average([1, 2]))\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "more.py").write_text(
        "import calc\n\ndef test_one():\n    calc.average([1])\n"
    )
    (tmp_path / "test_other.py").write_text("from calc import median\nassert median([1]) == 1\n")
    return tmp_path


@pytest.mark.parametrize(
    "text",
    [
        "Is there a bug in the average function in calc.py? Explain.",
        "Explain what km_to_miles in units.py does and whether it is correct.",
        "Look at oldest() in catalog.py. Does it do what its docstring says?",
        "Is total in inventory.py right?",
        "Find the bug in total.",
    ],
)
def test_questions_whether_code_is_right(text: str) -> None:
    assert asks_if_right(text)


@pytest.mark.parametrize(
    "text", ["What does average in calc.py do?", "How does average work?", "Write a test."]
)
def test_other_questions_about_code(text: str) -> None:
    assert not asks_if_right(text)


def test_the_checks_that_call_a_function_are_found(project: Path) -> None:
    # Not the file defining it, not a script that only uses it, not a check of another.
    assert checks_calling(project, "average", "calc.py") == ["test_calc.py", "tests/more.py"]
    assert checks_calling(project, "median", "calc.py") == ["test_other.py"]
    assert checks_calling(project, "mode", "calc.py") == []


def test_what_cannot_be_read_safely_is_passed_over(project: Path) -> None:
    os.mkfifo(project / "test_pipe.py")  # read, it would wait forever
    (project / "test_link.py").symlink_to(project / "test_calc.py")
    (project / "test_huge.py").write_text("average(1)\n" + "#" * 300_000)
    assert checks_calling(project, "average", "calc.py") == ["test_calc.py", "tests/more.py"]


def _start(text: str, workspace: Path, can_run: bool = True) -> TaskStart:
    def can(*risks: str) -> bool:
        return can_run or "execute" not in risks

    return asyncio.run(
        start_task(text, workspace, about_workspace=True, can=can, special_tokens=())
    )


def test_a_question_whether_it_is_right_is_told_to_run_its_check(project: Path) -> None:
    start = _start("Is there a bug in the average function in calc.py?", project)
    assert start.state.orders_run
    assert "run `python3 test_calc.py`" in start.state.run_hint
    assert "python3 -m pytest -q tests/more.py" in start.state.run_hint
    assert start.state.run_hint in start.notes[-1]


def test_no_run_is_asked_for_where_none_can_tell_or_run(project: Path) -> None:
    for text in ("What does the function average in calc.py do?", "Is the mode function right?"):
        assert _start(text, project).state.run_hint == ""
    assert (
        _start("Is there a bug in the average function?", project, can_run=False).state.run_hint
        == ""
    )
    # A fix is ordered: the work is the change, and its check is run as the check.
    fix = _start("Fix the bug in the average function in calc.py.", project)
    assert "test_calc.py calls average" not in fix.state.run_hint


@pytest.mark.parametrize(
    ("answer", "admits"),
    [
        ("It divides by len(numbers) - 1, which is wrong.", True),
        ("The check fails: average returns 6 for [2, 4, 6].", True),
        ("Yes, there is a bug: it uses max instead of min.", True),
        ("It is not correct: it multiplies by the constant.", True),
        ("There is no bug in average.", False),
        ("It does not have any bugs; the function is correct.", False),
        ("average is correct. The issue might be in test_calc.py.", False),
    ],
)
def test_an_answer_that_says_something_is_wrong(answer: str, admits: bool) -> None:
    assert admits_a_fault(answer) is admits


def _ran(command: str, status: str, output: str) -> Step:
    return Step("shell_exec", {"command": command}, "execute", status, output)  # type: ignore[arg-type]


def test_an_answer_that_passes_over_the_checks_failure_is_sent_back_once(project: Path) -> None:
    state = _start("Is there a bug in the average function in calc.py?", project).state
    fine = "average is correct. The issue might be in test_calc.py."
    assert state.passed_over_failure(fine) is None  # nothing run yet
    state.steps.append(_ran("python3 test_calc.py", "failed", "exit code 1\nAssertionError"))
    assert state.passed_over_failure(fine) == "python3 test_calc.py"
    assert state.passed_over_failure("It divides by len - 1, which is wrong.") is None
    state.fault_checked = True
    assert state.passed_over_failure(fine) is None
    # A check that passed, or a run that never started, tells nothing against the answer.
    passing = _start("Is there a bug in the average function in calc.py?", project).state
    passing.steps.append(_ran("python3 test_calc.py", "ok", "exit code 0\nok"))
    assert passing.passed_over_failure(fine) is None
    refused = _start("Is there a bug in the average function in calc.py?", project).state
    refused.steps.append(_ran("python3 test_calc.py", "denied", "denied by the user"))
    assert refused.passed_over_failure(fine) is None


async def test_the_agent_sends_back_an_answer_its_failing_check_contradicts(
    make_agent, workspace: Path
) -> None:
    """Run end to end on the scripted model: told to run the check, the model runs it, sees
    it fail and says all is well; it is sent back once with what failed, and its second
    answer stands."""
    (workspace / "calc.py").write_text(CALC)
    (workspace / "test_calc.py").write_text(
        "from calc import average\n\nassert average([2, 4, 6]) == 4\n"
    )
    run = '<tool_call>{"name": "shell_exec", "arguments": {"command": "python3 test_calc.py"}}</tool_call>'
    fine = "average is correct; the issue might be in test_calc.py."
    found = "Yes: it divides by len(numbers) - 1, which is wrong."
    agent = make_agent(classify=["task"], plan=[run, fine, found], critic=["PASS: ok"])
    result = await agent.orchestrator.submit("Is there a bug in the average function in calc.py?")
    assert result.answer == found
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("test_calc.py calls average: run `python3 test_calc.py`" in m for m in told)
    assert any("`python3 test_calc.py` failed" in m for m in told)
