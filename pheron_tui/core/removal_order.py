"""The files and folders a request orders deleted, to see whether they are gone.

Asked to "Remove the build folder.", the 1.5B model deleted one of its two files and said the
folder was empty; its critic, shown the one deletion that succeeded, said PASS. Whether a
named entry still exists needs no model: the critic fails the task when one does.
"""

from __future__ import annotations

import re
from pathlib import Path

from pheron_tui.core.intent import file_like_words

_REMOVE = re.compile(
    r"\b(?:delete|remove|erase|rm|get\s+rid\s+of|throw\s+away|trash)\b", re.IGNORECASE
)
_QUESTION = re.compile(r"^\s*(?:what|which|who|whose|where|when|why|how)\b", re.IGNORECASE)
_ASKED_TO_DO = re.compile(r"\b(?:can|could|would|will)\s+you\b|^\s*please\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:]|\b(?:and|then|but|so|because)\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_PATH = r"[`'\"]?([\w][\w.\-/]*)[`'\"]?"
_FOLDER_AFTER = re.compile(rf"{_PATH}\s+(?:folder|directory|dir)\b", re.IGNORECASE)
_FOLDER_BEFORE = re.compile(
    rf"\b(?:folder|directory|dir)\s+(?:called\s+|named\s+)?{_PATH}", re.IGNORECASE
)
_INSIDE = r"\b(?:from|in|inside|of|within|into|to|at|under)\s+(?:the\s+)?[`'\"]?"
"""Before a name, what makes it the place of the deletion, not its object ("delete the TODO
lines from notes.md")."""


def ordered_removed(text: str, workspace: Path) -> list[str]:
    """The names (as the request gives them) of workspace entries that an order in ``text``
    deletes and that exist now: ``server.log`` in "Delete server.log", ``build`` in "Remove
    the build folder". A name after "from", "in" and the like is where something is deleted,
    not what; a question orders nothing; a pattern (``*.log``) is left to the model."""
    root = Path(workspace).resolve()
    found: list[str] = []
    for sentence in _SENTENCES.split(text[:2000]):
        if _asks(sentence):
            continue
        for verb in _REMOVE.finditer(sentence):
            # The verb's object, up to the next clause: "Delete server.log and rename data.csv"
            # deletes one file.
            clause = _CLAUSE_END.split(sentence[verb.end() :], maxsplit=1)[0]
            found.extend(_existing(_named(clause), clause, root))
    return list(dict.fromkeys(found))


def _named(clause: str) -> set[str]:
    names = set(file_like_words(clause))
    for pattern in (_FOLDER_AFTER, _FOLDER_BEFORE):
        names.update(match.group(1).rstrip(".") for match in pattern.finditer(clause))
    return names


def _existing(names: set[str], clause: str, root: Path) -> list[str]:
    found = []
    for name in sorted(names):
        if "*" in name or re.search(_INSIDE + re.escape(name), clause, re.IGNORECASE):
            continue
        try:
            place = (root / name.removeprefix("./")).resolve()
        except (OSError, ValueError, RuntimeError):
            continue
        if place != root and place.is_relative_to(root) and place.exists():
            found.append(name)
    return found


def _asks(sentence: str) -> bool:
    """A question, not an order: "Why was build removed?"; "Can you delete it?" orders."""
    if _ASKED_TO_DO.search(sentence):
        return False
    return _QUESTION.match(sentence) is not None or sentence.rstrip().endswith("?")
