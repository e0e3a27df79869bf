"""Whether a tool call's values were given or made up.

A small model with no tool that fits still calls the nearest one, and fills its values in
itself: asked "the magnetic field at distance r from a wire carrying current I", the 1.5B
model called ``magnetic_field_intensity(current=10, distance=5)``; asked "Who won the NBA MVP
in 2020?" with a player-stats tool, ``get_player_stats(player_name="LeBron James")``. A
number or a name a call needs that no one wrote (not the user, not a tool result, not the
tool's own description) is a guess, and a call built on a guess answers a question nobody
asked.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
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
    # Periods: how often a year ("monthly" compounding is 12 periods) or how many days.
    "daily": 365, "weekly": 52, "biweekly": 26, "monthly": 12, "quarterly": 4,
    "semiannually": 2, "annually": 1, "yearly": 1, "week": 7, "fortnight": 14, "month": 30,
    "decade": 10, "century": 100,
}  # fmt: skip
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_NAME_WORDS = 8
"""Words a name runs to at most ("The Metropolitan Museum of Art"); longer text is content."""
_PLAIN_WORDS = {"the", "and", "for", "you", "your", "our", "with", "from", "this", "that"}
"""Words that name nothing even capitalised ("The Old Guitarist" names by its other words)."""
_ALWAYS_GIVEN = {0.0, 1.0}
"""Values no one needs to write: a count of one, a start at zero, a flag as a number."""


_SI_PREFIXES = {
    "p": (1e-12,), "n": (1e-9,), "µ": (1e-6,), "μ": (1e-6,), "u": (1e-6,), "m": (1e-3, 1e6),
    "c": (1e-2,), "k": (1e3,), "g": (1e9,),
}  # fmt: skip
"""A unit's prefix, read in lower case (so "m" is milli or mega)."""
_TIME_UNITS = {
    "min": (60,), "mins": (60,), "minute": (60,), "minutes": (60,),
    "h": (60, 3600), "hr": (60, 3600), "hrs": (60, 3600), "hour": (60, 3600),
    "hours": (60, 3600), "day": (24, 1440, 86400), "days": (24, 1440, 86400),
    "week": (7,), "weeks": (7,),
}  # fmt: skip
"""A time read in smaller units: "2 hours" is 120 minutes and 7,200 seconds."""


def _scales(unit: str) -> tuple[float, ...]:
    """The factors that turn a number written before ``unit`` into the units a tool may want:
    a percent, a multiplier word, a time in smaller units, an SI prefix ("50mH" is 0.05 H,
    "100µF" is 1e-4 F, "5 km" is 5,000 m)."""
    if unit in ("%", "percent"):
        return (1 / 100,)
    if unit in _MULTIPLIERS:
        return (_MULTIPLIERS[unit],)
    if unit in _TIME_UNITS:
        return _TIME_UNITS[unit]
    if 2 <= len(unit) <= 4 and unit[0] in _SI_PREFIXES:
        return _SI_PREFIXES[unit[0]]
    return ()


def stated_numbers(text: str) -> set[float]:
    """The magnitudes ``text`` writes: digits (``1,000``, ``2.5``, ``3e8``), also scaled by
    what follows them (``5k``, ``2 million``, ``5%`` is 5 and 0.05, ``50mH`` is 50 and 0.05,
    ``2 hours`` is 2, 120 and 7,200), and number words (``twelve``, ``a dozen``, ``half``).
    Signs are dropped: "112.07 W" is a longitude of -112.07."""
    lowered = text.lower()
    found: set[float] = set()
    for match in _NUMBER.finditer(lowered):
        written = match.group()
        value = float(written.replace(",", ""))
        found.add(value)
        if "," in written:  # "200,300,400" may be a list as well as a number
            found.update(float(part) for part in written.split(","))
        following = re.match(r"\s?(%|percent|[^\W\d_]+)", lowered[match.end() : match.end() + 12])
        if following:
            found.update(value * scale for scale in _scales(following.group(1)))
    for word in re.findall(r"[a-z]+", lowered):
        if word in _WORDS:
            found.add(float(_WORDS[word]))
        if len(word) >= 3 and word in _TIME_UNITS:
            found.update(float(scale) for scale in _TIME_UNITS[word])  # "the past hour": 3,600 s
    return found


