"""The built-in tools: read_file, list_dir, search_files, write_file, edit_file, shell_exec."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pheron_tui.tools.registry import RiskAssessment, Tool, ToolContext, ToolRegistry, ToolResult
from pheron_tui.tools.sandbox import PathRefused, display_path, resolve_path, run_shell
from pheron_tui.tools.shell_risk import assess_shell

_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"}
_MAX_READ_BYTES = 2_000_000
# Bounds on string arguments. They are in the schemas, so a constrained call always ends: a
# weak model cannot run a string on until the reply is cut off.
PATH_CHARS = 4096
TEXT_CHARS = 200_000


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _refused(exc: PathRefused) -> ToolResult:
    return ToolResult(ok=False, observation=f"Refused: {exc}")


def _regular_file(path: Path, shown: str) -> str | None:
    """Why ``path`` cannot be read as a file, or None when it can."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"{shown} does not exist"
    except OSError as exc:
        return f"{shown} cannot be read: {exc.strerror}"
    if stat.S_ISDIR(mode):
        return f"{shown} is a directory; use list_dir"
    if not stat.S_ISREG(mode):
        return f"{shown} is not a regular file (device, socket or pipe)"
    return None


def _read_text(path: Path) -> str | None:
    """The file's text, or None when it looks binary."""
    with path.open("rb") as handle:
        data = handle.read(_MAX_READ_BYTES)
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


async def _load_text_file(ctx: ToolContext, raw: str) -> tuple[Path, str, str] | ToolResult:
    """(path, path as shown, text) of a workspace text file, or the refusal to return."""
    try:
        path = resolve_path(ctx.workspace, raw)
    except PathRefused as exc:
        return _refused(exc)
    shown = display_path(ctx.workspace, path)
    if (problem := _regular_file(path, shown)) is not None:
        return ToolResult(ok=False, observation=problem)
    text = await asyncio.to_thread(_read_text, path)
    if text is None:
        return ToolResult(ok=False, observation=f"{shown} is a binary file")
    return path, shown, text


class ReadFile(Tool):
    name = "read_file"
    description = "Read a text file in the workspace. Lines are numbered from 1."
    risk = "read"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        offset: int = Field(1, ge=1, le=10**9, description="First line to read (1-based)")
        limit: int = Field(400, ge=1, le=5000, description="How many lines to read at most")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        loaded = await _load_text_file(ctx, args.path)
        if isinstance(loaded, ToolResult):
            return loaded
        _path, shown, text = loaded
        lines = text.splitlines()
        chosen = lines[args.offset - 1 : args.offset - 1 + args.limit]
        body = "\n".join(f"{args.offset + i:>5}  {line}" for i, line in enumerate(chosen))
        last = args.offset - 1 + len(chosen)
        more = f" (lines {args.offset}-{last} of {len(lines)})" if last < len(lines) else ""
        if not lines:
            return ToolResult(ok=True, observation=f"{shown} is empty")
        return ToolResult(ok=True, observation=f"{shown}{more}:\n{body}")


class ListDir(Tool):
    name = "list_dir"
    description = "List the entries of a directory in the workspace; directories end with '/'."
    risk = "read"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(
            ".", max_length=PATH_CHARS, description="Directory, relative to the workspace"
        )

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_path(ctx.workspace, args.path)
        except PathRefused as exc:
            return _refused(exc)
        shown = display_path(ctx.workspace, path)
        if not path.is_dir():
            what = "does not exist" if not path.exists() else "is not a directory"
            return ToolResult(ok=False, observation=f"{shown} {what}")
        entries = []
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            is_dir = entry.is_dir(follow_symlinks=False)
            entries.append(entry.name + ("/" if is_dir else ""))
        if not entries:
            return ToolResult(ok=True, observation=f"{shown} is empty")
        limit = 500
        listing = "\n".join(entries[:limit])
        if len(entries) > limit:
            listing += f"\n[… {len(entries) - limit} more entries]"
        count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
        return ToolResult(ok=True, observation=f"{shown} ({count}):\n{listing}")


