"""JSON as a model writes it: decoded where it is valid, read as meant where the decoder stops
(Python's constants and quotes, a lone backslash, real newlines in strings), at a bounded
cost, every position mapped back to what the model wrote. ``core/parsing`` reads calls with
it."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

_JSON_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
MAX_LENIENT_READS = 128
"""Python constants, quoted strings and lone backslashes read in one call's JSON, at most."""
LENIENT_READS_TEXT = 4_000_000
"""Each read copies and decodes the text again: fewer reads in a long text (a reply of
32 calls written over 200,000 characters otherwise took half a second)."""
_EXPECTING = ("Expecting value", "Expecting property name enclosed in double quotes")
_BAD_ESCAPES = {"Invalid \\escape": 0, "Invalid \\uXXXX escape": 1}
"""The decoder's complaints about an escape, and how far past the backslash each points."""


def _decoded(decode: Callable[[str], Any], text: str) -> tuple[Any, list[tuple[int, int]]]:
    """``decode(text)``, reading what a model meant where the decoder stops:
    - Python's ``True``/``False``/``None`` and strings in single quotes where a value or a key
      was expected (unconstrained, the 1.5B model writes ``{"standardize": True}``, 5 of the 8
      BFCL multiple calls it got wrong for want of valid JSON, and ``['red', 'blue']``);
    - a backslash that starts no JSON escape, as itself: Windows paths and regular
      expressions (``"C:\\Users\\me"``, ``"\\d+"``), written as they are typed.
    The decoder says where, so nothing else in a string is ever touched (``"\\n"`` stays a
    newline). Also: where the text was changed and by how many characters, so positions can
    be mapped back to what the model wrote. A ValueError, never a RecursionError (deep
    nesting), when it does not decode."""
    written = text
    shifts: list[tuple[int, int]] = []
    try:
        for _ in range(min(MAX_LENIENT_READS, LENIENT_READS_TEXT // max(len(text), 1))):
            try:
                return decode(text), shifts
            except json.JSONDecodeError as exc:
                read = _meant_at(text, exc)
                if read is None:
                    break
                start, as_json, end = read
                text = text[:start] + as_json + text[end:]
                shifts.append((start, len(as_json) - (end - start)))
        try:
            return decode(text), shifts
        except json.JSONDecodeError as exc:  # its position in what the model wrote
            at = exc.pos - _grown_before(shifts, exc.pos)
            raise json.JSONDecodeError(exc.msg, written, at) from None
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


def _grown_before(shifts: list[tuple[int, int]], position: int) -> int:
    return sum(grown for at, grown in shifts if at < position)


def _meant_at(text: str, error: json.JSONDecodeError) -> tuple[int, str, int] | None:
    """Where the text the decoder stopped at starts, the JSON meant by it, where it ends."""
    if error.msg in _EXPECTING:
        read = _python_at(text, error.pos)
        return None if read is None else (error.pos, *read)
    if error.msg in _BAD_ESCAPES:
        backslash = error.pos - _BAD_ESCAPES[error.msg]
        if text.startswith("\\", backslash):
            return backslash, "\\\\", backslash + 1
    return None


def _python_at(text: str, position: int) -> tuple[str, int] | None:
    """The JSON for the Python constant or single-quoted string at ``position``, and where it
    ends in ``text``."""
    if text.startswith("'", position):
        return _python_string_at(text, position)
    for constant, as_json in _JSON_CONSTANTS.items():
        end = position + len(constant)
        after = text[end : end + 1]
        if text.startswith(constant, position) and not (after.isalnum() or after == "_"):
            return as_json, end
    return None


_PYTHON_STRING = re.compile(r"'(?:[^'\\\n]++|\\.)*+'", re.DOTALL)
"""A Python string in single quotes, on one line (a backslash escapes the next character)."""


def _python_string_at(text: str, position: int) -> tuple[str, int] | None:
    """The single-quoted Python string at ``position`` as a JSON string."""
    match = _PYTHON_STRING.match(text, position)
    if match is None:
        return None
    value = match.group(0)[1:-1]
    if "\\" in value:  # escapes as Python reads them
        try:
            value = ast.literal_eval(match.group(0))
        except (SyntaxError, ValueError):
            return None
    return json.dumps(value, ensure_ascii=False), match.end()


_DECODER = json.JSONDecoder(strict=False)
"""Control characters are taken inside strings: a model writing a file's lines into a call
puts real newlines and tabs in them."""


def loads(text: str) -> Any:
    """``json.loads`` of what a model wrote (see ``_decoded``, ``_DECODER``)."""
    return _decoded(_DECODER.decode, text)[0]


def raw_decode(text: str) -> tuple[Any, int]:
    """The JSON value at the start of ``text`` and where it ends in ``text`` (see
    ``_decoded``, ``_DECODER``)."""
    (value, end), shifts = _decoded(_DECODER.raw_decode, text)
    return value, end - _grown_before(shifts, end)


def json_problem(exc: ValueError) -> str:
    """Why JSON did not decode. Not every ValueError is a JSONDecodeError: a number with
    thousands of digits fails Python's int conversion limit instead."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at position {exc.pos}"
    return str(exc)[:120]
