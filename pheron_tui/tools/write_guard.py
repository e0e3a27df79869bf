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
* a Python text made only of definitions the file does not have, written to it as a new
  file: added at its end (``added_definitions``). Asked to add a function to inventory.py,
  the 1.5B model wrote it as a new file three times over, though told to append.
* a JSON object (or its ``"key": value`` lines) with only keys a JSON file's object has,
  written to it in any mode: those keys take the new values, the rest is kept, in the file's
  own layout (``merged_keys``). Told to set a port, the 1.5B model appended ``{"port": 9090}``
  to settings.json, which then held two objects.
* ``key = value`` lines, each naming one setting a settings file (INI, TOML, .env…) has,
  written to it in any mode: set in place (``merged_settings``). Asked to change a cache
  size, the 1.5B model overwrote config.ini with ``cache_size = 256``.
* an overwrite made only of lines of the file, some changed (any kind of file): the changed
  lines are put in place (``merged_lines``).
* a new version of the whole file written as a new file or as an addition (it keeps at least
  half of the file's lines and every line it leaves out is one it changes): it replaces the
  file (``rewritten``). Asked to sort a list of names, the 1.5B model could not: edit_file
  changes one place, and a whole-file write was refused as "already exists".
* any other overwrite shorter than the file that keeps under half of its lines: held back once
  with the lines it would lose; made again unchanged it goes ahead, since replacing a whole
  file is sometimes what was asked (``Overwrite``).
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from pheron_tui.core.safety import shorten

LOST_LINES_SHOWN = 5
REWRITE_CHANGES_COMPARED = 50
REWRITE_LINES_COMPARED = 500
"""Bounds on the line-by-line comparison of a rewrite (difflib on each pair), so a big file
written anew costs milliseconds: more changed lines than this is not read as a version."""
SIMILAR = 0.75
"""How alike (difflib's ratio) a written line and a file's line must be to be one line changed."""
PYTHON_SUFFIXES = (".py", ".pyi")

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


def rewritten(old: str, new: str) -> Merge | None:
    """``new`` as the file's new text, when it is ``old`` rewritten: ``old`` has two lines or
    more, ``new`` keeps at least half of them, and each one it leaves out it has changed (the
    same name assigned or defined, or nearly the same text) or, in order, replaced; else None.
    Not for text written exactly as it is."""
    old_lines = [line.strip() for line in old.splitlines() if line.strip()]
    new_lines = [line.strip() for line in new.splitlines() if line.strip()]
    if len(old_lines) < 2 or new.strip() == old.strip():
        return None
    left = Counter(new_lines)
    lost = []
    for line in old_lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            lost.append(line)
    if 2 * len(lost) > len(old_lines) or len(lost) > REWRITE_CHANGES_COMPARED:
        return None
    # A line left out must have become one of the new ones: a version of the file, not a
    # different text that happens to share its blank-ish lines.
    written = list(left.elements())[:REWRITE_LINES_COMPARED]
    if any(not any(_same_line(line, other) for other in written) for line in lost):
        return None
    return Merge(new, "what was written is the whole file, changed: it replaced the file")


def _both_definitions(path: str, old: str, added: str) -> tuple[_Definitions, _Definitions] | None:
    """For a Python file, the definitions of ``old`` and of ``added``, when both parse and
    ``added`` is nothing but definitions; else None."""
    if PurePosixPath(path).suffix not in PYTHON_SUFFIXES:
        return None
    there, written = _definitions(old), _definitions(added)
    if there is None or written is None or not written.complete or not written.spans:
        return None
    return there, written


def added_definitions(path: str, old: str, added: str) -> Merge | None:
    """For a Python file: ``old`` with ``added`` at its end, when ``added`` is nothing but
    definitions of names ``old`` does not define; else None."""
    both = _both_definitions(path, old, added)
    if both is None:
        return None
    there, written = both
    names = written.spans.keys()
    if names & there.spans.keys():
        return None
    body = old.rstrip("\r\n")
    gap = "\n\n\n" if body else ""
    return Merge(
        body + gap + added.strip("\r\n") + "\n",
        f"the file defines none of {', '.join(names)}: added at its end; the rest of the file "
        "is kept",
    )


def merged_definitions(path: str, old: str, added: str, partial: bool = False) -> Merge | None:
    """For a Python file: ``old`` with each top-level definition in ``added`` put in place of
    its own definition of that name, when ``added`` is nothing but definitions ``old`` has,
    written differently at least once; else None. Written exactly as they are already, the
    text is ``old`` itself and the note says there was nothing to change. ``partial`` (an
    overwrite): only when ``added`` leaves out some of the file's definitions; one that has
    them all is the whole file rewritten (without an import it no longer needs)."""
    both = _both_definitions(path, old, added)
    if both is None:
        return None
    there, written = both
    names = written.spans.keys()
    if not (names < there.spans.keys() if partial else names <= there.spans.keys()):
        return None
    if names & there.twice:
        return None  # which of its two definitions would be meant is not known
    lines = old.splitlines(keepends=True)
    changed = [n for n in names if written.text(n) != there.text(n)]
    if not changed:
        listed = ", ".join(names)
        return Merge(old, f"it already defines {listed} exactly as written; nothing to change")
    # From the last to the first, so the earlier places stay where they are.
    for name in sorted(changed, key=lambda n: there.spans[n][0], reverse=True):
        start, end = there.spans[name]
        ending = "\n" if end < len(lines) or old.endswith(("\n", "\r")) else ""
        lines[start:end] = [written.text(name) + ending]
    return Merge(
        "".join(lines),
        f"{', '.join(changed)} already defined in the file: the new definition replaced the "
        "old one there; the rest of the file is kept",
    )


JSON_SUFFIXES = (".json",)


def merged_keys(path: str, old: str, added: str, partial: bool = False) -> Merge | None:
    """For a JSON file holding an object: ``old`` with the keys ``added`` gives (a JSON object,
    or its ``"key": value`` lines without the braces) set to their new values, when every one
    is a key the file has and one value differs, and the file's layout can be kept (it reads
    as ``json.dumps`` writes it, with some indent); else None. Set as they are already, the
    text is ``old`` itself and the note says there was nothing to change. ``partial`` (an
    overwrite): only when ``added`` leaves out some of the file's keys."""
    if PurePosixPath(path).suffix.lower() not in JSON_SUFFIXES:
        return None
    there, written = _json_object(old), _json_object(added, fragment=True)
    if there is None or not written:
        return None
    keys = written.keys()
    if not (keys < there.keys() if partial else keys <= there.keys()):
        return None
    layout = _json_layout(old, there)
    if layout is None:
        return None
    listed = ", ".join(keys)
    # As JSON: in Python true == 1 and 1 == 1.0, which JSON writes differently.
    changed = [key for key in keys if json.dumps(written[key]) != json.dumps(there[key])]
    if not changed:
        return Merge(old, f"it already sets {listed} exactly as written; nothing to change")
    merged = {**there, **written}
    text = layout(merged) + old[len(old.rstrip()) :]
    moves = [(key, json.dumps(there[key]), json.dumps(written[key])) for key in changed]
    return Merge(text, _set_in_place(moves))


def _set_in_place(moves: list[tuple[str, str, str]]) -> str:
    """What a merge changed, from what to what. Told "port already in the file: set to the
    new value there", the 1.5B model answered "the port is already set to 9090; no changes
    were made"."""
    said = ", ".join(
        f"{key} from {shorten(before, 60)} to {shorten(after, 60)}" for key, before, after in moves
    )
    return f"changed {said} in place; the rest of the file is kept"


SETTINGS_SUFFIXES = (".ini", ".cfg", ".conf", ".toml", ".env", ".properties")
# Run on lines a model wrote, so written not to backtrack: a value runs to its last non-space,
# a section's name is stripped in code, and a comment's spaces start where a run of them does.
_SETTING = re.compile(r"^(\s*+)([A-Za-z_][\w.-]*+)(\s*+[=:]\s*+)((?:\S(?:.*\S)?)?)\s*$")
_SECTION = re.compile(r"^\s*+\[++([^\]]*+)\]++\s*+$")
_COMMENT = re.compile(r"(?<!\s)\s++[#;]")


def merged_settings(path: str, old: str, added: str) -> Merge | None:
    """For a settings file (INI, TOML, .env…): ``old`` with the ``key = value`` lines of
    ``added`` set in place, when each names one setting the file has: by its key where only
    one section has it, under a ``[section]`` line written before it, or as ``section.key``
    / ``section_key``; else None. The file's spacing and a comment after a value are kept.
    Asked to change the cache size in config.ini, the 1.5B model overwrote the file with
    ``cache_size = 256``, and made the same call again once told what it would lose."""
    name = PurePosixPath(path).name.lower()
    if not (name.endswith(SETTINGS_SUFFIXES) or name.startswith(".env")):
        return None
    lines = old.splitlines(keepends=True)
    places = _settings(lines)
    changes: dict[int, str] = {}
    section = None
    for line in added.splitlines():
        if not line.strip():
            continue
        header, setting = _section(line), _SETTING.match(line)
        if header:
            section = header
            continue
        index = _setting_at(places, setting.group(2), section) if setting else None
        if setting is None or index is None:
            return None
        changes[index] = setting.group(4)
    if not changes:
        return None
    changed = []
    for index, value in changes.items():
        body = lines[index].rstrip("\r\n")
        indent, key, separator, rest = _SETTING.match(body).groups()  # type: ignore[union-attr]
        comment = _COMMENT.search(rest)
        cut = comment.start() if comment else len(rest)
        if _goes_on(rest[:cut]):
            return None  # a value over several lines ("deps = [") is not one line to set
        if rest[:cut] != value:
            changed.append((key, rest[:cut], value))
            ending = lines[index][len(body) :]
            lines[index] = f"{indent}{key}{separator}{value}{rest[cut:]}{ending}"
    if not changed:
        return Merge(old, "it already has these settings exactly as written; nothing to change")
    return Merge("".join(lines), _set_in_place(changed))


def _goes_on(value: str) -> bool:
    """Whether a setting's value opens a list, table or string its line does not close."""
    opened = value.count("[") + value.count("{") - value.count("]") - value.count("}")
    return opened > 0 or value.count('"""') % 2 == 1 or value.count("'''") % 2 == 1


def _section(line: str) -> str | None:
    """The name of the section a line opens (``[tool.ruff]``, ``[[servers]]``), if it opens one."""
    header = _SECTION.match(line)
    return (header.group(1).strip() or None) if header else None


def _settings(lines: list[str]) -> list[tuple[str | None, str, int]]:
    """Each setting of a settings file: its section (None before the first), key and line."""
    section, found = None, []
    for index, line in enumerate(lines):
        header = _section(line)
        if header:
            section = header
        elif (setting := _SETTING.match(line)) and not line.lstrip().startswith(("#", ";")):
            found.append((section, setting.group(2), index))
    return found


def _setting_at(
    places: list[tuple[str | None, str, int]], key: str, section: str | None
) -> int | None:
    """The line of the one setting ``key`` names (under ``section`` when one was written),
    or None when none or several do."""

    def one(matches: list[int]) -> int | None:
        return matches[0] if len(matches) == 1 else None

    def same(a: str | None, b: str) -> bool:
        return a is not None and a.lower() == b.lower()

    if section is not None:
        return one([i for s, k, i in places if same(s, section) and k == key])
    if (index := one([i for _s, k, i in places if k == key])) is not None:
        return index
    splits = [(key[:n], key[n + 1 :]) for n, c in enumerate(key) if c in "._"]
    return one([i for s, k, i in places for head, tail in splits if same(s, head) and k == tail])


def _json_object(text: str, fragment: bool = False) -> dict[str, object] | None:
    """The JSON object ``text`` holds, or (``fragment``) the one its ``"key": value`` lines
    make inside braces; None when it holds no object."""
    tries = [text]
    if fragment:
        tries.append("{" + text.strip().rstrip(",") + "}")
    for attempt in tries:
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):
            continue
        return value if isinstance(value, dict) else None
    return None


