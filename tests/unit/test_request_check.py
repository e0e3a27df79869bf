"""The check a request says must pass: a command it names, or a script it says is failing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pheron_tui.core.critic import Step
from pheron_tui.core.request_check import (
    check_command,
    check_script,
    checked_script,
    named_check,
    names_apart_from_check,
    runs_check,
)
from pheron_tui.core.task_state import TaskState


def test_the_check_a_request_says_must_pass_is_read() -> None:
    assert check_command("Fix calc.py so that `python3 test_calc.py` passes.") == (
        "python3 test_calc.py"
    )
    assert check_command("Fix it so python3 check.py -v works") == "python3 check.py -v"
    assert check_command("Make npm test pass") == "npm test"
    assert check_command("keep going until make lint succeeds") == "make lint"
    assert check_command("make the tests pass") is None  # which command is not said
    assert check_command("Why does pytest pass here?") is None  # a question, not a goal


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    (tmp_path / "check_catalog.py").write_text("from shop import total\nassert total() == 1\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "test_shop.py").write_text(
        '"""Tests."""\nimport shop\n\nWANTED = 1\n\n\ndef test_total():\n    assert shop.total()\n'
    )
    (tmp_path / "test_main.py").write_text(
        "def test_a():\n    assert False\n\n\nif __name__ == '__main__':\n    test_a()\n"
    )
    (tmp_path / "check.sh").write_text("exit 1\n")
    return tmp_path


@pytest.mark.parametrize(
    ("request_text", "check"),
    [
        (
            "check_catalog.py is failing. Please fix the code so it passes.",
            "python3 check_catalog.py",
        ),
        ("`check_catalog.py` fails, can you fix it?", "python3 check_catalog.py"),
        ("./check_catalog.py doesn't pass any more; fix shop.py", "python3 check_catalog.py"),
        ("Fix the bug so that check_catalog.py passes", "python3 check_catalog.py"),
        ("Make `check.sh` pass", "bash check.sh"),
        # Pytest tests only: run as a script the file defines its tests and passes.
        ("lib/test_shop.py is failing. Fix it.", "python3 -m pytest -q lib/test_shop.py"),
        ("test_main.py keeps failing, please repair main.py", "python3 test_main.py"),
        ("`make lint` is failing; please fix the code", "make lint"),
        ("`./check.sh` fails. Fix it.", "bash check.sh"),
        # As written, when the request writes the command out.
        ("Fix it so that `python check_catalog.py` passes", "python check_catalog.py"),
    ],
)
def test_a_script_the_request_says_is_failing_is_the_check(
    scripts: Path, request_text: str, check: str
) -> None:
    assert named_check(request_text, scripts) == check


@pytest.mark.parametrize(
    "request_text",
    [
        "check_catalog.py is failing. Why?",  # a question: nothing to fix, nothing to keep
        "nowhere.py is failing. Please fix the code.",  # no such script to run
        "../check_catalog.py is failing, fix it",  # not in the workspace
        "Summarise what check_catalog.py checks.",
    ],
)
def test_no_check_where_none_is_named_or_runnable(scripts: Path, request_text: str) -> None:
    assert named_check(request_text, scripts) is None


def test_a_linked_script_is_no_check(scripts: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "check.py"
    outside.write_text("assert False\n")
    (scripts / "linked.py").symlink_to(outside)
    assert named_check("linked.py is failing, fix the code", scripts) is None


def _runs(command: str, where: Path) -> int:
    return subprocess.run(command.split(), cwd=where, capture_output=True).returncode


def test_a_check_in_a_folder_importing_the_top_folder_is_run_so_it_finds_it(
    tmp_path: Path,
) -> None:
    """tests/check_shop.py doing `from shop import total`: `python3 tests/check_shop.py`
    fails on the import whatever shop does, and the script is the one file not to edit."""
    (tmp_path / "shop.py").write_text("def total():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    check = tmp_path / "tests" / "check_shop.py"
    check.write_text("from shop import total\n\nassert total() == 1\nprint('ok')\n")
    text = "tests/check_shop.py is failing. Please fix shop.py."
    command = named_check(text, tmp_path)
    assert command == "python3 -m tests.check_shop"
    assert _runs(command, tmp_path) == 0
    assert _runs("python3 tests/check_shop.py", tmp_path) != 0  # why: ModuleNotFoundError
    assert checked_script(text, command) == "tests/check_shop.py"

    # Left as written: one importing its own folder, one setting sys.path itself, a folder
    # no module name can spell.
    (tmp_path / "tests" / "helpers.py").write_text("")
    check.write_text("import helpers\nfrom shop import total\n")
    assert named_check(text, tmp_path) == "python3 tests/check_shop.py"
    check.write_text("import sys\nsys.path.insert(0, '.')\nfrom shop import total\n")
    assert named_check(text, tmp_path) == "python3 tests/check_shop.py"
    (tmp_path / "my-tests").mkdir()
    (tmp_path / "my-tests" / "check.py").write_text("from shop import total\n")
    assert named_check("my-tests/check.py fails; fix shop.py", tmp_path) == (
        "python3 my-tests/check.py"
    )


def test_a_module_the_request_runs_is_no_check_script() -> None:
    """ "Fix it so `python3 -m app.main` works": app/main.py is the program to fix."""
    text = "Fix it so that `python3 -m app.main` works"
    assert checked_script(text, "python3 -m app.main") is None
    assert checked_script(text.replace("-m app.main", "check.py"), "python3 check.py") == (
        "check.py"
    )


def test_the_script_a_check_runs_and_whether_the_request_names_it_as_work() -> None:
    assert check_script("python3 -m pytest -q lib/test_shop.py") == "lib/test_shop.py"
    assert check_script("bash ./check.sh") == "check.sh"
    assert check_script("npm test") is None
    text = "check_catalog.py is failing. Please fix the code so it passes."
    assert not names_apart_from_check(text, "check_catalog.py")
    assert not names_apart_from_check(
        "Fix calc.py so that `python3 test_calc.py` passes.", "test_calc.py"
    )
    assert names_apart_from_check(
        "Fix test_calc.py so that `python3 test_calc.py` passes.", "test_calc.py"
    )
    assert names_apart_from_check(
        "check.py is failing: its expected value in check.py is wrong, fix it", "check.py"
    )


def test_a_run_of_the_check_is_known_by_the_script_it_runs() -> None:
    check = "python3 check_catalog.py"
    assert runs_check("python check_catalog.py", check)
    assert runs_check("cd . && python3 ./check_catalog.py", check)
    assert not runs_check("cat check_catalog.py", check)  # read, not run
    assert not runs_check("python3 other.py", check)
    assert runs_check("pytest -q lib/test_shop.py", "python3 -m pytest -q lib/test_shop.py")
    assert runs_check("npm test -- --watch=false", "npm test")
    assert not runs_check("npm install", "npm test")


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("check.py", True),
        ("./check.py", True),
        ("lib/../check.py", True),
        ("/home/me/project/check.py", True),
        ("lib/check.py", False),  # another file of the same name
        ("check.py.bak", False),
        ("", False),
    ],
)
def test_a_write_to_the_check_script_is_refused_however_its_path_is_written(
    path: str, refused: bool
) -> None:
    state = TaskState(request="check.py is failing, fix the code", kept_script="check.py")
    assert state.changes_check([path]) == refused


def test_where_the_failure_points_leaves_out_the_check_itself(tmp_path: Path) -> None:
    """The traceback names test_average (the check's) and average (the code's): only the
    code is where the fix goes."""
    (tmp_path / "calc.py").write_text("def average(xs):\n    return sum(xs)\n")
    (tmp_path / "test_calc.py").write_text(
        "from calc import average\n\n\ndef test_average():\n    assert average([2, 4, 6]) == 4\n"
    )
    output = (
        'exit code 1\n  File "test_calc.py", line 5, in test_average\n'
        "    assert average([2, 4, 6]) == 4\nAssertionError"
    )
    run = Step("shell_exec", {"command": "python3 test_calc.py"}, "execute", "failed", output)
    state = TaskState(
        request="Fix calc.py so that `python3 test_calc.py` passes",
        check="python3 test_calc.py",
        kept_script="test_calc.py",
        steps=[run],
    )
    assert state.failing_definitions(tmp_path) == ["calc.py:1"]
    state.kept_script = ""  # named as the work: its tests are places too
    assert "test_calc.py:4" in state.failing_definitions(tmp_path)