def _leaves(value: Any) -> Iterator[Any]:
    """The scalars inside an argument's value, however deep its lists and objects go."""
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


def _as_float(value: int | float) -> float:
    """``value`` as a float; an int too long for one (a model may write 4,000 digits) is
    infinite, which no stated number matches."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _required_numbers(arguments: Mapping[str, Any], tool: Mapping[str, Any]) -> Iterator[float]:
    for name in _required(tool):
        for leaf in _leaves(arguments.get(name)):
            if isinstance(leaf, int | float) and not isinstance(leaf, bool):
                yield _as_float(leaf)


def _required_strings(arguments: Mapping[str, Any], tool: Mapping[str, Any]) -> Iterator[str]:
    for name in _required(tool):
        yield from (leaf for leaf in _leaves(arguments.get(name)) if isinstance(leaf, str))


def _given(value: float, stated: set[float], strict: bool = False) -> bool:
    value = abs(value)
    if value in _ALWAYS_GIVEN and not strict:
        return True
    return any(math.isclose(value, n, rel_tol=1e-6, abs_tol=1e-12) for n in stated)


def guessed_numbers(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str, strict: bool = False
) -> list[float]:
    """The numbers in the call's required arguments that neither ``context`` (what the user,
    the tools and the model's reasoning said) nor the tool's own schema and description
    (``tool``: its name, description and parameters) state. Optional arguments are left
    alone: one the request does not mention is the tool's business. 0 and 1 count as given
    (a start, a count of one) unless ``strict``."""
    return _Said(context, tool).numbers(arguments, strict)


def guessed_names(arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str) -> list[str]:
    """The strings in the call's required arguments that name something (a capitalised word:
    "LeBron James", "Real Madrid") or carry digits (a date, an id: "2023-04-15", "U54EEF2")
    when not one of those names or digit groups was said. Read loosely, since a reading is
    not a guess: "USD" for "US dollars" (codes in capitals are never judged), "2023-04-04" for
    "April 4th" (the 4 was said), "Los Angeles" for "LA", "McDonald's" for "mc donalds",
    "Chicago" for "Chcicago", "19:00" for "7 PM". On BFCL's own answers this takes back
    no right call in simple_python, multiple, parallel or live_simple and 4 of 1,053 in
    live_multiple ("Chi-town", a pickup time nobody gave, "this Friday" as a date: the model
    does not know today's date, so that stays a guess)."""
    return _Said(context, tool).names(arguments)


def guessed_words(arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str) -> list[str]:
    """The strings in the call's required arguments not one of whose words was said (nor is
    in the tool's schema), names or not: "large" for a sculpture's size nobody gave. Codes
    ("USD") and text of more than a few words (content) are not judged."""
    return _Said(context, tool).words(arguments)


# Words of a tool's name that say what kind of thing it does, not what it is about.
_ACTION_WORDS = {
    "get", "find", "calculate", "calc", "compute", "fetch", "retrieve", "search", "check",
    "lookup", "look", "run", "do", "perform", "make", "create", "set", "list", "show", "info",
    "information", "details", "data", "tool", "api", "util", "helper", "by", "of", "to",
    "for", "and", "the", "in", "on", "from", "with",
}  # fmt: skip


def names_a_tool(request: str, tool_names: Iterable[str]) -> bool:
    """Whether ``request`` names one of the tools: says half the words of its name or more,
    one of them more than an action like "get" or "calculate". "Solve a quadratic equation
    where a=2…" names solve_quadratic_equation, "What is the sum of 133 and 34?" names
    calculate_sum; "Calculate the area of a circle" does not name calculate_bmi."""
    said = _words(request)
    for name in tool_names:
        words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]
        words = [w for w in words if len(w) > 1]
        named = [w for w in words if _said_as_word(w, said)]
        if words and 2 * len(named) >= len(words) and set(named) - _ACTION_WORDS:
            return True
    return False


