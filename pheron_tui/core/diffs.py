"""What a file change will do, as a unified diff split into hunks a person can take or leave.

A hunk is one group of changed lines with up to three lines of context (``difflib``'s grouping,
so the hunks are exactly those of the unified diff shown). Taking some hunks and leaving the
others applies the taken changes to the file as it was and keeps its own lines elsewhere.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT_LINES = 3

_Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class FileChange:
    """A planned change to one text file, before anything is written."""

    path: str
    """As shown to the user (relative to the workspace)."""
    before: str | None
    """The file's text now; None when the file does not exist yet."""
    after: str
    target: str = ""
    """Where to write, relative to the workspace and never shortened (``path`` is for
    people); empty when it is ``path``."""
    note: str = ""
    """What the tool made of the call, said with its result (a definition put in place of
    the file's own rather than added again)."""

    @property
    def write_path(self) -> str:
        return self.target or self.path

    @property
    def diff(self) -> str:
        return unified_diff(self)

    @property
    def hunks(self) -> list[str]:
        return [_hunk_text(self, group) for group in _groups(self)]


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines(keepends=True)


def _groups(change: FileChange) -> list[list[_Opcode]]:
    matcher = difflib.SequenceMatcher(None, _lines(change.before), _lines(change.after), False)
    return list(matcher.get_grouped_opcodes(CONTEXT_LINES))


def _hunk_text(change: FileChange, group: list[_Opcode]) -> str:
    before, after = _lines(change.before), _lines(change.after)
    first, last = group[0], group[-1]
    head = f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@\n"
    out = [head]
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            out.extend(" " + _ended(line) for line in before[i1:i2])
            continue
        out.extend("-" + _ended(line) for line in before[i1:i2])
        out.extend("+" + _ended(line) for line in after[j1:j2])
    return "".join(out)


def _span(start: int, end: int) -> str:
    """A hunk header's ``start,length`` (1-based; an empty range names the line before it)."""
    length = end - start
    return f"{start + 1 if length else start},{length}"


def _ended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def unified_diff(change: FileChange) -> str:
    """The whole change as a unified diff (``/dev/null`` as the old side of a new file)."""
    groups = _groups(change)
    if not groups:
        return ""
    old = "/dev/null" if change.before is None else f"a/{change.path}"
    header = f"--- {old}\n+++ b/{change.path}\n"
    return header + "".join(_hunk_text(change, group) for group in groups)


def apply_hunks(change: FileChange, taken: set[int]) -> str:
    """The file with only the hunks numbered in ``taken`` (0-based) applied."""
    before, after = _lines(change.before), _lines(change.after)
    owner: dict[_Opcode, int] = {}
    for number, group in enumerate(_groups(change)):
        for opcode in group:
            if opcode[0] != "equal":
                owner[opcode] = number
    matcher = difflib.SequenceMatcher(None, before, after, False)
    out: list[str] = []
    for opcode in matcher.get_opcodes():
        tag, i1, i2, j1, j2 = opcode
        if tag != "equal" and owner.get(opcode) in taken:
            out.extend(after[j1:j2])
        else:
            out.extend(before[i1:i2])
    return "".join(out)


def describe_hunks(change: FileChange, taken: set[int]) -> str:
    """What the model is told when a person took only some of the hunks."""
    hunks = change.hunks
    kept = [n + 1 for n in range(len(hunks)) if n in taken]
    left = [n for n in range(len(hunks)) if n not in taken]
    lines = [
        f"The user reviewed the change to {change.path} hunk by hunk: applied "
        f"{_numbers(kept) or 'none'} of {len(hunks)}, rejected {_numbers([n + 1 for n in left])}. "
        "The rejected hunks were not written:"
    ]
    lines.extend(f"Rejected hunk {n + 1}:\n{hunks[n].rstrip()}" for n in left)
    return "\n".join(lines)


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def split_hunks(diff: str) -> list[str]:
    """The hunks of a unified diff's text (each from its ``@@`` line), headers left out."""
    hunks: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            hunks.append(line)
        elif hunks:
            hunks[-1] += line
    return hunks
