"""Intent: what the classifier reads of a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from pheron_tui.core.intent import (
    asks_only_to_know,
    classify_request,
    orders_a_change,
    orders_a_run,
    orders_only_a_run,
    python_use_hint,
    speaks_of_the_workspace,
)


def test_a_long_message_is_classified_from_its_start_and_end() -> None:
    pasted = "x " * 20_000
    text = "Please fix the failing test in calc.py.\n" + pasted + "\nThanks, run pytest after."
    shown = classify_request(text).messages[-1].content
    assert len(shown) < 2_100 and shown.startswith("Please fix") and shown.endswith("pytest after.")
    assert classify_request("short one").messages[-1].content == "short one"


@pytest.mark.parametrize(
    "text",
    [
        "Which function in utils.py reverses a string?",
        "How many TODO items are in notes.md?",
        "Is there a bug in the average function in calc.py? Explain.",
        "what does notes.md say",
        "Where is MAX_ITEMS defined",
        "Does the address field get validated?",  # "address" is not "add"
    ],
)
def test_questions_that_ask_for_no_change(text: str) -> None:
    assert asks_only_to_know(text)


@pytest.mark.parametrize(
    "text",
    [
        "Can you fix the bug in calc.py?",
        "Why did the tests fail? Run them.",
        "Rename data.csv to records.csv.",
        "Create docs/index.md with the single line: Welcome",
        "Is it possible to add a multiply function to utils.py?",
        "What if you removed the print in main.py?",
        "list the files here",
        "do it",  # an order, though "do" can open a question
        "Have a go at the failing test",
    ],
)
def test_requests_that_may_change_things(text: str) -> None:
    assert not asks_only_to_know(text)


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("Fix the bug in calc.py so that `python3 test_calc.py` passes.", True),
        ("In notes.md, replace the word colour with color.", True),
        ("Write square.py, then run it and tell me the output.", True),
        ("Can you rename data.csv to records.csv?", True),
        ("Which Python version is installed here? Run a command to find out.", True),
        ("Explain what `make build` does", False),  # a verb mentioned, not ordered
        ("How do I run the tests?", False),
        ("Is it possible to add a multiply function?", False),
        ("Is there a bug in calc.py? Explain.", False),
        ("List the Python files in this folder.", False),
    ],
)
def test_orders_to_change_something(text: str, order: bool) -> None:
    assert orders_a_change(text) is order


def test_orders_to_run_something() -> None:
    assert orders_a_run("Write square.py that prints 144, run it and tell me the output.")
    assert orders_a_run("Please execute the tests")
    assert not orders_a_run("Fix the bug in calc.py so that `python3 test_calc.py` runs.")
    assert not orders_a_run("How do I run the tests?")


@pytest.mark.parametrize(
    ("text", "only"),
    [
        ("Run python3 test_calc.py and tell me which test fails.", True),
        ("Please execute the tests", True),
        ("Run the tests, then fix what fails.", False),
        ("Write square.py that prints 144, run it and tell me the output.", False),
        ("Run the script and save its output to out.txt.", False),
        ("How do I run the tests?", False),  # no order at all
        ("Use units.py to convert 10 miles to kilometres.", True),  # the script is run
        ("Use `tools/conv.sh` to convert it", True),
        ("Use a list comprehension in utils.py", False),  # not the file used, a change
        ("How do I use units.py?", False),
    ],
)
def test_orders_only_a_run(text: str, only: bool) -> None:
    assert orders_only_a_run(text) is only


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("list the files here", True),
        ("is docker running, please use docker ps to find out", True),
        ("check whether git is installed using git --version", True),
        ('remove the shortcut, using the instruction del "%userprofile%\\Desktop\\a.lnk"', True),
        ("what does `df -h` say about free space?", True),
        # Everyday words and languages are not programs named to run.
        ("How can I make this sentence past tense using Python?", False),
        ("Add a server, using the hostname http://plga.ca", False),
        ("Find me restaurants in London", False),
        ("What is the best way to sort a deck of cards?", False),
    ],
)
def test_a_request_that_names_a_command_to_use_speaks_of_the_workspace(
    text: str, about: bool
) -> None:
    # Such a first step is made to call (BFCL live_simple: "use docker ps" was answered
    # from the model's head with the first step left free).
    assert speaks_of_the_workspace(text) is about


@pytest.mark.parametrize(
    ("message", "command"),
    [
        ("Use units.py to convert 10 miles.", 'python3 -c "from units import to_km, to_miles;'),
        ("use ./tools/conv.py on 3", 'python3 -c "from tools.conv import twice;'),
        ("Use the helper in units.py", None),  # no order to use the file
        ("use my-units.py to convert", None),  # no module name: nothing to import
        ("use empty.py to convert", None),  # no function to call
        ("use missing.py to convert", None),
        ("use outside.py to convert", None),  # a link out of the workspace is not read
    ],
)
def test_how_a_python_file_to_use_is_run(tmp_path: Path, message: str, command: str | None) -> None:
    """Shown ``from catalog import NAME; print(NAME(VALUES))``, the 1.5B model ran it as
    written: the hint names the file's own functions and how each is called."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / "units.py").write_text(
        "def to_km(miles, factor=1.609344):\n    return miles * factor\n\n\n"
        "def _helper():\n    pass\n\n\ndef to_miles(km):\n    return km / 1.609344\n"
    )
    (ws / "tools" / "conv.py").write_text("def twice(x):\n    return 2 * x\n")
    (ws / "empty.py").write_text("X = 1\n")
    (tmp_path / "secret.py").write_text("def leaked():\n    pass\n")
    (ws / "outside.py").symlink_to(tmp_path / "secret.py")
    hint = python_use_hint(message, ws)
    assert (command in hint) if command else hint == ""
    if message.startswith("Use units.py"):
        assert "units.py defines to_km(miles, factor=1.609344), to_miles(km)." in hint
        assert "NAME" not in hint and "_helper" not in hint
