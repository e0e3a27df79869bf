"""What the tools on workspace paths share: strict arguments, loading a file or the
refusal to show, help for a path that is not there, and what the model has seen of a file."""

from __future__ import annotations

import asyncio
import difflib
import fnmatch
import glob
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from pydantic import BaseModel, ConfigDict

from pheron_tui.core.limits import SKIPPED_FOLDERS
from pheron_tui.core.tools import LIKELY_MEANT, RiskAssessment, Tool, ToolContext, ToolResult
from pheron_tui.tools.files import (
    PathRefused,
    display_path,
    list_folder,
    read_bytes,
    resolve_path,
)

# read_file shows at most this much of a file; edit_file refuses larger files rather than
# writing back less than it read.
MAX_READ_BYTES = 2_000_000
MAX_EDIT_BYTES = 16_000_000
# Bounds on string arguments. They are in the schemas, so a constrained call always ends: a
# weak model cannot run a string on until the reply is cut off.
PATH_CHARS = 4096
TEXT_CHARS = 200_000


class StrictArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def refusal_result(exc: PathRefused) -> ToolResult:
    return ToolResult(ok=False, observation=f"Refused: {exc}")


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


Loaded = tuple[Path, str, bytes, int]


@overload
async def load_file(ctx: ToolContext, raw: str, limit: int) -> Loaded | ToolResult: ...
@overload
async def load_file(
    ctx: ToolContext, raw: str, limit: int, missing_ok: Literal[True]
) -> Loaded | ToolResult | None: ...
async def load_file(
    ctx: ToolContext, raw: str, limit: int, missing_ok: bool = False
) -> Loaded | ToolResult | None:
    """(path, path as shown, up to ``limit`` bytes, whole size) of a workspace file, or the
    refusal to return; None for a file that does not exist when ``missing_ok``."""
    try:
        path = resolve_path(ctx.workspace, raw, ctx.protected)
    except PathRefused as exc:
        return refusal_result(exc)
    shown = display_path(ctx.workspace, path)
    try:
        data, size = await asyncio.to_thread(read_bytes, ctx.workspace, path, limit)
    except FileNotFoundError:
        if missing_ok:
            return None
        inside = inside_own_name(ctx, raw)
        if inside is not None:
            # "project/config.py" in a workspace called project: the model named the
            # workspace itself as a folder in it. The file it meant is there.
            return await load_file(ctx, inside, limit)
        return ToolResult(ok=False, observation=await missing_path_help(ctx, path))
    except PathRefused as exc:
        return ToolResult(ok=False, observation=f"{shown}: {exc}")
    except OSError as exc:
        return ToolResult(ok=False, observation=f"{shown} cannot be read: {exc.strerror}")
    if looks_binary(data):
        return ToolResult(ok=False, observation=f"{shown} is a binary file")
    return path, shown, data, size


def file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def mark_seen(ctx: ToolContext, path: Path) -> None:
    """The model has been shown this file as it is now (``ToolContext.seen``)."""
    stamp = file_stamp(path)
    if stamp is not None:
        ctx.seen[path] = stamp


def seen_as_is(ctx: ToolContext, path: Path) -> bool:
    return path in ctx.seen and ctx.seen[path] == file_stamp(path)


def relative_path(ctx: ToolContext, path: Path) -> str:
    """A resolved workspace path as a relative one, whole (to write to, not to show)."""
    return path.relative_to(ctx.workspace.resolve()).as_posix()


def inside_own_name(ctx: ToolContext, raw: str) -> str | None:
    """``raw`` without a first folder named like the workspace itself, when that folder is
    not in the workspace and the rest is an existing file there; else None."""
    first, _, rest = raw.removeprefix("./").partition("/")
    root = ctx.workspace.resolve()
    if not rest or first != root.name or (root / first).exists():
        return None
    try:
        return rest if resolve_path(ctx.workspace, rest, ctx.protected).is_file() else None
    except PathRefused:
        return None


async def missing_path_help(ctx: ToolContext, path: Path) -> str:
    """Why ``path`` could not be used, and where to look instead: files of that name
    elsewhere, or else what the nearest folder that exists holds. A small model that guessed a
    path otherwise tries the same guess again, or gives up."""
    shown = display_path(ctx.workspace, path)
    if pattern := name_pattern(path.name):
        # Told to delete every .log file, the 1.5B model called delete_path(".log"), twice.
        found = await asyncio.to_thread(same_name, ctx, pattern, limit=20)
        if found:
            # Told only which files match, it made the same call again: the way is said.
            return (
                f"{shown} does not exist: a path names one file;{LIKELY_MEANT}{found[0]}? "
                f"Make one call for each of the files matching {pattern!r} here: "
                f"{', '.join(found)}"
            )
    found = await asyncio.to_thread(same_name, ctx, path.name)
    if found:
        # Named as the likely entry, so an answer right after it is sent back to correct the
        # call: told only where test_units.py is, the 1.5B model answered "test_units.py is
        # the correct file to test".
        return (
            f"{shown} does not exist;{LIKELY_MEANT}{found[0]}? Files with that name here: "
            f"{', '.join(found)}"
        )
    if path.name and "." not in path.name:
        # Asked for the omelette's ingredients, the 1.5B model listed "omelette"; the
        # recipe was recipes/omelette.json.
        found = await asyncio.to_thread(same_name, ctx, glob.escape(path.name) + ".*")
        if found:
            return (
                f"{shown} does not exist;{LIKELY_MEANT}{found[0]}? Files named "
                f"{path.name}.* here: {', '.join(found)}"
            )
    nearby = await asyncio.to_thread(nearest_folder, ctx, path)
    if nearby is None:
        return f"{shown} does not exist"
    folder, entries, more = nearby
    listed = ", ".join(entries) + (f" and {more} more" if more else "") if entries else "nothing"
    meant = near_names(path.name, entries)
    guess = f"{LIKELY_MEANT}{' or '.join(meant)}?" if meant else ""
    return f"{shown} does not exist;{guess} {folder} holds: {listed}"