def options_named(parameters: Mapping[str, Any], request: str) -> list[str]:
    """The optional parameters one of whose own options ``request`` names, every word of it
    ("Find a comedy movie by Edgar Wright": genre, for its "Comedy"). Asked for a comedy, the
    1.5B model left the genre out of 12 of the first 400 BFCL live_multiple movie searches;
    a parameter the request picks an option of is one the call should set."""
    said = _words(request)
    required = set(parameters.get("required") or [])
    named = []
    for name, schema in (parameters.get("properties") or {}).items():
        if name in required or not isinstance(schema, dict):
            continue
        for option in schema.get("enum") or ():
            words = re.findall(r"[^\W_]+", option.lower()) if isinstance(option, str) else []
            if words and all(len(w) >= 3 and _said_as_word(w, said) for w in words):
                named.append(name)
                break
    return named


def _said_as_word(word: str, said: set[str]) -> bool:
    """``word`` said as it is or in its plural or singular ("equation", "equations")."""
    return bool({word, f"{word}s", f"{word}es", word.removesuffix("s")} & said)


def guessed_values(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str, *, chosen: bool = True
) -> list[float | str]:
    """What a call made up: ``guessed_numbers`` and ``guessed_names``. A call the model was
    made to make against its own odds (not ``chosen``) is judged on every value: each
    required number stated, 0 and 1 too, and each required string in words that were said
    (``guessed_words``: "large" for a sculpture's size nobody gave)."""
    return _Said(context, tool).values(arguments, chosen)


def without_guessed_items(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str, *, chosen: bool = True
) -> dict[str, Any]:
    """The arguments with each required list of strings less the items ``guessed_values``
    finds in it, where one item of it at least was said. Asked for "a vegetarian pasta with
    cheese", the 1.5B model searched for the ingredients ["Pasta", "Tomato sauce", "Cheese"]:
    the sauce is its own addition to what the user asked for, not a sign that the call is.
    A list of numbers or of records with one made up is data made up, and stays whole for the
    value check to judge (on BFCL irrelevance, trimming those would have let 3 calls through
    that answer nothing asked)."""
    judge = _Said(context, tool)
    trimmed = dict(arguments)
    for name in _required(tool):
        items = arguments.get(name)
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            continue
        said = [i for i in items if not judge.values({name: [i]}, chosen)]
        if said and len(said) < len(items):
            trimmed[name] = said
    return trimmed


def _required(tool: Mapping[str, Any]) -> list[str]:
    return list((tool.get("parameters") or {}).get("required") or [])


class _Said:
    """What was said and the tool's own text, read once to judge any number of values (a
    list of hundreds of items is judged item by item)."""

    def __init__(self, context: str, tool: Mapping[str, Any]) -> None:
        self.tool = tool
        # Numbers and names written in another script ("十八") are not read here.
        self.latin = _in_latin_letters(context)
        schema = json.dumps(tool, ensure_ascii=False)
        self.stated = stated_numbers(context) | stated_numbers(schema)
        self.heard = _Heard(context, schema)

    def numbers(self, arguments: Mapping[str, Any], strict: bool) -> list[float]:
        if not self.latin:
            return []
        required = _required_numbers(arguments, self.tool)
        return [n for n in required if not _given(n, self.stated, strict)]

    def names(self, arguments: Mapping[str, Any]) -> list[str]:
        if not self.latin:
            return []
        strings = _required_strings(arguments, self.tool)
        return [text for text in strings if not self.heard.names(text)]

    def words(self, arguments: Mapping[str, Any]) -> list[str]:
        if not self.latin:
            return []
        return [
            text
            for text in _required_strings(arguments, self.tool)
            if len(_words(text)) <= _NAME_WORDS and not _value_given(text, self.heard.words, set())
        ]

    def values(self, arguments: Mapping[str, Any], chosen: bool) -> list[float | str]:
        found: list[float | str] = [*self.numbers(arguments, strict=not chosen)]
        names = self.names(arguments)
        found.extend(names)
        if not chosen:
            found.extend(t for t in self.words(arguments) if t not in names)
        return found


