"""``@file`` mentions: the workspace files a picker offers, and attaching those a message names.

The picker lists what git would track: files under the workspace minus what its
``.gitignore`` files ignore (and the folders no one wants to pick from: .git, virtual
environments, caches). A mentioned file is read the way read_file reads it and attached to the
message, cut to a size that says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pheron_tui.core.limits import SKIPPED_FOLDERS
from pheron_tui.tools.files import PathRefused, display_path, read_bytes, resolve_path

if TYPE_CHECKING:  # imported when the picker lists files, not before the first frame
    import pathspec

ATTACH_CHARS = 20_000
"""Each attached file is cut to this many characters (the message says so)."""
MAX_LISTED = 20_000
MENTION = re.compile(r"(?<!\S)@(\S+)")


def workspace_files(workspace: Path, limit: int = MAX_LISTED) -> list[str]:
    """Workspace files relative to it, sorted, without what .gitignore files ignore."""
    root = workspace.resolve()
    found: list[str] = []
    # Each folder's ignore rules, with the folder they are relative to.
    specs: dict[Path, list[tuple[Path, pathspec.PathSpec]]] = {root: _ignores(root, [])}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rules = specs.pop(here, [])
        kept_dirs = []
        for name in sorted(dirs):
            path = here / name
            if name in SKIPPED_FOLDERS or _ignored(path, rules, folder=True):
                continue
            kept_dirs.append(name)
            specs[path] = _ignores(path, rules)
        dirs[:] = kept_dirs
        for name in sorted(files):
            path = here / name
            if not _ignored(path, rules, folder=False):
                found.append(path.relative_to(root).as_posix())
                if len(found) >= limit:
                    return found
    return sorted(found)


def _ignores(
    folder: Path, inherited: list[tuple[Path, pathspec.PathSpec]]
) -> list[tuple[Path, pathspec.PathSpec]]:
    import pathspec

    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return inherited
    return [*inherited, (folder, pathspec.GitIgnoreSpec.from_lines(lines))]


def _ignored(path: Path, rules: list[tuple[Path, pathspec.PathSpec]], folder: bool) -> bool:
    for base, spec in rules:
        relative = path.relative_to(base).as_posix() + ("/" if folder else "")
        if spec.match_file(relative):
            return True
    return False


@dataclass
class Attached:
    files: list[tuple[str, str]] = field(default_factory=list)
    """(path as shown, text) of each file attached."""
    notes: list[str] = field(default_factory=list)
    """What was attached and what was cut or left out, for the user."""


def attach_mentions(text: str, workspace: Path, protected: tuple[Path, ...] = ()) -> Attached:
    """The workspace files the message names as ``@path``, read to be attached to it.
    Mentions of anything else (``@property``, an e-mail) are left as they are."""
    attached = Attached()
    for raw in dict.fromkeys(MENTION.findall(text)):
        raw = raw.rstrip(".,;:!?)")
        try:
            path = resolve_path(workspace, raw, protected)
            if not path.is_file():
                continue
            data, size = read_bytes(workspace, path, ATTACH_CHARS * 4)
        except (OSError, PathRefused):
            continue
        shown = display_path(workspace, path)
        if b"\x00" in data[:8192]:
            attached.notes.append(f"@{shown} is a binary file; not attached")
            continue
        content = data.decode("utf-8", errors="replace")
        whole = len(content) if size == len(data) else None
        if len(content) > ATTACH_CHARS or whole is None:
            content = content[:ATTACH_CHARS]
            attached.notes.append(
                f"@{shown}: the first {ATTACH_CHARS:,} characters attached "
                f"(the file is {size:,} bytes)"
            )
        else:
            attached.notes.append(f"@{shown} attached ({len(content):,} characters)")
        attached.files.append((shown, content))
    return attached