def near_names(name: str, entries: Sequence[str]) -> list[str]:
    """The entries ``name`` most likely meant: one spelled nearly alike, one whose name is a
    word of it ("the old folder" guessed as old_folder, for old/), or one whose name has a
    word of it, plural or not (the folder "tests" guessed for test_units.py). Up to two."""
    plain = {entry.rstrip("/").lower(): entry for entry in entries}
    close = difflib.get_close_matches(name.lower(), list(plain), n=2, cutoff=0.75)
    guessed = _stem_words(name)
    whole = [w for w in guessed if w in plain]
    shared = [entry for entry in plain if guessed & _stem_words(entry)]
    return list(dict.fromkeys(plain[w] for w in [*close, *whole, *shared]))[:2]


def _stem_words(name: str) -> set[str]:
    """The words of a name without its extension, each also without a plural "s"."""
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    words = {w for w in re.split(r"[\W_]+", stem.lower()) if len(w) >= 3}
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}


def entry_names(entries: Iterable[os.DirEntry[str]]) -> list[str]:
    """Folder entries by name, folders (not links to them) ending in "/"."""
    return [
        entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
        for entry in sorted(entries, key=lambda e: e.name)
    ]


NEARBY_SHOWN = 30
"""Entries named, at most, from the nearest folder of a path that does not exist."""


def nearest_folder(ctx: ToolContext, path: Path) -> tuple[str, list[str], int] | None:
    """The nearest existing folder above ``path`` in the workspace (as shown), up to
    ``NEARBY_SHOWN`` of its entries (folders end in "/"), and how many more there are."""
    root = ctx.workspace.resolve()
    folder = path.parent
    while folder != root and not folder.is_dir():
        folder = folder.parent
    if not folder.is_relative_to(root) or any(folder.is_relative_to(p) for p in ctx.protected):
        return None
    try:
        found = list_folder(ctx.workspace, folder)  # links in the way are refused, not followed
    except (PathRefused, OSError):
        return None
    names = entry_names(
        entry
        for entry in found
        if entry.name not in SKIPPED_FOLDERS
        and not any((folder / entry.name).is_relative_to(p) for p in ctx.protected)
    )
    shown = display_path(ctx.workspace, folder)
    return shown, names[:NEARBY_SHOWN], max(len(names) - NEARBY_SHOWN, 0)


SAME_NAME_LOOKS = 2000
"""Entries looked at, at most, for a file with the name of one that does not exist."""


_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}")


def is_glob(name: str) -> bool:
    """Whether a name is a file-name pattern (``*.log``) rather than a name."""
    return any(c in name for c in "*?[")


def name_pattern(name: str) -> str | None:
    """The file-name pattern a missing name stands for, or None: a glob as written
    (``*.log``), or ``*.log`` for a bare extension (``.log``)."""
    if is_glob(name):
        return name
    return f"*{name}" if _EXTENSION.fullmatch(name) else None


def same_name(ctx: ToolContext, name: str, limit: int = 5) -> list[str]:
    """Workspace files called ``name``, or matching it when it is a pattern (``*.log``): a
    small model guesses ``src/config.py`` for ``config.py``, and telling it where the file is
    saves a step or a wrong answer."""
    root = ctx.workspace.resolve()
    found: list[str] = []
    seen = 0
    pattern = is_glob(name)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        names = fnmatch.filter(sorted(files), name) if pattern else [name] if name in files else []
        for match in names:
            path = Path(folder) / match
            if not any(path.is_relative_to(p) for p in ctx.protected):
                found.append(path.relative_to(root).as_posix())
        if len(found) >= limit:
            del found[limit:]
            break
        seen += len(dirs) + len(files)
        if seen >= SAME_NAME_LOOKS:
            break
    return found


class PathTool(Tool):
    """A tool whose arguments name files: each must stay in the workspace and out of protected
    places, checked before anyone is asked."""

    path_fields: ClassVar[tuple[str, ...]] = ()
    on_workspace = True

    def refusal(self, args: Any, ctx: ToolContext) -> str | None:
        for name in self.path_fields:
            value = getattr(args, name, None)
            if value is None:
                continue
            try:
                resolve_path(ctx.workspace, value, ctx.protected)
            except PathRefused as exc:
                return f"Refused: {exc}"
        return None


def git_risk(tool: Tool, path: str, ctx: ToolContext) -> RiskAssessment:
    """Writing into a repository's .git folder (hooks, config) is a way to run commands later:
    it always asks."""
    try:
        resolved = resolve_path(ctx.workspace, path, ctx.protected)
    except PathRefused:
        return RiskAssessment(tool.risk)  # refused before anyone is asked
    if ".git" in resolved.relative_to(ctx.workspace.resolve()).parts:
        return RiskAssessment(
            "dangerous", [f"writes into .git, whose hooks and config run commands ({path})"]
        )
    return RiskAssessment(tool.risk)
