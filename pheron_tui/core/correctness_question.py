"""A question whether a function of the workspace is right: "Is there a bug in the average
function in calc.py?", "Does oldest() do what its docstring says?", "Explain what km_to_miles
does and whether it is correct."

Asked these, the 1.5B model read the function and called it correct, on all three task sets
that ask one (``sum(numbers) / (len(numbers) - 1)`` for a mean, ``max`` for the oldest,
``km * KM_PER_MILE`` for miles). Before its first step it is told how to judge: what the
function should give for one simple input first, from its name and docstring, then what its
code gives for that input, line by line; and, where commands may run, how to run it.
"""

from __future__ import annotations

import re
from pathlib import Path

from pheron_tui.core.intent import code_places, defines
from pheron_tui.core.result_question import call_command

_ASKS_IF_RIGHT = re.compile(
    r"\b(?:bugs?|buggy|correct(?:ly)?|incorrect|wrong|broken|mistakes?|"
    r"does\s+what|do\s+what|works?\s+(?:as|properly|correctly|right))\b",
    re.IGNORECASE,
)
_NAMED_FUNCTION = re.compile(
    r"\bthe\s+`?(?P<the>[A-Za-z_]\w*)`?\s+(?:function|method)\b"
    r"|\b(?:function|method)\s+`?(?P<named>[A-Za-z_]\w*)`?"
    r"|`?(?P<called>[A-Za-z_]\w*)\(\)`?"
    r"|`(?P<ticked>[A-Za-z_]\w*)`"
    r"|\b(?P<snake>[a-z]\w*_\w+)\b",
    re.IGNORECASE,
)
_DEF = re.compile(r"\s*(?:async\s+)?def\s")
MOST_CHARS = 1000
"""Longer than this, a message is no question about one function (and is not read)."""


def judged_function(text: str) -> str | None:
    """The function a question asks to judge right or wrong, or None: the question must ask
    about bugs or correctness and name the function ("the average function", "oldest()",
    "`total`", "km_to_miles")."""
    if len(text) > MOST_CHARS or not _ASKS_IF_RIGHT.search(text):
        return None
    for match in _NAMED_FUNCTION.finditer(text):
        name = next(group for group in match.groups() if group)
        if "." not in name:
            return name
    return None


def correctness_note(text: str, workspace: Path, can_run: bool) -> str:
    """How to judge the function a correctness question names (``judged_function``), or ""
    when the question is of another kind or no Python file defines it. Reads files: run it
    off the event loop."""
    name = judged_function(text)
    if name is None:
        return ""
    where = next(
        (
            p.path
            for p in code_places(f"`{name}`", workspace, most=3)
            if p.path.endswith(".py")
            and defines(p)
            and p.text.lstrip().startswith(("def", "async"))
        ),
        None,
    )
    if where is None:
        return ""
    note = (
        f"To judge whether {name} is right: first say what it should return for one simple "
        "input, from its name and its docstring; then work out from its code, line by line, "
        "what it returns for that same input. If the two differ, it has a bug: say which line "
        "and what it should be."
    )
    command = call_command(where, name, "...") if can_run else ""
    if command:
        note += (
            f" You may run it with shell_exec to see, your input in place of the dots: {command}"
        )
    return note
