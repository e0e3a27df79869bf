"""A workspace file's text, read only when it is plainly one of the workspace's files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from pheron_tui.core.limits import SKIPPED_FOLDERS

WALK_LIMIT = 2000
"""Entries looked at, at most, by a walk of the workspace for a name the message gives."""
READ_LIMIT = 4_000_000
"""Bytes of workspace text read, at most, by such a walk."""
FILE_LIMIT = 256_000
"""Larger files are not read by the guards and hints (code and data files are smaller)."""


def workspace_text(workspace: Path, relative: str, limit: int) -> str | None:
    """The text of the file ``relative`` below ``workspace`` (undecodable bytes replaced), or
    None when it is no regular file of the workspace: missing, a folder, a link (whose target
    may be anywhere), outside it, larger than ``limit`` bytes, or unreadable. For the guards
    and hints that look at a file the message names before any tool call does."""
    path = workspace / relative
    try:
        if (
            path.is_symlink()
            or not path.resolve().is_relative_to(workspace.resolve())
            or not path.is_file()
            or path.stat().st_size > limit
        ):
            return None
        return path.read_text(errors="replace")
    except (OSError, ValueError):
        return None


def walk_folders(workspace: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` of the workspace, folders sorted, hidden and skipped ones (``.git``,
    ``node_modules``…) left out, stopping once ``WALK_LIMIT`` entries have been seen: for a
    look for the names a message gives."""
    seen = 0
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        yield folder, dirs, files
        seen += len(dirs) + len(files)
        if seen >= WALK_LIMIT:
            return


def workspace_files(
    workspace: Path, wanted: Callable[[str], bool] = lambda _relative: True
) -> Iterator[tuple[str, bytes]]:
    """The regular files below ``workspace`` whose relative path ``wanted`` takes, with their
    bytes, in sorted walk order: no links, nothing in hidden or skipped folders (``.git``,
    ``node_modules``…), none larger than ``FILE_LIMIT``, no FIFO (reading one waits forever).
    The walk stops after ``WALK_LIMIT`` entries or ``READ_LIMIT`` bytes."""
    seen = read = 0
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if seen > WALK_LIMIT or read >= READ_LIMIT:
                return
            path = Path(folder, name)
            relative = path.relative_to(workspace).as_posix()
            if not wanted(relative):
                continue
            try:
                if path.is_symlink() or not path.is_file() or path.stat().st_size > FILE_LIMIT:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            read += len(data)
            yield relative, data