def _names_something(token: str) -> bool:
    """Digits (a date, an id), or a capitalised word that is not all capitals ("USD", "CA"
    are codes, read from words too freely to judge) and not a plain word."""
    if any(c.isdigit() for c in token):
        return True
    return (
        len(token) >= 3
        and token[0].isupper()
        and not token.isupper()
        and token.lower() not in _PLAIN_WORDS
    )


class _Heard:
    """What was said, as the name check reads it."""

    def __init__(self, context: str, schema: str) -> None:
        self.words = _words(context) | _words(schema)
        self.squashed = re.sub(r"[\W_]+", "", f"{context} {schema}".lower())
        # Written in capitals, as abbreviations are: "LA", "SF", "NYC", "LAX".
        self.capitals = {w.lower() for w in re.findall(r"\b[A-Z]{2,4}\b", context)}
        self.numbers = stated_numbers(context) | stated_numbers(schema)
        lowered = context.lower()
        self.numbers.update(
            float(number)
            for number, month in enumerate(_MONTHS, start=1)
            if re.search(rf"\b{month[:3]}", lowered)
        )
        # "7 PM", "2 in the afternoon": the hour of "19:00", "14:00".
        self.numbers.update(
            float(hour) + 12
            for hour in re.findall(
                r"\b(\d{1,2})(?::\d\d)?\s*(?:pm\b|p\.m\.|in the (?:afternoon|evening))", lowered
            )
        )

    def names(self, text: str) -> bool:
        """Whether ``text`` names nothing, or says at least one thing that was said. Text of
        more than a few words is content (a message, a file's text), new by nature: not a
        name, not judged."""
        tokens = re.findall(r"[^\W_]+", text)
        if len(tokens) > _NAME_WORDS:
            return True
        specific = [t for t in tokens if _names_something(t)]
        if not specific:
            return True
        return any(self._said(t) for t in specific) or self._abbreviated(tokens)

    def _said(self, token: str) -> bool:
        word = token.lower()
        if any(c.isdigit() for c in token):
            # Exactly as stated: the 1 of "2023-04-01" is a day someone has to say.
            found = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", token)}
            return word in self.words or bool(found & self.numbers)
        return _word_given(word, self.words) or word in self.squashed  # "McDonald"/"mc donalds"

    def _abbreviated(self, tokens: list[str]) -> bool:
        """Whether a run of the words is said by its initials: "LA", "SF", "NYC", "LAX"."""
        initials = "".join(t[0].lower() for t in tokens)
        ends = range(len(initials) + 1)
        runs = {initials[i:j] for i in ends for j in ends if j - i >= 2}
        return any(w[: len(r)] == r for w in self.capitals for r in runs if len(w) <= len(r) + 1)


def _words(text: str) -> set[str]:
    """The words of ``text``, and the digit and letter runs inside them ("24h" is also "24"
    and "h", "5ft" also "5" and "ft")."""
    lowered = text.lower()
    return set(re.findall(r"[^\W_]+", lowered)) | set(re.findall(r"\d+|[^\W\d_]+", lowered))


def _word_given(word: str, said: set[str]) -> bool:
    """``word`` said, or a word sharing its first four letters ("metric" for "metres" no,
    "celsius" for "Celsius" yes, "rating" for "ratings" yes) or close to one ("women" for
    "woman"), or a short word abbreviating one ("in" for "inches", "km" for "kilometres",
    "ft" for "feet")."""
    if word in said:
        return True
    if 2 <= len(word) <= 3 and word.isalpha():
        return any(w[0] == word[0] and _in_order(word, w) for w in said if len(w) > len(word))
    if len(word) < 4:
        return False
    return any(w[:4] == word[:4] for w in said if len(w) >= 4) or _close_to(word, said)


