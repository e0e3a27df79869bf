"""A question about what a function of the workspace returns for values the user gives.

Asked "What does shout in utils.py return for 'hi'?", the 1.5B model searched for shout and
answered with the line that defines it (``utils.py:5: def shout(text):``); at other runs it
worked the result out wrong. Python works it out right: such a question is answered by
running the function, and the agent says how before the first step.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Sequence

from pheron_tui.core.intent import CodePlace, defines

_RESULT_QUESTION = re.compile(
    r"\bwhat\s+(?:does|do|would|will)\s+(?:the\s+(?:function|method)\s+)?"
    r"`?(?P<name>[A-Za-z_]\w*)(?:\(\))?`?"
    r"(?:\s+(?:in|from|of)\s+`?[\w./-]+\.py`?)?"
    r"\s+(?:return|give|print|output|produce)s?"
    r"\s+(?:for|with|given|when\s+given|when\s+called\s+with|on)\s+(?P<values>.+)",
    re.IGNORECASE,
)
_CALL_QUESTION = re.compile(
    r"\bwhat\s+(?:is|does|would|will)\s+`?(?P<name>[A-Za-z_]\w*)\((?P<values>[^()\n]*)\)",
    re.IGNORECASE,
)
MOST_CHARS = 1000
"""Longer than this, a message is no question about one call's result (and is not read)."""
_ANY_QUOTE_OR_ESCAPE = re.compile(r"[\"$`\\]")


def asked_result(text: str) -> tuple[str, str] | None:
    """(function, values) of a question about what a function returns for values: "What does
    shout return for 'hi'?", "What is add(2, 3)?", "what would total give for 2 and 3". The
    values must read as Python literals (a number, a string in quotes, a list), else None:
    "for a long text" names no value to run with."""
    if len(text) > MOST_CHARS:
        return None
    match = _RESULT_QUESTION.search(text) or _CALL_QUESTION.search(text)
    if match is None:
        return None
    # The end trimmed here, not by the pattern: a lazy group before "[?.!\s]*$" is quadratic
    # on a long run of spaces.
    values = match["values"].rstrip(" \t\r\n?.!").strip().strip("`").strip()
    for written in (values, ", ".join(part.strip() for part in re.split(r"\band\b", values))):
        try:
            ast.literal_eval(f"({written},)")
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        return match["name"], written
    return None


def result_run_hint(text: str, places: Sequence[CodePlace]) -> str:
    """How to run the function a result question asks about (``asked_result``), imported from
    the Python file that defines it (``places``: where the request's names are), or "" when
    the question is of another kind or the function is defined in no Python file found."""
    asked = asked_result(text)
    if asked is None:
        return ""
    name, values = asked
    where = next(
        (p.path for p in places if p.name == name and p.path.endswith(".py") and defines(p)),
        None,
    )
    if where is None:
        return ""
    folder, _, file = where.rpartition("/")
    module = file.removesuffix(".py")
    if not module.isidentifier():
        return ""
    enter = f"cd {shlex.quote(folder)} && " if folder else ""
    program = f"from {module} import {name}; print(repr({name}({values})))"
    quoted = shlex.quote(program) if _ANY_QUOTE_OR_ESCAPE.search(program) else f'"{program}"'
    return (
        f"To see what {name} returns for {values}, run it with shell_exec: "
        f"{enter}python3 -c {quoted}"
    )
