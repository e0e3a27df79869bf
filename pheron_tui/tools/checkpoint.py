"""Saving workspace paths before a tool changes them, and putting them back (a rewind).

Only regular files and folders are kept; links and special files are left as they are and
the checkpoint says it is incomplete. Everything is read and written the race-free way the
tools use (``tools/files.py``), so a rewind cannot be steered outside the workspace either.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core.events import SavedFile
from pheron_tui.tools.files import (
    PathRefused,
    delete_tree,
    display_path,
    list_folder,
    read_bytes,
    resolve_entry,
    write_atomic,
)

MAX_FILE_BYTES = 16_000_000
MAX_FILES = 500
"""A folder with more than this in it is saved only in part (the checkpoint says so)."""


def snapshot(
    workspace: Path, protected: tuple[Path, ...], raw_paths: list[str], put: Callable[[bytes], str]
) -> tuple[list[SavedFile], bool]:
    """Each path (a folder with what is in it) as it is now; True when all was saved."""
    saved: list[SavedFile] = []
    complete = True
    pending = []
    for raw in raw_paths:
        try:
            pending.append(resolve_entry(workspace, raw, protected))
        except PathRefused:
            complete = False  # the tool refuses it too; nothing will change there
    while pending:
        path = pending.pop(0)
        shown = display_path(workspace, path)
        try:
            info = path.lstat()
        except FileNotFoundError:
            saved.append(SavedFile(path=shown, kind="missing"))
            continue
        except OSError:
            complete = False
            continue
        if len(saved) >= MAX_FILES:
            complete = False
            break
        if stat.S_ISDIR(info.st_mode):
            saved.append(SavedFile(path=shown, kind="folder"))
            try:
                pending.extend(path / entry.name for entry in list_folder(workspace, path))
            except (OSError, PathRefused):
                complete = False
        elif stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
            try:
                data, _size = read_bytes(workspace, path, MAX_FILE_BYTES)
            except (OSError, PathRefused):
                complete = False
                continue
            saved.append(SavedFile(path=shown, kind="file", blob=put(data)))
        else:
            complete = False  # a link, a device, a file too big to keep
    return saved, complete


@dataclass
class Restored:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    """Each as ``path: why``."""


def restore(
    workspace: Path,
    protected: tuple[Path, ...],
    states: dict[str, SavedFile],
    get: Callable[[str], bytes],
) -> Restored:
    """Put every path back as ``states`` has it: folders made, files written, and what did
    not exist then removed (deepest first, a folder only once it is empty)."""
    report = Restored()
    ordered = sorted(states.values(), key=lambda s: s.path.count("/"))
    for state in ordered:
        if state.kind == "missing":
            continue
        try:
            path = resolve_entry(workspace, state.path, protected)
            if state.kind == "folder":
                path.mkdir(parents=True, exist_ok=True)
            else:
                data = get(state.blob)
                if _current(workspace, path) != data:
                    write_atomic(workspace, path, data)
                    report.restored.append(state.path)
        except (OSError, PathRefused, KeyError) as exc:
            report.failed.append(f"{state.path}: {_why(exc)}")
    for state in sorted(ordered, key=lambda s: -s.path.count("/")):
        if state.kind != "missing":
            continue
        try:
            path = resolve_entry(workspace, state.path, protected)
            delete_tree(workspace, path)  # it did not exist then, nor what is in it
            report.removed.append(state.path)
        except FileNotFoundError:
            pass
        except (OSError, PathRefused) as exc:
            report.failed.append(f"{state.path}: {_why(exc)}")
    return report


def _current(workspace: Path, path: Path) -> bytes | None:
    try:
        data, size = read_bytes(workspace, path, MAX_FILE_BYTES + 1)
    except (OSError, PathRefused):
        return None
    return data if size == len(data) else None


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return "its saved copy is missing from the checkpoint store"
    return getattr(exc, "strerror", None) or str(exc)