class SearchFiles(Tool):
    name = "search_files"
    description = (
        "Search text files under a directory for a regular expression; "
        "prints path:line: text for each match."
    )
    risk = "read"
    path_fields = ("path",)

    class Args(_Args):
        pattern: str = Field(
            max_length=1000, description="Regular expression (or plain text) to look for"
        )
        path: str = Field(
            ".", max_length=PATH_CHARS, description="Directory to search, relative to the workspace"
        )

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            root = resolve_path(ctx.workspace, args.path)
        except PathRefused as exc:
            return _refused(exc)
        try:
            regex = re.compile(args.pattern)
        except re.error:
            regex = re.compile(re.escape(args.pattern))
        matches = await asyncio.to_thread(self._search, regex, root, ctx.workspace)
        shown = display_path(ctx.workspace, root)
        if not matches:
            return ToolResult(ok=True, observation=f"no matches for {args.pattern!r} in {shown}")
        return ToolResult(ok=True, observation="\n".join(matches))

    @staticmethod
    def _search(regex: re.Pattern[str], root: Path, workspace: Path, cap: int = 200) -> list[str]:
        results: list[str] = []
        files = [root] if root.is_file() else []
        if root.is_dir():
            for folder, dirs, names in os.walk(root, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
                files.extend(Path(folder) / n for n in sorted(names))
        for file in files:
            try:
                real = resolve_path(workspace, str(file))
            except PathRefused:
                continue  # a symlink that leaves the workspace
            if not real.is_file() or real.stat().st_size > _MAX_READ_BYTES:
                continue
            try:
                text = _read_text(real)
            except OSError:
                continue
            if text is None:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    results.append(f"{display_path(workspace, file)}:{number}: {line[:300]}")
                    if len(results) >= cap:
                        results.append(f"[stopped after {cap} matches]")
                        return results
        return results


class WriteFile(Tool):
    name = "write_file"
    description = "Write a text file in the workspace, replacing it if it exists."
    risk = "write"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        content: str = Field(max_length=TEXT_CHARS, description="The whole new content of the file")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_path(ctx.workspace, args.path)
        except PathRefused as exc:
            return _refused(exc)
        shown = display_path(ctx.workspace, path)
        try:
            if path.exists() and not path.is_file():
                return ToolResult(ok=False, observation=f"{shown} exists and is not a regular file")
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(path.write_text, args.content, "utf-8")
        except OSError as exc:
            return ToolResult(ok=False, observation=f"could not write {shown}: {exc.strerror}")
        size = len(args.content.encode())
        return ToolResult(ok=True, observation=f"wrote {size} bytes to {shown}")


class EditFile(Tool):
    name = "edit_file"
    description = "Replace one exact occurrence of `old` with `new` in a text file."
    risk = "write"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        old: str = Field(
            min_length=1,
            max_length=TEXT_CHARS,
            description="Exact text to replace; must occur once",
        )
        new: str = Field(max_length=TEXT_CHARS, description="Replacement text")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        loaded = await _load_text_file(ctx, args.path)
        if isinstance(loaded, ToolResult):
            return loaded
        path, shown, text = loaded
        count = text.count(args.old)
        if count != 1:
            why = "does not occur" if count == 0 else f"occurs {count} times"
            return ToolResult(
                ok=False, observation=f"`old` {why} in {shown}; it must occur exactly once"
            )
        try:
            await asyncio.to_thread(path.write_text, text.replace(args.old, args.new), "utf-8")
        except OSError as exc:
            return ToolResult(ok=False, observation=f"could not write {shown}: {exc.strerror}")
        return ToolResult(ok=True, observation=f"edited {shown}")


class ShellExec(Tool):
    name = "shell_exec"
    description = (
        "Run a shell command in the workspace directory and return its combined output "
        "and exit code."
    )
    risk = "execute"

    class Args(_Args):
        command: str = Field(min_length=1, max_length=10_000, description="The shell command line")
        timeout_s: float | None = Field(
            None, gt=0, le=3600, description="Seconds before the command is killed"
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        found = assess_shell(args.command, ctx.workspace)
        return RiskAssessment(
            tier=found.tier,
            reasons=found.reasons,
            commands=[command.argv for command in found.parsed.commands],
        )

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        if ctx.shell_refusal:
            return ToolResult(ok=False, observation=f"Refused: {ctx.shell_refusal}")
        timeout = args.timeout_s or ctx.shell_timeout_s
        result = await run_shell(
            args.command,
            cwd=ctx.workspace,
            timeout_s=timeout,
            cap_chars=ctx.output_cap_chars,
            on_output=ctx.on_output,
            argv_prefix=ctx.shell_prefix,
        )
        output = result.output.rstrip("\n") or "(no output)"
        if result.timed_out:
            return ToolResult(
                ok=False,
                observation=f"timed out after {timeout:g} s and was killed\n{output}",
            )
        return ToolResult(
            ok=result.exit_code == 0, observation=f"exit code {result.exit_code}\n{output}"
        )


def builtin_tools() -> list[Tool]:
    return [ReadFile(), ListDir(), SearchFiles(), WriteFile(), EditFile(), ShellExec()]


def default_registry() -> ToolRegistry:
    return ToolRegistry(builtin_tools())
