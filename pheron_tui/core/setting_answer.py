"""Whether a yes-or-no answer about a setting says the opposite of what the results show.

Asked "Is debug turned on in settings.json?", the 1.5B model searched the file, was shown
``"debug": false`` and answered "Yes, debug is turned on in settings.json."; its critic,
shown the same line, passed it. A setting written as ``key: value`` or ``key = value`` with
a value that is plainly on or off (JSON, YAML, TOML, INI, Python) can be read without a
model: when every such setting the results show for the word the question asks about agrees,
and the answer's leading Yes or No says the opposite, the answer is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_YES_NO_QUESTION = re.compile(
    r"^\W*(?:is|are|was|were|does|do|did|has|have|can|will|should)\b", re.IGNORECASE
)
_SETTING = re.compile(
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,63})["']?[ \t]*[:=][ \t]*["']?"""
    r"""(?P<value>true|false|on|off|yes|no|enabled|disabled)["']?"""
    r"""(?=[ \t]*(?:[,;}\])#]|//|$))""",
    re.IGNORECASE | re.MULTILINE,
)
"""A setting whose whole value is on or off: not "TODO: no tests yet"."""
_ON = {"true", "on", "yes", "enabled"}
_ASKS_OFF = {"off", "disabled", "false", "not", "inactive", "deactivated"}
"""Words that ask whether a setting is off: "Is debug turned off?" is answered yes by false."""
_NOT_THE_SUBJECT = {
    "the", "and", "for", "with", "turned", "set", "setting", "settings", "enabled", "disabled",
    "active", "inactive", "file", "config", "configuration", "there", "this", "that", "what",
} | _ASKS_OFF | _ON  # fmt: skip


@dataclass(frozen=True)
class Contradiction:
    """The answer's ``said`` ("Yes") and the ``setting`` text a result shows against it."""

    said: str
    setting: str


def contradicted(question: str, answer: str, outputs: Iterable[str]) -> Contradiction | None:
    """The setting the ``outputs`` (tool results) show against the answer's leading Yes or
    No to a yes-or-no ``question`` about it, or None: when the question is of another kind,
    the answer starts with neither word, no setting is shown for a word of the question, or
    the settings shown for it disagree among themselves (``debug: true`` beside
    ``debug_toolbar: false``)."""
    if not _YES_NO_QUESTION.match(question):
        return None
    lead = re.match(r"\W*(yes|no)\b", answer, re.IGNORECASE)
    if lead is None:
        return None
    asked = set(re.findall(r"[a-z0-9]+", question.lower()))
    subject = {w for w in asked if len(w) >= 3} - _NOT_THE_SUBJECT
    shown: dict[bool, str] = {}
    for output in outputs:
        for match in _SETTING.finditer(output):
            if _key_words(match["key"]) & subject:
                shown.setdefault(match["value"].lower() in _ON, match.group(0).strip())
    if len(shown) != 1:
        return None
    [(on, setting)] = shown.items()
    yes = on != bool(asked & _ASKS_OFF)
    said = lead.group(1)
    if (said.lower() == "yes") == yes:
        return None
    return Contradiction(said=said.capitalize(), setting=setting)


def _key_words(key: str) -> set[str]:
    """The words of a setting's name: ``debugMode``, ``debug_mode`` and ``app.debug`` all
    hold "debug"."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", key)
    return {w.lower() for w in re.findall(r"[A-Za-z0-9]+", spaced)}