def _json_layout(text: str, value: object) -> Callable[[object], str] | None:
    """What writes ``value`` exactly as ``text`` has it (bar the whitespace at its end):
    ``json.dumps`` with one of the usual layouts, or None when none of them does."""
    body = text.rstrip()
    for indent in (2, 4, "\t", None):
        for ascii_only in (False, True):
            wide = (",", ": ") if indent is not None else (", ", ": ")
            for separators in (wide, (",", ":")):
                write = functools.partial(
                    json.dumps, indent=indent, ensure_ascii=ascii_only, separators=separators
                )
                if write(value) == body:
                    return write
    return None


_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""Characters ``str.splitlines`` breaks lines at and Python does not."""


@dataclass(frozen=True)
class _Definitions:
    """The top-level definitions of a Python text, as the parser finds them."""

    lines: list[str]
    spans: dict[str, tuple[int, int]]
    """Each name defined (a function, a class, a name assigned) and the lines ``[start,
    end)`` of its first definition, decorators included."""
    twice: set[str]
    complete: bool
    """Whether every top-level statement is such a definition."""

    def text(self, name: str) -> str:
        start, end = self.spans[name]
        return "".join(self.lines[start:end]).rstrip("\r\n")


def _definitions(text: str) -> _Definitions | None:
    """The text's top-level definitions, or None when it is not Python the parser reads."""
    if _OTHER_BREAKS.search(text):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    spans: dict[str, tuple[int, int]] = {}
    twice: set[str] = set()
    complete = True
    for node in tree.body:
        name = _defined_name(node)
        if name is None:
            complete = False
            continue
        if name in spans:
            twice.add(name)
            continue
        decorators = getattr(node, "decorator_list", [])
        start = min([node.lineno, *(d.lineno for d in decorators)]) - 1
        spans[name] = (start, node.end_lineno or node.lineno)
    return _Definitions(text.splitlines(keepends=True), spans, twice, complete)


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _same_line(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` changed: the same name assigned or defined, or nearly the
    same text."""
    named_old, named_new = _NAMED.match(old), _NAMED.match(new)
    if named_old and named_new and named_old.group(1) == named_new.group(1):
        return True
    return difflib.SequenceMatcher(None, old.strip(), new.strip()).ratio() >= SIMILAR
