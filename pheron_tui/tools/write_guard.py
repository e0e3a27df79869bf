"""Writes that would lose or duplicate part of a file: made as the edit they mean, or held.

Small models write a whole file where they mean to change part of it. Asked to change
TIMEOUT_S to 60 in a two-line config, the 1.5B model replaced the file with the one changed
line; told what it would lose, and shown the edit_file call that makes the change, it made
the same call again, three times. Asked for a docstring on add, it appended a second
``def add`` to calc.py. So:

* a Python text made only of definitions the file has (functions, classes, names assigned),
  one of them changed, written to the file in any mode: each definition is put in place of
  the file's own, the rest of the file kept (``merged_definitions``); the diff shows it, and
  the result says so. Written as it already is, it is nothing to add.
* an overwrite made only of lines of the file, some changed (any kind of file): the changed
  lines are put in place (``merged_lines``).
* any other overwrite shorter than the file that keeps under half of its lines: held back once
  with the lines it would lose; made again unchanged it goes ahead, since replacing a whole
  file is sometimes what was asked (``Overwrite``).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

LOST_LINES_SHOWN = 5
SIMILAR = 0.75
"""How alike (difflib's ratio) a written line and a file's line must be to be one line changed."""
PYTHON_SUFFIXES = (".py", ".pyi")

_DEFINITION = re.compile(
    r"^(?:(?:async\s+)?def\s+|class\s+)([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)"
)
"""A top-level definition in Python: a function, a class, or a name assigned."""
_NAMED = re.compile(r"^\s*(?:(?:async\s+)?def\s+|class\s+)?([A-Za-z_][\w.]*)\s*(?:[=:(]|$)")


@dataclass(frozen=True)
class Merge:
    """A write made as the edit it means: the file's new text, and what to say of it."""

    text: str
    note: str


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
        """Why the overwrite does not go ahead (yet), or None when it may."""
        old_lines = [line.strip() for line in self.old.splitlines() if line.strip()]
        new_lines = [line.strip() for line in self.new.splitlines() if line.strip()]
        kept = set(new_lines)
        lost = [line for line in old_lines if line not in kept]
        shorter = len(new_lines) < len(old_lines)
        if warned_before or len(old_lines) < 2 or not shorter or 2 * len(lost) <= len(old_lines):
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


def merged_lines(old: str, new: str) -> Merge | None:
    """``old`` with the lines ``new`` changes put in place, when ``new`` is shorter than
    ``old`` and every line of it is a line of ``old``, kept or changed (the same name assigned
    or defined, or nearly the same text), at least one changed; else None."""
    lines = old.splitlines(keepends=True)
    written = [line for line in new.splitlines() if line.strip()]
    if len(written) >= sum(1 for line in lines if line.strip()):
        return None
    free = [n for n, line in enumerate(lines) if line.strip()]
    changed: list[tuple[int, str]] = []
    for line in written:
        same = next((n for n in free if lines[n].rstrip("\r\n") == line), None)
        if same is None:
            same = next((n for n in free if _same_line(lines[n], line)), None)
            if same is None:
                return None
            changed.append((same, line))
        free.remove(same)
    if not changed:
        return None
    for n, line in changed:
        ending = lines[n][len(lines[n].rstrip("\r\n")) :] or ("\n" if n < len(lines) - 1 else "")
        lines[n] = line + ending
    count = "line" if len(changed) == 1 else f"{len(changed)} lines"
    return Merge(
        "".join(lines),
        f"what was written is part of the file with {count} changed: changed "
        f"{'it' if len(changed) == 1 else 'them'} in place; the rest of the file is kept",
    )


def merged_definitions(path: str, old: str, added: str, partial: bool = False) -> Merge | None:
    """For a Python file: ``old`` with each top-level definition in ``added`` put in place of
    its own definition of that name, when ``added`` is nothing but definitions ``old`` has (a
    comment aside), written differently at least once; else None. Written exactly as they are
    already, the text is ``old`` itself and the note says there was nothing to change.
    ``partial`` (an overwrite): only when ``added`` leaves out some of the file's definitions;
    one that has them all is the whole file rewritten (without an import it no longer needs)."""
    if PurePosixPath(path).suffix not in PYTHON_SUFFIXES:
        return None
    there = _definitions(old)
    written = _definitions(added)
    fits = written.keys() < there.keys() if partial else written.keys() <= there.keys()
    if not written or not fits or _stray_lines(added, written):
        return None
    lines = old.splitlines(keepends=True)
    changed = [name for name, (text, _, _) in written.items() if text != there[name][0]]
    names = ", ".join(written)
    if not changed:
        return Merge(old, f"it already defines {names} exactly as written; nothing to change")
    # From the last to the first, so the earlier places stay where they are.
    for name in sorted(changed, key=lambda n: there[n][1], reverse=True):
        _, start, end = there[name]
        ending = "\n" if end < len(lines) or old.endswith("\n") else ""
        lines[start:end] = [written[name][0] + ending]
    return Merge(
        "".join(lines),
        f"{', '.join(changed)} already defined in the file: the new definition replaced the "
        "old one there; the rest of the file is kept",
    )


def _definitions(text: str) -> dict[str, tuple[str, int, int]]:
    """Each name a Python text defines at its top level, with its (first) definition's text
    and the lines it spans ``[start, end)``: the line and the indented or blank lines under
    it, blank lines at its end left out."""
    lines = text.splitlines()
    found: dict[str, tuple[str, int, int]] = {}
    at = 0
    while at < len(lines):
        match = _DEFINITION.match(lines[at])
        end = at + 1
        if match is None:
            at = end
            continue
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
            end += 1
        last = end
        while last > at + 1 and not lines[last - 1].strip():
            last -= 1
        name = match.group(1) or match.group(2)
        found.setdefault(name, ("\n".join(lines[at:last]), at, last))
        at = end
    return found


def _stray_lines(text: str, definitions: dict[str, tuple[str, int, int]]) -> bool:
    """Whether ``text`` has a line outside its definitions that is neither blank nor a
    comment (an import, a call, a decorator): then it is more than definitions."""
    inside = {n for _, start, end in definitions.values() for n in range(start, end)}
    for n, line in enumerate(text.splitlines()):
        if n not in inside and line.strip() and not line.lstrip().startswith("#"):
            return True
    return False


def _same_line(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` changed: the same name assigned or defined, or nearly the
    same text."""
    named_old, named_new = _NAMED.match(old), _NAMED.match(new)
    if named_old and named_new and named_old.group(1) == named_new.group(1):
        return True
    return difflib.SequenceMatcher(None, old.strip(), new.strip()).ratio() >= SIMILAR
