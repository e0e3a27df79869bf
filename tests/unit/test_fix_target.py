"""Which function an edit made to pass a failing check changes (``core.fix_target``)."""

from __future__ import annotations

from pathlib import Path

from pheron_tui.core.fix_target import off_target

CALC = (
    "TOTAL = 0\n\n\ndef add(a, b):\n    return a + b\n\n\n"
    "def average(numbers):\n    return sum(numbers) / (len(numbers) - 1)\n"
)
FAILED = (
    "exit code 1\nTraceback (most recent call last):\n"
    '  File "/tmp/x/test_calc.py", line 9, in test_average\n'
    "    assert average([2, 4, 6]) == 4\nAssertionError"
)


def _edit(old: str, path: str = "calc.py") -> dict[str, str]:
    return {"path": path, "old": old, "new": "x"}


def test_an_edit_beside_the_failing_function_is_off_target(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "test_calc.py").write_text("def test_average():\n    assert average([2]) == 2\n")
    found = off_target(_edit("return a + b"), FAILED, tmp_path)
    assert found is not None and (found.edited, found.failing, found.line) == ("add", "average", 8)
    assert off_target(_edit("(len(numbers) - 1)"), FAILED, tmp_path) is None  # the right one
    assert off_target(_edit("TOTAL = 0"), FAILED, tmp_path) is None  # no function
    assert off_target(_edit("return a + b"), "exit code 1\nboom", tmp_path) is None  # names none
    assert off_target(_edit("nowhere"), FAILED, tmp_path) is None  # the tool says why
    assert off_target(_edit("return a + b", "../calc.py"), FAILED, tmp_path) is None


def test_a_file_that_does_not_define_the_failing_function_is_not_judged(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC.replace("average", "mean"))
    (tmp_path / "helpers.py").write_text("def average(xs):\n    return 0\n")
    assert off_target(_edit("return a + b"), FAILED, tmp_path) is None
