"""Changes that would leave a JSON or Python file unreadable: said, with the parser's words.

A small model's edit often breaks the file it edits: ``{"port": 9090}`` appended to a JSON
object, a line indented one level off. Written, the breakage surfaces later as someone else's
error; refused with the parser's message, the model can correct its own call. Held only
once, the 1.5B model made the same breaking edit again at once, so a tool never makes one (a
person still can). A file that did not parse before is not judged.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import PurePosixPath

from pheron_tui.tools.write_guard import JSON_SUFFIXES, PYTHON_SUFFIXES


def broken_syntax(path: str, before: str, after: str) -> str | None:
    """Why ``after`` no longer reads as the kind of file ``path`` names, when ``before`` did;
    else None."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in JSON_SUFFIXES:
        read = _json_error
        kind = "JSON"
    elif suffix in PYTHON_SUFFIXES:
        read = _python_error
        kind = "Python"
    else:
        return None
    if read(before) is not None:
        return None
    error = read(after)
    return None if error is None else f"after this change it would not be valid {kind} ({error})"


def _json_error(text: str) -> str | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError):
        return "it cannot be read"
    return None


def _python_error(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours
            ast.parse(text)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError):
        return "it cannot be read"
    return None