def _close_to(word: str, said: set[str]) -> bool:
    """A word said in another form or misspelt: "women" for "woman", "Chicago" for
    "Chcicago"."""
    return bool(difflib.get_close_matches(word, said, 1, 0.8))


def _in_order(letters: str, word: str) -> bool:
    remaining = iter(word)
    return all(letter in remaining for letter in letters)


_FUNCTION_WORDS = _PLAIN_WORDS | {
    "a", "an", "to", "of", "in", "on", "at", "or", "is", "be", "it", "by", "as", "please",
    "i", "me", "my", "we",
}  # fmt: skip
"""Words every request has: "the" and "to" said give no sign of "Please deliver to the front
door" (an instruction the 1.5B model wrote into an order nobody gave one for)."""


def _value_given(value: Any, said: set[str], stated: set[float]) -> bool:
    """Whether ``value`` is in what was said: its numbers stated, a word of each string said
    (one that tells something, where the string has one: not "the" or "to")."""
    if isinstance(value, bool):
        return True  # judged by its name, in unasked_options
    if isinstance(value, int | float):
        return _given(_as_float(value), stated)
    if isinstance(value, str):
        words = _words(value)
        telling = (words - _FUNCTION_WORDS) or words
        return not words or _is_code(value) or any(_word_given(w, said) for w in telling)
    if isinstance(value, list):
        return all(_value_given(item, said, stated) for item in value)
    if isinstance(value, dict):
        return all(_value_given(item, said, stated) for item in value.values())
    return True


def _is_code(text: str) -> bool:
    """A code such as "USD", "es-ES", "zh-CN": a reading of words ("US dollars", "in
    Spanish") that no word of the request spells, so not judged."""
    tokens = re.findall(r"[^\W_]+", text)
    return all(len(t) <= 3 for t in tokens) and (len(tokens) > 1 or text.isupper())


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
    equal to the schema's default changes nothing and is kept. Read as signs too: an option
    of the tool's own that a word said picks out, or whose parameter was spoken of
    (``_option_picked``, ``_spoken_of``), and a number the description keys to a word said
    (``_keyed``). A placeholder (``"your_device_id"``) is never asked for.

    Measured on BFCL's own answers (the first accepted value of each argument): this takes
    a needed argument from 1 of 258 live_simple answers and 44 of 1,053 live_multiple ones
    (103 before the option, name, key and date readings), mostly values only a reading of
    the request gives (4.5 for "a good rating", a date for "next Thursday")."""
    parameters = tool.get("parameters") or {}
    required = set(parameters.get("required") or [])
    properties = parameters.get("properties") or {}
    said = _words(context)
    stated = stated_numbers(context)
    if not _in_latin_letters(context):
        return []  # "摄氏度" asks for celsius, "十八" states 18: not read here
    heard = _Heard(context, "")
    unasked = []
    for name, value in arguments.items():
        schema = properties.get(name)
        if name in required or not isinstance(schema, dict):
            continue
        if "default" in schema and schema["default"] == value:
            continue
        if isinstance(value, bool):
            given = _spoken_of(name, said)
        elif _options_of(value, schema):
            # Each of the tool's own options chosen, alone or in a list of them.
            chosen = value if isinstance(value, list) else [value]
            given = all(
                _value_given(option, said, stated) or _option_picked(option, said)
                for option in chosen
            ) or _spoken_of(name, said)
        else:
            given = (
                _value_given(value, said, stated)
                or _keyed(value, schema, said)
                or _dated(value, heard)
            ) and not _placeholder(value, name)
        if not given:
            unasked.append(name)
    return unasked


def _options_of(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` is one of the parameter's options, or a list of its items' options
    ("categories": ["vegan", "gluten-free"] from the options of its items)."""
    if isinstance(value, str):
        return value in (schema.get("enum") or ())
    items = schema.get("items")
    options = (items.get("enum") or ()) if isinstance(items, dict) else ()
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(o, str) and o in options for o in value)
    )


