"""The tools that copy, move, make and delete workspace paths."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import Field

from pheron_tui.core.tools import RiskAssessment, ToolContext, ToolResult
from pheron_tui.tools.files import (
    PathRefused,
    delete_entry,
    delete_tree,
    display_path,
    make_folder,
    move_entry,
    read_bytes,
    resolve_entry,
    resolve_path,
    write_new,
)
from pheron_tui.tools.path_tool import (
    MAX_EDIT_BYTES,
    PATH_CHARS,
    PathTool,
    StrictArgs,
    git_risk,
    missing_path_help,
    refusal_result,
)


def _source_and_destination(
    ctx: ToolContext, source: str, destination: str, resolve_source: Callable[..., Path]
) -> tuple[Path, Path, str] | ToolResult:
    """Both paths of a move or copy, checked, and ``a to b`` as shown; or the refusal."""
    try:
        start = resolve_source(ctx.workspace, source, ctx.protected)
        end = resolve_entry(ctx.workspace, destination, ctx.protected)
    except PathRefused as exc:
        return refusal_result(exc)
    return start, end, f"{display_path(ctx.workspace, start)} to {display_path(ctx.workspace, end)}"


def _into_folder(ctx: ToolContext, source: str, destination: str) -> str:
    """Where an entry goes, as ``mv`` and ``cp`` read it: a destination ending in "/" (made
    when missing) or naming a folder that exists receives the entry under its own name."""
    name = PurePosixPath(source.rstrip("/")).name
    if name in ("", ".", ".."):
        return destination  # refused later, as the path it is
    if destination.endswith("/"):
        return f"{destination.rstrip('/')}/{name}"
    try:
        end = resolve_entry(ctx.workspace, destination, ctx.protected)
        into = end.is_dir() and not end.is_symlink()
    except (PathRefused, OSError):  # a name too long: refused later, as the path it is
        return destination
    return f"{destination}/{name}" if into else destination


def _named_as_file(destination: Path, source: Path) -> str:
    """What to add when ``source.ext`` became a file named without one: a model that meant a
    folder sees it did not get one."""
    if destination.is_file() and source.suffix and not destination.suffix:
        return (
            f": {destination.name} is now the file's name (no folder of that name existed; a "
            'destination ending with "/" is a folder)'
        )
    return ""


class MovePath(PathTool):
    name = "move_path"
    description = (
        "Rename or move a file or folder in the workspace (never over an existing one). To "
        'move it into a folder, give the folder as the destination, ending with "/".'
    )
    risk = "write"
    path_fields = ("source", "destination")

    class Args(StrictArgs):
        source: str = Field(
            max_length=PATH_CHARS, description="Path to move, relative to the workspace"
        )
        destination: str = Field(
            max_length=PATH_CHARS, description="New path, relative to the workspace"
        )

    def touches(self, args: Args, ctx: ToolContext) -> list[str]:
        return [args.source, _into_folder(ctx, args.source, args.destination)]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        risks = [git_risk(self, p, ctx) for p in (args.source, args.destination)]
        return max(risks, key=lambda r: r.tier == "dangerous")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        # Refused a folder as the destination, the 1.5B model that had made the folder moved
        # nothing; without the "/" it had renamed greet.sh to a file named scripts.
        target = _into_folder(ctx, args.source, args.destination)
        ends = _source_and_destination(ctx, args.source, target, resolve_entry)
        if isinstance(ends, ToolResult):
            return ends
        source, destination, shown = ends
        try:
            await asyncio.to_thread(move_entry, ctx.workspace, source, destination)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await missing_path_help(ctx, source))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not move {shown}: {why}")
        return ToolResult(
            ok=True, observation=f"moved {shown}{_named_as_file(destination, source)}"
        )


class CopyPath(PathTool):
    name = "copy_path"
    description = "Copy a file in the workspace to a new path (never over an existing file)."
    risk = "write"
    path_fields = ("source", "destination")

    class Args(StrictArgs):
        source: str = Field(
            max_length=PATH_CHARS, description="File to copy, relative to the workspace"
        )
        destination: str = Field(
            max_length=PATH_CHARS, description="Path of the copy, relative to the workspace"
        )

    def touches(self, args: Args, ctx: ToolContext) -> list[str]:
        return [_into_folder(ctx, args.source, args.destination)]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return git_risk(self, args.destination, ctx)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        # "backup/" had been written as a file named backup: the 1.5B model, asked to copy
        # books.json into a new folder, was told the copy was made.
        target = _into_folder(ctx, args.source, args.destination)
        # The file copied is the one a link names; the copy is a new entry, never a link's end.
        ends = _source_and_destination(ctx, args.source, target, resolve_path)
        if isinstance(ends, ToolResult):
            return ends
        source, destination, shown = ends
        if source.is_dir():
            return ToolResult(
                ok=False,
                observation=f"could not copy {shown}: copy_path copies one file; for a folder, "
                "make the new folder with make_dir and copy its files one by one",
            )
        try:
            data, size = await asyncio.to_thread(
                read_bytes, ctx.workspace, source, MAX_EDIT_BYTES + 1
            )
            if size > MAX_EDIT_BYTES:
                raise PathRefused(f"it is {size:,} bytes, more than copy_path copies")
            await asyncio.to_thread(write_new, ctx.workspace, destination, data)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await missing_path_help(ctx, source))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not copy {shown}: {why}")
        return ToolResult(
            ok=True, observation=f"copied {shown}{_named_as_file(destination, source)}"
        )


class MakeDir(PathTool):
    name = "make_dir"
    description = "Create a folder in the workspace, with any missing parent folders."
    risk = "write"
    path_fields = ("path",)

    class Args(StrictArgs):
        path: str = Field(
            max_length=PATH_CHARS, description="Folder path, relative to the workspace"
        )

    def touches(self, args: Args, ctx: ToolContext) -> list[str]:
        return [args.path]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return git_risk(self, args.path, ctx)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_entry(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return refusal_result(exc)
        shown = display_path(ctx.workspace, path)
        try:
            made = await asyncio.to_thread(make_folder, ctx.workspace, path)
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not create {shown}: {why}")
        return ToolResult(
            ok=True,
            observation=f"created the folder {shown}" if made else f"{shown} already exists",
        )


class DeletePath(PathTool):
    name = "delete_path"
    description = (
        "Delete a file or a folder in the workspace; a folder with anything in it only with "
        '"recursive": true.'
    )
    risk = "write"
    path_fields = ("path",)

    class Args(StrictArgs):
        path: str = Field(
            max_length=PATH_CHARS, description="Path to delete, relative to the workspace"
        )
        recursive: bool = Field(
            False, description="Also delete everything inside the folder (asked for by name)"
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        assessed = git_risk(self, args.path, ctx)
        if args.recursive and assessed.tier != "dangerous":
            # Asked "remove the old folder and everything in it", the 1.5B model deleted one
            # of its files and stopped: a folder goes in one call, and that call always asks.
            try:
                path = resolve_entry(ctx.workspace, args.path, ctx.protected)
                full = False
                if path.is_dir() and not path.is_symlink():
                    with os.scandir(path) as entries:
                        full = any(entries)
            except (PathRefused, OSError):
                full = False
            if full:
                shown = display_path(ctx.workspace, path)
                return RiskAssessment("dangerous", [f"deletes {shown} and everything in it"])
        return assessed

    def touches(self, args: Args, ctx: ToolContext) -> list[str]:
        return [args.path]

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_entry(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return refusal_result(exc)
        shown = display_path(ctx.workspace, path)
        try:
            if args.recursive and path.is_dir() and not path.is_symlink():
                if any(place.is_relative_to(path) for place in ctx.protected):
                    # The folder holds pheron-tui's own files or the user's secrets.
                    why = f"{shown} holds a place tools may not touch; it is not deleted"
                    return ToolResult(ok=False, observation=why)
                removed = await asyncio.to_thread(delete_tree, ctx.workspace, path)
                inside = f"{removed} entr{'y' if removed == 1 else 'ies'}"
                return ToolResult(
                    ok=True, observation=f"deleted the folder {shown} and {inside} in it"
                )
            kind = await asyncio.to_thread(delete_entry, ctx.workspace, path)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await missing_path_help(ctx, path))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not delete {shown}: {why}")
        return ToolResult(ok=True, observation=f"deleted the {kind} {shown}")
