"""Whether an edit made to pass a failing check changes the code the check fails on.

Told to make ``python3 test_units.py`` pass, its output naming ``km_to_miles``, the 1.5B
model edited ``miles_to_km``, the function above it; told to fix calc.py with the check
failing in ``average``, it edited ``add``. An edit inside a Python function the failing
output does not name, in a file that defines one it does name, is held back once with the
function to change instead; made again, it goes ahead (a helper may be where the fault is).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pheron_tui.core.intent import code_places, defines
from pheron_tui.core.python_source import parsed

FILE_LIMIT = 256_000
"""Bytes of a Python file parsed, at most, to find the function an edit is in."""


@dataclass(frozen=True)
class OffTarget:
    edited: str
    """The function the edit changes."""
    failing: str
    """A function of the same file that the failing check's output names."""
    line: int

    def note(self, path: str) -> str:
        return (
            f"Not run: the check fails in {self.failing} ({path}:{self.line}), and this edit "
            f"changes {self.edited}, which the check's output does not name. Change "
            f"{self.failing} instead; if {self.edited} really must change, make the same "
            "call again."
        )


def off_target(arguments: dict[str, Any], failing_output: str, workspace: Path) -> OffTarget | None:
    """For an edit_file call (``arguments``): the function it changes and the failing one it
    should change instead, when they differ as the module says; else None."""
    raw, old = arguments.get("path"), arguments.get("old")
    if not isinstance(raw, str) or not isinstance(old, str) or not raw.endswith(".py"):
        return None
    try:
        # Only looked at, never written: the edit itself goes through the tool's own checks.
        path = (workspace / raw.removeprefix("./")).resolve()
        if not path.is_relative_to(workspace.resolve()) or not path.is_file():
            return None
        if path.stat().st_size > FILE_LIMIT:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    start = text.find(old)
    if start == -1 or text.find(old, start + 1) != -1:
        return None  # edit_file refuses it anyway, and says why
    functions = _functions(text)
    if functions is None:
        return None
    first = text.count("\n", 0, start) + 1
    last = first + old.count("\n")
    edited = [f for f in functions if f.first <= last and first <= f.last]
    failing_names = {
        place.name for place in code_places(failing_output, workspace, most=12) if defines(place)
    }
    if not edited or any(f.name in failing_names for f in edited):
        return None
    failing_here = [f for f in functions if f.name in failing_names]
    if not failing_here:
        return None
    innermost = max(edited, key=lambda f: f.first)
    return OffTarget(innermost.name, failing_here[0].name, failing_here[0].first)


@dataclass(frozen=True)
class _Function:
    name: str
    first: int
    last: int


def _functions(text: str) -> list[_Function] | None:
    """Every function and method of a Python text with its lines; None if it does not
    parse."""
    tree = parsed(text)
    if tree is None:
        return None
    return [
        _Function(node.name, node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