def _dated(value: Any, heard: _Heard) -> bool:
    """Whether ``value`` is a date or a time read from what was said, as the name check
    reads one: "2023-03-09" for "March 9th", "16:00" for "4pm"."""
    return (
        isinstance(value, str)
        and any(c.isdigit() for c in value)
        and len(value) <= 40
        and heard.names(value)
    )


_KEY = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:for|=|:|-|–|means|is)\s+((?:[^\W\d_]+[ ,]*){1,3})"
)


def _keyed(value: Any, schema: Mapping[str, Any], said: set[str]) -> bool:
    """Whether the parameter's description keys the number ``value`` to something said:
    "Example: 1 for cleaning service, 2 for ironing service" makes 2 the ironing the user
    asked for (by the words only its own key has: "service" tells them apart from nothing).
    Lists are judged item by item."""
    if isinstance(value, list):
        return bool(value) and all(_keyed(item, schema, said) for item in value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    keys = [
        (float(number), _words(meaning) - _PLAIN_WORDS)
        for number, meaning in _KEY.findall(str(schema.get("description") or ""))
    ]
    for number, words in keys:
        if number != _as_float(value):
            continue
        own = words.difference(*(other for n, other in keys if n != number))
        if any(_word_given(w, said) for w in own if len(w) >= 4):
            return True
    return False


def _spoken_of(name: str, said: set[str]) -> bool:
    """Whether a word of the parameter's name was said ("free" for free_entry)."""
    return any(_word_given(w, said) for w in _words(_spoken(name)))


def _spoken(name: str) -> str:
    """A parameter's name in words: "powerSaveEnabled" is "power Save Enabled"."""
    return re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ")


def _option_picked(option: str, said: set[str]) -> bool:
    """Whether a word said starts the way one of the option's words does: three letters or
    more, and most of the shorter word ("Comic" picks "Comedy" from a genre's options;
    "actually" does not pick "Action"). Only the tool's own options are read this loosely:
    the model chose among them, and nothing said leads to "fahrenheit" on a plain weather
    question."""
    return any(
        _starts_alike(o, w) for o in _words(option) if len(o) >= 4 for w in said if len(w) >= 4
    )


def _starts_alike(one: str, other: str) -> bool:
    shared = next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b),
        min(len(one), len(other)),
    )
    return shared >= 3 and shared >= 0.6 * min(len(one), len(other))


_PLACEHOLDER_WORDS = {
    "your", "my", "the", "current", "default", "placeholder", "example", "sample", "here",
    "value", "insert", "enter",
}  # fmt: skip
"""Words a stand-in wraps around its parameter's name: "your_device_id", "current_date"."""
_NO_VALUE = {"default", "none", "null"}
"""A value that says there is none, or that the default applies: leaving it out says so."""
_PLACEHOLDER_FORM = re.compile(r"(?i)^(?:your|my)[_-]\w+$|^<[^<>]+>$|^x{3,}$|placeholder")
"""How a stand-in is written whatever it names: ``your_sensor_serial``, ``<api_key>``."""


def _placeholder(value: Any, name: str) -> bool:
    """Whether ``value`` only stands in for one: written as one (``_PLACEHOLDER_FORM``), or
    the parameter's own name with words such as "your" or "current" ("current_date" for
    movie_date); in a list, any item. The tool's default is what the model meant."""
    if isinstance(value, list):
        return any(_placeholder(item, name) for item in value)
    if not isinstance(value, str):
        return False
    if _PLACEHOLDER_FORM.search(value.strip()) or value.strip().lower() in _NO_VALUE:
        return True
    words, named = _words(value), _words(_spoken(name))
    # Both kinds of word: "current" alone may be a value (an electric current's metric).
    return (
        bool(words & _PLACEHOLDER_WORDS and words & named) and words <= named | _PLACEHOLDER_WORDS
    )


def without_unasked(
    arguments: Mapping[str, Any], tool: Mapping[str, Any], context: str
) -> dict[str, Any]:
    """The arguments less ``unasked_options``."""
    unasked = set(unasked_options(arguments, tool, context))
    return {name: value for name, value in arguments.items() if name not in unasked}
