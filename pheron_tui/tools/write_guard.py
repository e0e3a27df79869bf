"""Writes that would lose or duplicate part of a file: held back, and how to say so.

Adding to a Python file what it already defines (asked for a docstring on add, the 1.5B model
appended a second ``def add`` to calc.py) is an edit written as an addition: the model is
shown the edit_file call that makes it (``redefined``).

An overwrite shorter than the file that keeps under half of its lines (``Overwrite``): asked
to change TIMEOUT_S to 60 in a two-line config, the 1.5B model replaced the file with the one
changed line; told once what it would lose, it made the same call again. Two cases:

* a fragment: every line written is a line of the file, at least one of them changed (the
  same name assigned or defined, or nearly the same text). That is an edit written as a
  whole file. It never goes ahead; the model is shown the edit_file call that makes it.
* any other replacement shorter than the file that keeps under half of its lines: held back
  once with the lines it would lose; made again unchanged it goes ahead, since replacing a
  whole file is sometimes what was asked.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

LOST_LINES_SHOWN = 5
SIMILAR = 0.75
"""How alike (difflib's ratio) a written line and a file's line must be to be one line changed."""

_DEFINITION = re.compile(
    r"^(?:(?:async\s+)?def\s+|class\s+)([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)"
)
"""A top-level definition in Python: a function, a class, or a name assigned."""
_NAMED = re.compile(r"^\s*(?:(?:async\s+)?def\s+|class\s+)?([A-Za-z_][\w.]*)\s*(?:[=:(]|$)")


@dataclass(frozen=True)
class Overwrite:
    """A planned replacement of ``old`` (the file's text) by ``new``."""

    old: str
    new: str

    def key(self, path: str, stamp: object) -> tuple[str, ...]:
        """What identifies this call on this file as it is now (``ToolContext.warned``)."""
        digest = hashlib.sha256(self.new.encode("utf-8", errors="surrogatepass")).hexdigest()
        return ("overwrite", path, str(stamp), digest)

    def held(self, shown: str, warned_before: bool) -> str | None:
        """Why the overwrite does not go ahead, or None when it may."""
        old_lines = [line for line in self.old.splitlines() if line.strip()]
        new_lines = [line for line in self.new.splitlines() if line.strip()]
        kept = {line.strip() for line in new_lines}
        lost = [line.strip() for line in old_lines if line.strip() not in kept]
        shorter = len(new_lines) < len(old_lines)
        if len(old_lines) < 2 or not shorter or 2 * len(lost) <= len(old_lines):
            return None
        changed = _changed_lines(old_lines, new_lines)
        if changed:
            before, after = changed[0]
            edit = json.dumps({"path": shown, "old": before, "new": after}, ensure_ascii=False)
            others = len(changed) - 1
            more = f", and the same for the other {others} changed lines" if others else ""
            return (
                f"{shown} is unchanged: these lines are part of it, with changes, and writing "
                f"them as the whole file would lose its other {len(old_lines) - len(new_lines)} "
                f"lines. To change a line, use edit_file, for example: edit_file {edit}{more}."
            )
        if warned_before:
            return None
        listed = "\n".join(f"  {line}" for line in lost[:LOST_LINES_SHOWN])
        if len(lost) > LOST_LINES_SHOWN:
            listed += f"\n  ({len(lost) - LOST_LINES_SHOWN} more)"
        return (
            f"{shown} is unchanged: this would replace its {len(old_lines)} lines with "
            f"{len(new_lines)} and lose these:\n{listed}\nTo change part of the file, use "
            "edit_file with text copied exactly from it; to replace the whole file after all, "
            "call write_file again with the same arguments."
        )


def _changed_lines(old_lines: list[str], new_lines: list[str]) -> list[tuple[str, str]]:
    """(file line, written line) for each written line that changes a line of the file, when
    every written line is a line of the file (kept or changed) and one is changed; else []."""
    unpaired = list(old_lines)
    changed = []
    for line in new_lines:
        if line in unpaired:
            unpaired.remove(line)
            continue
        match = next((old for old in unpaired if _same_line(old, line)), None)
        if match is None:
            return []
        unpaired.remove(match)
        changed.append((match, line))
    return changed


def _same_line(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` changed: the same name assigned or defined, or nearly the
    same text."""
    named_old, named_new = _NAMED.match(old), _NAMED.match(new)
    if named_old and named_new and named_old.group(1) == named_new.group(1):
        return True
    return difflib.SequenceMatcher(None, old.strip(), new.strip()).ratio() >= SIMILAR


def _definitions(text: str) -> dict[str, str]:
    """Each name a Python text defines at its top level, with the text of its (first)
    definition: the line and the indented or blank lines under it."""
    lines = text.splitlines()
    found: dict[str, str] = {}
    at = 0
    while at < len(lines):
        match = _DEFINITION.match(lines[at])
        end = at + 1
        if match is None:
            at = end
            continue
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
            end += 1
        block = lines[at:end]
        while block and not block[-1].strip():
            block.pop()
        found.setdefault(match.group(1) or match.group(2), "\n".join(block))
        at = end
    return found


def redefined(path: str, shown: str, old: str, added: str) -> str | None:
    """What to tell a model that would add to a Python file a definition it already holds
    (a function, a class, a name assigned), or None. A definition changed is shown as the
    edit_file call that makes the change; one already there as it is, as nothing to add."""
    if PurePosixPath(path).suffix not in (".py", ".pyi"):
        return None
    there = _definitions(old)
    again = [
        (name, there[name], block) for name, block in _definitions(added).items() if name in there
    ]
    if not again:
        return None
    names = ", ".join(name for name, _, _ in again)
    changed = [(before, after) for _, before, after in again if before != after]
    if not changed:
        return f"{shown} is unchanged: it already defines {names} as written; nothing to add."
    before, after = changed[0]
    edit = json.dumps({"path": shown, "old": before, "new": after}, ensure_ascii=False)
    more = f", and the same for the other {len(changed) - 1}" if len(changed) > 1 else ""
    return (
        f"{shown} is unchanged: it already defines {names}, and adding this would define "
        f"{'it' if len(again) == 1 else 'them'} a second time. To change a definition, use "
        f"edit_file on it, for example: edit_file {edit}{more}."
    )
