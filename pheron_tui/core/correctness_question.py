"""A question whether a workspace function is right, and the check script that can tell.

Asked "Is there a bug in the average function?" or "does oldest() do what its docstring
says?", the 1.5B model read the function and answered from its reading: "it is correct", or a
bug it does not have (an empty list, where the list is never empty), on every task set. Told
how to reason about it ("say what it should return for one input"), it did worse. A check
script of the workspace that calls the function answers the question with evidence: where
one exists, the agent says to run it before answering.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pheron_tui.core.intent import CodePlace, defines
from pheron_tui.core.request_check import script_command
from pheron_tui.core.workspace_text import workspace_files

_CORRECTNESS = re.compile(
    r"\b(?:bugs?|buggy|correct(?:ly)?|incorrect|wrong|broken|is\b[^?!\n]{0,60}\bright"
    r"|do(?:es)?\s+what\s+(?:it|its|the)\b[\w\s]{0,20}\bsays?)\b",
    re.IGNORECASE,
)
"""Bare "work" is left out: "how does total work?" asks what it does."""
_CHECK_NAME = re.compile(r"^(?:test_\w+|check_\w+|\w+_test|tests?)\.py$")
SCRIPTS_SHOWN = 2


def asks_if_right(text: str) -> bool:
    """Whether ``text`` asks whether code is right: a bug in it, whether it is correct or
    works, whether it does what its docstring says."""
    return len(text) <= 1000 and _CORRECTNESS.search(text) is not None


def checks_calling(workspace: Path, name: str, defined_in: str) -> list[str]:
    """The workspace's check scripts (``test_*.py``, ``check_*.py``, ``*_test.py``, any
    ``.py`` under a ``tests`` folder) that call ``name``, apart from the file defining it;
    walk order, at most ``SCRIPTS_SHOWN``."""
    call = re.compile(rb"(?<!\w)%s\s*\(" % re.escape(name.encode()))  # calc.average( too

    def is_check(relative: str) -> bool:
        folder, _, file = relative.rpartition("/")
        in_tests = bool({"test", "tests"} & set(folder.split("/")))
        return (
            relative != defined_in
            and file.endswith(".py")
            and bool(in_tests or _CHECK_NAME.match(file))
        )

    found: list[str] = []
    for relative, data in workspace_files(workspace, is_check):
        if call.search(data):
            found.append(relative)
            if len(found) >= SCRIPTS_SHOWN:
                break
    return found


@dataclass(frozen=True)
class RightQuestion:
    """A question whether ``name`` is right, and the checks that can tell."""

    name: str
    scripts: tuple[str, ...]
    commands: tuple[str, ...]

    @property
    def hint(self) -> str:
        runs = " and ".join(f"`{c}`" for c in self.commands)
        return (
            f"{' and '.join(self.scripts)} {'call' if len(self.scripts) > 1 else 'calls'} "
            f"{self.name}: run {runs} with shell_exec to see "
            f"whether {self.name} does what it should. If it fails, its output shows what "
            f"{self.name} gets wrong: say that, and which line of {self.name} causes it."
        )


def right_question(text: str, places: Sequence[CodePlace], workspace: Path) -> RightQuestion | None:
    """A question whether a function is right (``asks_if_right``) about a function defined in
    a Python file (``places``: where the request's names are), with the check scripts that
    call it; None when the question is of another kind or no check calls it."""
    if not asks_if_right(text):
        return None
    place = next((p for p in places if p.path.endswith(".py") and defines(p)), None)
    if place is None:
        return None
    scripts = checks_calling(workspace, place.name, place.path)
    runnable = [(s, c) for s, c in ((s, script_command(s, workspace)) for s in scripts) if c]
    if not runnable:
        return None
    return RightQuestion(place.name, tuple(s for s, _ in runnable), tuple(c for _, c in runnable))


_ADMITS = re.compile(
    r"(?<!\bno\s)(?<!\bnot\s)(?<!\bnot\sa\s)(?<!\bany\s)"
    r"\b(?:bugs?|buggy|wrong|incorrect(?:ly)?|mistakes?|fail\w*|errors?)\b"
    r"|\bn(?:o|')t\s+(?:correct|right)\b",
    re.IGNORECASE,
)


def admits_a_fault(answer: str) -> bool:
    """Whether ``answer`` says something is wrong or failed ("it divides by len - 1, which
    is wrong", "the check fails"), not only that nothing is ("there is no bug")."""
    return _ADMITS.search(answer) is not None
