"""Whether a tool call's numbers were given or made up.

A small model with no tool that fits still calls the nearest one, and fills its numbers in
itself: asked "the magnetic field at distance r from a wire carrying current I", the 1.5B
model called ``magnetic_field_intensity(current=10, distance=5)``. A number a call needs that
no one wrote (not the user, not a tool result, not the tool's own description) is a guess, and
a call built on a guess answers a question nobody asked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

_NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:e[-+]?\d+)?|(?<![\w.])\.\d+"
)
_MULTIPLIERS = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
}
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1e3,
    "million": 1e6, "billion": 1e9, "dozen": 12, "half": 0.5, "quarter": 0.25, "twice": 2,
    "double": 2, "thrice": 3, "triple": 3, "pair": 2, "couple": 2,
}  # fmt: skip
_ALWAYS_GIVEN = {0.0, 1.0}
"""Values no one needs to write: a count of one, a start at zero, a flag as a number."""


def stated_numbers(text: str) -> set[float]:
    """The magnitudes ``text`` writes: digits (``1,000``, ``2.5``, ``3e8``), with a multiplier
    word after them (``5k``, ``2 million``) or a percent (``5%`` is 5 and 0.05), and number
    words (``twelve``, ``a dozen``, ``half``). Signs are dropped: "112.07 W" is a longitude of
    -112.07."""
    lowered = text.lower()
    found: set[float] = set()
    for match in _NUMBER.finditer(lowered):
        written = match.group()
        value = float(written.replace(",", ""))
        found.add(value)
        if "," in written:  # "200,300,400" may be a list as well as a number
            found.update(float(part) for part in written.split(","))
        following = re.match(r"\s?(%|percent|[a-z]+)", lowered[match.end() : match.end() + 12])
        if following:
            word = following.group(1)
            if word in ("%", "percent"):
                found.add(value / 100)
            elif word in _MULTIPLIERS:
                found.add(value * _MULTIPLIERS[word])
    for word in re.findall(r"[a-z]+", lowered):
        if word in _WORDS:
            found.add(float(_WORDS[word]))
    return found


def _numbers_in(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers_in(item)


def _given(value: float, stated: set[float]) -> bool:
    value = abs(value)
    if value in _ALWAYS_GIVEN:
        return True
    return any(math.isclose(value, n, rel_tol=1e-6, abs_tol=1e-12) for n in stated)


def guessed_numbers(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str
) -> list[float]:
    """The numbers in the call's required arguments that neither ``context`` (what the user,
    the tools and the model's reasoning said) nor the tool's own schema and description
    (``tool``: its name, description and parameters) state. Optional arguments are left
    alone: one the request does not mention is the tool's business. Strings are left alone
    too: "USD" for "US dollars" and "2023-04-04" for "April 4th" are readings, not guesses."""
    if not _in_latin_letters(context):
        return []  # numbers written in words of another script ("十八") are not read here
    parameters = tool.get("parameters") or {}
    required = parameters.get("required") or []
    stated = stated_numbers(context) | stated_numbers(json.dumps(tool, ensure_ascii=False))
    return [
        number
        for name in required
        if name in arguments
        for number in _numbers_in(arguments[name])
        if not _given(number, stated)
    ]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def _word_given(word: str, said: set[str]) -> bool:
    """``word`` said, or a word sharing its first four letters ("metric" for "metres" no,
    "celsius" for "Celsius" yes, "rating" for "ratings" yes)."""
    if word in said:
        return True
    return len(word) >= 4 and any(w[:4] == word[:4] for w in said if len(w) >= 4)


def _value_given(value: Any, said: set[str], stated: set[float]) -> bool:
    """Whether ``value`` is in what was said: its numbers stated, a word of each string said."""
    if isinstance(value, bool):
        return True  # judged by its name, in unasked_options
    if isinstance(value, int | float):
        return _given(float(value), stated)
    if isinstance(value, str):
        words = _words(value)
        return not words or any(_word_given(w, said) for w in words)
    if isinstance(value, list):
        return all(_value_given(item, said, stated) for item in value)
    if isinstance(value, dict):
        return all(_value_given(item, said, stated) for item in value.values())
    return True


def _in_latin_letters(text: str) -> bool:
    """Whether most of the letters of ``text`` are Latin ones."""
    letters = [c for c in text if c.isalpha()]
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    return not letters or latin >= 0.8 * len(letters)


def unasked_options(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str
) -> list[str]:
    """The optional arguments of the call whose value ``context`` gives no sign of: a number
    it does not state, a string none of whose words it uses, a flag whose name it does not
    speak of. Told to give an optional argument only when the request gives its value, the
    1.5B model still adds ``"unit": "fahrenheit"`` to a plain weather question and
    ``"detail": true`` to a plain one; left out, the tool's own default applies. A value
    equal to the schema's default changes nothing and is kept."""
    parameters = tool.get("parameters") or {}
    required = set(parameters.get("required") or [])
    properties = parameters.get("properties") or {}
    said = _words(context)
    stated = stated_numbers(context)
    if not _in_latin_letters(context):
        return []  # "摄氏度" asks for celsius, "十八" states 18: not read here
    unasked = []
    for name, value in arguments.items():
        schema = properties.get(name)
        if name in required or not isinstance(schema, dict):
            continue
        if "default" in schema and schema["default"] == value:
            continue
        if isinstance(value, bool):
            spoken = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ")
            given = any(_word_given(w, said) for w in _words(spoken))
        else:
            given = _value_given(value, said, stated)
        if not given:
            unasked.append(name)
    return unasked


def without_unasked(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str
) -> dict[str, Any]:
    """The arguments less ``unasked_options``."""
    unasked = set(unasked_options(arguments, tool, context))
    return {name: value for name, value in arguments.items() if name not in unasked}
