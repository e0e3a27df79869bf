"""A question whether a named function is right gets a note on how to judge it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pheron_tui.core.correctness_question import correctness_note, judged_function


@pytest.fixture
def code(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(
        'def average(numbers):\n    """The mean."""\n    return sum(numbers) / (len(numbers) - 1)\n'
    )
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "catalog.py").write_text("def oldest(books):\n    return max(books)\n")
    (tmp_path / "README.md").write_text("`average` is documented here.\n")
    return tmp_path


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Is there a bug in the average function in calc.py? Explain.", "average"),
        ("Look at oldest() in library/catalog.py. Does it do what its docstring says?", "oldest"),
        ("Explain what km_to_miles in units.py does and whether it is correct.", "km_to_miles"),
        ("Does `total` work correctly?", "total"),
        ("What does the function average in calc.py do?", None),  # no question of right
        ("Is it right that add works?", None),  # no function named
    ],
)
def test_the_function_a_question_asks_to_judge(text: str, name: str | None) -> None:
    assert judged_function(text) == name


def test_the_note_says_how_to_judge_and_how_to_run_it_from_its_folder(code: Path) -> None:
    note = correctness_note("Is there a bug in the average function?", code, can_run=True)
    assert "first say what it should return for one simple input" in note
    assert 'python3 -c "from calc import average; print(repr(average(...)))"' in note
    nested = correctness_note("Does oldest() do what it says?", code, can_run=True)
    assert "cd library && python3 -c" in nested
    assert "shell_exec" not in correctness_note("Is average correct?", code, can_run=False)


def test_no_note_for_a_name_no_python_file_defines(code: Path) -> None:
    assert correctness_note("Is there a bug in the median function?", code, True) == ""
    assert correctness_note("Is the function in calc.py correct?", code, True) == ""
