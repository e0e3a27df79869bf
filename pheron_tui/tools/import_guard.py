"""Whether a change to a Python file takes away a name another file of the workspace imports.

Told to make ``python3 test_units.py`` pass, the 1.5B model "fixed" ``km_to_miles`` by renaming
it ``km_to_miles_corrected``; the check then failed on its import, and the model answered that
it passed. A change after which the file no longer defines, at its top level, a name that
another Python file imports from it (``from units import km_to_miles``, ``units.km_to_miles``)
is held back once with where it is used; made again, it goes ahead (a rename may be meant,
its users changed next). When the user is the check the request names, which the work may
not change, it is refused every time: renamed anyway, the check failed on its import.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from pheron_tui.core.limits import SKIPPED_FOLDERS
from pheron_tui.core.python_source import parsed

FILES_LOOKED_AT = 2000
FILE_LIMIT = 256_000


def top_level_names(text: str) -> set[str] | None:
    """The names a Python text defines at its top level; None if it does not parse."""
    tree = parsed(text)
    if tree is None:
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


class LostName(NamedTuple):
    why: str
    """In sentences: the name, the file that uses it, what to do."""
    final: bool
    """The user is a file the turn keeps as it is (``ToolContext.kept``): its use can never be
    changed after, so the change is refused every time, not held once."""


def lost_import(
    workspace: Path, target: str, before: str, after: str, kept: Collection[str] = ()
) -> LostName | None:
    """Why the change of ``target`` (a path from the workspace root) from ``before`` to
    ``after`` breaks another file's import; else None. A use in a file of ``kept`` (the
    check a request names, which the work may not change) is said first."""
    if PurePosixPath(target).suffix != ".py":
        return None
    had, has = top_level_names(before), top_level_names(after)
    if had is None or has is None or not (lost := had - has):
        return None
    module = PurePosixPath(target).stem
    if module == "__init__":
        module = PurePosixPath(target).parent.name
    if not module.isidentifier():
        return None
    first: tuple[str, str, int] | None = None
    for path, name, line in _users(workspace, target, module, lost):
        if path in kept:
            return LostName(
                f"after this change {target} would no longer define {name}, which {path} "
                f"uses (line {line}), and {path} is the check the request names, which stays "
                f"as it is: the check could never pass. Keep the name {name} and change what "
                f"it does.{_lines_of(before, name)}",
                final=True,
            )
        first = first or (path, name, line)
        if not kept:
            break
    if first is None:
        return None
    path, name, line = first
    return LostName(
        f"after this change {target} would no longer define {name}, which {path} uses "
        f"(line {line}), so it would fail. Change what {name} does and keep its name; if the "
        "name must change, make the same call again and then change where it is used.",
        final=False,
    )


SHOWN_LINES = 15
"""Lines of a definition shown, at most, when a change may not take its name away."""


def _lines_of(text: str, name: str) -> str:
    """What to change and the lines of the top-level function or class ``name`` of ``text``,
    as the file has them; "" when it is not found or longer than ``SHOWN_LINES``. Told only
    to keep the name, the 1.5B model made the same rename again."""
    tree = parsed(text)
    node = next(
        (
            n
            for n in (tree.body if tree is not None else [])
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and n.name == name
        ),
        None,
    )
    if node is None or not node.end_lineno or node.end_lineno - node.lineno >= SHOWN_LINES:
        return ""
    lines = text.splitlines()[node.lineno - 1 : node.end_lineno]
    return (
        " Change a line of its body, exactly as the file has it (an edit's `old`), into what "
        "it should be. Its lines:\n" + "\n".join(lines)
    )


def _users(workspace: Path, target: str, module: str, lost: set[str]):
    """(path, name, line) for each use of a lost name through ``module`` in the other Python
    files of the workspace."""
    names = "|".join(re.escape(n) for n in sorted(lost))
    uses = re.compile(
        rf"^\s*from\s+(?:[\w.]*\.)?{module}\s+import\s+[^\n]*?\b(?P<a>{names})\b"
        rf"|\b{module}\.(?P<b>{names})\b",
        re.MULTILINE,
    )
    root = workspace.resolve()
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        for file in sorted(files):
            seen += 1
            if seen > FILES_LOOKED_AT:
                return
            path = Path(folder, file)
            shown = path.relative_to(root).as_posix()
            if not file.endswith(".py") or shown == target:
                continue
            try:
                if path.is_symlink() or path.stat().st_size > FILE_LIMIT:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for match in uses.finditer(text):
                name = match.group("a") or match.group("b")
                yield shown, name, text.count("\n", 0, match.start()) + 1


def warning_key(target: str, after: str) -> tuple[str, ...]:
    """What identifies this change (``ToolContext.warned``): made again, it goes ahead."""
    return ("lost import", target, hashlib.sha256(after.encode("utf-8", "replace")).hexdigest())
