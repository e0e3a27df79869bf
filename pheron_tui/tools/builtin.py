"""The built-in tools: read_file, list_dir, search_files, write_file, edit_file, shell_exec."""

from __future__ import annotations

import asyncio
import csv
import os
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    import regex

from pheron_tui.core.diffs import FileChange
from pheron_tui.core.limits import SKIPPED_FOLDERS
from pheron_tui.core.tools import RiskAssessment, Tool, ToolContext, ToolRegistry, ToolResult
from pheron_tui.tools.files import (
    PathRefused,
    delete_entry,
    display_path,
    list_folder,
    make_folder,
    move_entry,
    read_bytes,
    resolve_entry,
    resolve_path,
    write_atomic,
    write_new,
)
from pheron_tui.tools.sandbox import run_shell
from pheron_tui.tools.shell_risk import assess_shell

# read_file shows at most this much of a file; edit_file refuses larger files rather than
# writing back less than it read.
_MAX_READ_BYTES = 2_000_000
_MAX_EDIT_BYTES = 16_000_000
# A search is cut off after this long, and so is one line that takes longer than
# LINE_BUDGET_S to match: a pattern that backtracks without end cannot freeze the app, and a
# cancelled search's thread ends within a second.
SEARCH_BUDGET_S = 10.0
LINE_BUDGET_S = 1.0
# Bounds on string arguments. They are in the schemas, so a constrained call always ends: a
# weak model cannot run a string on until the reply is cut off.
PATH_CHARS = 4096
TEXT_CHARS = 200_000


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _refused(exc: PathRefused) -> ToolResult:
    return ToolResult(ok=False, observation=f"Refused: {exc}")


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


_Loaded = tuple[Path, str, bytes, int]


@overload
async def _load(ctx: ToolContext, raw: str, limit: int) -> _Loaded | ToolResult: ...
@overload
async def _load(
    ctx: ToolContext, raw: str, limit: int, missing_ok: Literal[True]
) -> _Loaded | ToolResult | None: ...
async def _load(
    ctx: ToolContext, raw: str, limit: int, missing_ok: bool = False
) -> _Loaded | ToolResult | None:
    """(path, path as shown, up to ``limit`` bytes, whole size) of a workspace file, or the
    refusal to return; None for a file that does not exist when ``missing_ok``."""
    try:
        path = resolve_path(ctx.workspace, raw, ctx.protected)
    except PathRefused as exc:
        return _refused(exc)
    shown = display_path(ctx.workspace, path)
    try:
        data, size = await asyncio.to_thread(read_bytes, ctx.workspace, path, limit)
    except FileNotFoundError:
        if missing_ok:
            return None
        inside = _inside_own_name(ctx, raw)
        if inside is not None:
            # "project/config.py" in a workspace called project: the model named the
            # workspace itself as a folder in it. The file it meant is there.
            return await _load(ctx, inside, limit)
        return ToolResult(ok=False, observation=await _missing(ctx, path))
    except PathRefused as exc:
        return ToolResult(ok=False, observation=f"{shown}: {exc}")
    except OSError as exc:
        return ToolResult(ok=False, observation=f"{shown} cannot be read: {exc.strerror}")
    if _looks_binary(data):
        return ToolResult(ok=False, observation=f"{shown} is a binary file")
    return path, shown, data, size


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _saw(ctx: ToolContext, path: Path) -> None:
    """The model has been shown this file as it is now (``ToolContext.seen``)."""
    stamp = _stamp(path)
    if stamp is not None:
        ctx.seen[path] = stamp


def _seen_as_is(ctx: ToolContext, path: Path) -> bool:
    return path in ctx.seen and ctx.seen[path] == _stamp(path)


def _relative(ctx: ToolContext, path: Path) -> str:
    """A resolved workspace path as a relative one, whole (to write to, not to show)."""
    return path.relative_to(ctx.workspace.resolve()).as_posix()


def _inside_own_name(ctx: ToolContext, raw: str) -> str | None:
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


async def _missing(ctx: ToolContext, path: Path) -> str:
    """Why ``path`` could not be used, and where to look instead: files of that name
    elsewhere, or else what the nearest folder that exists holds. A small model that guessed a
    path otherwise tries the same guess again, or gives up."""
    shown = display_path(ctx.workspace, path)
    found = await asyncio.to_thread(_same_name, ctx, path.name)
    if found:
        return f"{shown} does not exist; files with that name here: {', '.join(found)}"
    nearby = await asyncio.to_thread(_nearest_folder, ctx, path)
    if nearby is None:
        return f"{shown} does not exist"
    folder, entries, more = nearby
    listed = ", ".join(entries) + (f" and {more} more" if more else "") if entries else "nothing"
    return f"{shown} does not exist; {folder} holds: {listed}"


def _entry_names(entries: Iterable[os.DirEntry[str]]) -> list[str]:
    """Folder entries by name, folders (not links to them) ending in "/"."""
    return [
        entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
        for entry in sorted(entries, key=lambda e: e.name)
    ]


NEARBY_SHOWN = 30
"""Entries named, at most, from the nearest folder of a path that does not exist."""


def _nearest_folder(ctx: ToolContext, path: Path) -> tuple[str, list[str], int] | None:
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
    names = _entry_names(
        entry
        for entry in found
        if entry.name not in SKIPPED_FOLDERS
        and not any((folder / entry.name).is_relative_to(p) for p in ctx.protected)
    )
    shown = display_path(ctx.workspace, folder)
    return shown, names[:NEARBY_SHOWN], max(len(names) - NEARBY_SHOWN, 0)


SAME_NAME_LOOKS = 2000
"""Entries looked at, at most, for a file with the name of one that does not exist."""


def _same_name(ctx: ToolContext, name: str, limit: int = 5) -> list[str]:
    """Workspace files called ``name`` (a small model guesses ``src/config.py`` for
    ``config.py``): telling it where the file is saves a step or a wrong answer."""
    root = ctx.workspace.resolve()
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        if name in files:
            path = Path(folder) / name
            if not any(path.is_relative_to(p) for p in ctx.protected):
                found.append(path.relative_to(root).as_posix())
                if len(found) >= limit:
                    break
        seen += len(dirs) + len(files)
        if seen >= SAME_NAME_LOOKS:
            break
    return found


class _PathTool(Tool):
    """A tool whose arguments name files: each must stay in the workspace and out of protected
    places, checked before anyone is asked."""

    path_fields: ClassVar[tuple[str, ...]] = ()

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


class ReadFile(_PathTool):
    name = "read_file"
    description = "Read a text file in the workspace. Lines are numbered from 1."
    risk = "read"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        offset: int = Field(1, ge=1, le=10**9, description="First line to read (1-based)")
        limit: int = Field(400, ge=1, le=5000, description="How many lines to read at most")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        loaded = await _load(ctx, args.path, _MAX_READ_BYTES)
        if isinstance(loaded, ToolResult):
            return loaded
        path, shown, data, size = loaded
        _saw(ctx, path)
        return ToolResult(ok=True, observation=_as_read(shown, data, size, args.offset, args.limit))


READ_LINES = 400
"""Lines read_file shows unless told otherwise."""


def _as_read(shown: str, data: bytes, size: int, offset: int = 1, limit: int = READ_LINES) -> str:
    """A file's text as read_file shows it: a head naming the file and its lines, then the
    lines numbered from 1, then notes on anything cut or undecodable."""
    data = data[:_MAX_READ_BYTES]
    notes = []
    if size > len(data):
        notes.append(f"only the first {len(data):,} of {size:,} bytes are shown")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # A cut at the limit may split a character; anything else is not UTF-8.
        text = data.decode("utf-8", errors="replace")
        if size == len(data) or "\ufffd" in text[:-1]:
            notes.append("it is not valid UTF-8: undecodable bytes are shown as \ufffd")
    lines = text.splitlines()
    if lines and offset > len(lines):
        # Small models guess offsets; reading nothing led them to say the code is not
        # there. The file from its start is what they were after.
        notes.append(f"line {offset} is past the end ({len(lines)} lines): shown from line 1")
        offset = 1
    chosen = lines[offset - 1 : offset - 1 + limit]
    body = "\n".join(f"{offset + i:>5}  {line}" for i, line in enumerate(chosen))
    last = offset - 1 + len(chosen)
    if not lines:
        return f"{shown} is empty"
    # The count said outright: asked "how many lines", a small model otherwise guesses.
    total = f"{len(lines):,}{'+' if size > len(data) else ''}"
    whole = offset == 1 and last == len(lines)
    count = f"{total} line{'s' * (total != '1')}" if whole else f"lines {offset}-{last} of {total}"
    if whole and size == len(data) and _has_header_row(shown, text):
        # Asked how many data rows a CSV has, a small model gives its line count.
        rows = sum(1 for line in lines[1:] if line.strip())
        count += f": a header and {rows} data row{'s' * (rows != 1)}"
    noted = "".join(f"\n[{note}]" for note in notes)
    return f"{shown} ({count}):\n{body}{noted}"


def _has_header_row(shown: str, text: str) -> bool:
    """Whether a CSV or TSV file opens with a header row (the standard library's guess)."""
    if not shown.lower().endswith((".csv", ".tsv")):
        return False
    try:
        return csv.Sniffer().has_header(text[:2048])  # a few rows tell; bounded time
    except csv.Error:
        return False


class ListDir(_PathTool):
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
            path = resolve_path(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return _refused(exc)
        shown = display_path(ctx.workspace, path)
        if not path.exists():
            return ToolResult(ok=False, observation=await _missing(ctx, path))
        if not path.is_dir():
            return ToolResult(ok=False, observation=f"{shown} is not a directory")
        try:
            found = await asyncio.to_thread(list_folder, ctx.workspace, path)
        except PathRefused as exc:
            return ToolResult(ok=False, observation=f"{shown}: {exc}")
        except OSError as exc:
            return ToolResult(ok=False, observation=f"{shown} cannot be listed: {exc.strerror}")
        entries = _entry_names(found)
        if not entries:
            return ToolResult(ok=True, observation=f"{shown} is empty")
        limit = 500
        listing = "\n".join(entries[:limit])
        if len(entries) > limit:
            listing += f"\n[… {len(entries) - limit} more entries]"
        count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
        return ToolResult(ok=True, observation=f"{shown} ({count}):\n{listing}")


class SearchFiles(_PathTool):
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
            root = resolve_path(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return _refused(exc)
        import regex  # ~15 ms to import: not before the first frame

        try:
            pattern = regex.compile(args.pattern)
        except (regex.error, OverflowError, RecursionError):
            pattern = regex.compile(regex.escape(args.pattern))
        # The search runs on a thread with the GIL released while matching (concurrent=True),
        # under a time budget, and stops at once when the call is cancelled.
        stop = threading.Event()
        search = _Search(pattern, ctx.workspace, ctx.protected, stop)
        try:
            matches = await asyncio.to_thread(search.run, root)
        finally:
            stop.set()
        shown = display_path(ctx.workspace, root)
        if search.timed_out:
            matches.append(
                "[stopped: the pattern is too slow to match (nested repetition such as "
                "(a+)+?); simplify it]"
            )
        if not matches:
            said = f"no matches for {args.pattern!r} in {shown}"
            if root.is_file():
                # Searched one file for a word it does not hold ("hi" in utils.py, asked what
                # shout returns for "hi"), a small model answers with this line, even told
                # to read the file. The file itself is what it needs: a short one is shown.
                loaded = await _load(ctx, args.path, SHOWN_WHOLE_BYTES + 1)
                if (
                    not isinstance(loaded, ToolResult)
                    and loaded[3] <= SHOWN_WHOLE_BYTES
                    and loaded[2].count(b"\n") < SHOWN_WHOLE
                ):
                    path, _shown, data, size = loaded
                    _saw(ctx, path)
                    return ToolResult(ok=True, observation=f"{said}. {_as_read(shown, data, size)}")
                said += f"; read_file {shown} shows all of it"
            return ToolResult(ok=True, observation=said)
        if len(search.hits) <= CONTEXT_MATCHES and not search.timed_out:
            matches = search.with_context()
        return ToolResult(ok=not search.timed_out, observation="\n".join(matches))


SHOWN_WHOLE = 200
SHOWN_WHOLE_BYTES = 16_000
"""A file searched alone without a match is shown whole when it has fewer lines than
SHOWN_WHOLE and no more bytes than this (a minified file has few lines)."""
CONTEXT_MATCHES = 5
"""A search with this many matches or fewer shows the lines around each (``grep -B1 -A3``): a
model that finds ``def average(numbers):`` then sees the body it asked about."""
CONTEXT_BEFORE, CONTEXT_AFTER = 1, 3


class _Search:
    """One search over workspace files, on a thread, bounded in matches and time."""

    def __init__(
        self,
        pattern: regex.Pattern[str],
        workspace: Path,
        protected: tuple[Path, ...],
        stop: threading.Event,
        cap: int = 200,
    ) -> None:
        self.pattern, self.workspace, self.protected = pattern, workspace, protected
        self.stop, self.cap = stop, cap
        self.deadline = time.monotonic() + SEARCH_BUDGET_S
        self.timed_out = False
        self.hits: list[tuple[str, int, list[str]]] = []
        """(shown path, line number, the file's lines) of the first few matches."""

    def _files(self, root: Path) -> list[Path]:
        files = [root] if root.is_file() else []
        if root.is_dir():
            for folder, dirs, names in os.walk(root, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
                files.extend(Path(folder) / n for n in sorted(names))
        return files

    def run(self, root: Path) -> list[str]:
        results: list[str] = []
        for file in self._files(root):
            if self.stop.is_set():
                break
            try:
                real = resolve_path(self.workspace, str(file), self.protected)
                data, size = read_bytes(self.workspace, real, _MAX_READ_BYTES)
            except (PathRefused, OSError):
                continue  # a link out of the workspace, a device, a file gone meanwhile
            if size > _MAX_READ_BYTES or _looks_binary(data):
                continue
            lines = data.decode("utf-8", "replace").splitlines()
            for number, line in enumerate(lines, 1):
                left = self.deadline - time.monotonic()
                try:
                    if left <= 0 or self.stop.is_set():
                        raise TimeoutError
                    found = self.pattern.search(
                        line, timeout=min(left, LINE_BUDGET_S), concurrent=True
                    )
                except TimeoutError:
                    self.timed_out = not self.stop.is_set()
                    return results
                if found:
                    shown = display_path(self.workspace, file)
                    results.append(f"{shown}:{number}: {line[:300]}")
                    if len(self.hits) <= CONTEXT_MATCHES:
                        self.hits.append((shown, number, lines))
                    if len(results) >= self.cap:
                        results.append(f"[stopped after {self.cap} matches]")
                        return results
        return results

    def with_context(self) -> list[str]:
        """The matches with the lines around them, grep's way: ``path:N: match``,
        ``path-N- context``, ``--`` between groups that do not touch."""
        out: list[str] = []
        last: tuple[str, int] | None = None  # the last line shown
        matched = {(shown, number) for shown, number, _ in self.hits}
        for shown, number, lines in self.hits:
            start = max(number - CONTEXT_BEFORE, 1)
            if last is not None and last[0] == shown:
                start = max(start, last[1] + 1)
            if out and (last is None or last[0] != shown or start > last[1] + 1):
                out.append("--")
            for at in range(start, min(number + CONTEXT_AFTER, len(lines)) + 1):
                mark = ":" if (shown, at) in matched else "-"
                out.append(f"{shown}{mark}{at}{mark} {lines[at - 1][:300]}")
                last = (shown, at)
        return out


def _git_risk(tool: Tool, path: str, ctx: ToolContext) -> RiskAssessment:
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


class _TextFileTool(_PathTool):
    """A tool that changes one text file (``path``): its change is planned first, so the card
    shows a diff and a person may take only some hunks."""

    @abstractmethod
    async def _plan(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult:
        """The file's text before and after, or why the call cannot go ahead."""

    async def preview(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult | None:
        return await self._plan(args, ctx)

    def touches(self, args: Any) -> list[str]:
        return [args.path]

    async def write_reviewed(self, change: FileChange, text: str, ctx: ToolContext) -> ToolResult:
        return await _write_reviewed(ctx, change, text)


class WriteFile(_TextFileTool):
    name = "write_file"
    description = (
        "Create a text file in the workspace. To add text to the end of an existing file, "
        'pass "mode": "append".'
    )
    risk = "write"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        content: str = Field(max_length=TEXT_CHARS, description="The text to write")
        mode: Literal["create", "append", "overwrite"] = Field(
            "create",
            description="create (the default) a new file; append to an existing one; "
            "overwrite only to throw away all of an existing file",
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return _git_risk(self, args.path, ctx)

    async def _plan(self, args: Args, ctx: ToolContext) -> FileChange | ToolResult:
        try:
            path = resolve_path(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return _refused(exc)
        shown = display_path(ctx.workspace, path)
        target = _relative(ctx, path)
        # A small model asked to add a function "writes" the file with just that function:
        # what was there must not be lost by default.
        existing = await _load(ctx, args.path, _MAX_EDIT_BYTES + 1, missing_ok=True)
        if isinstance(existing, ToolResult):
            if args.mode == "overwrite" and "binary" in existing.observation:
                return FileChange(shown, None, args.content, target)  # replaced whole, not shown
            return existing  # a folder, unreadable: not appended to or replaced
        if existing is None:
            return FileChange(shown, None, args.content, target)
        path, _shown, old, size = existing
        # Written blind, a small model appends a second copy of what is there, or a script
        # to a test file: a file is added to or replaced only as last seen. Not yet seen, it
        # is shown, so the next call can fit it (told only to read it, the 1.5B model asked
        # the user to).
        seen = _seen_as_is(ctx, path)
        now = " " if seen else f" It holds now:\n{_as_read(shown, old, size)}\n"
        if not seen:
            _saw(ctx, path)
        if args.mode == "create":
            # Overwriting is not offered here: a small model takes one of the ways it is
            # shown, and shown "overwrite" the 1.5B model replaced utils.py with the one
            # function it was asked to add. A whole rewrite is still in the tool's schema.
            return ToolResult(
                ok=False,
                observation=f"{shown} already exists ({size:,} bytes); it is unchanged.{now}"
                'To add to its end, call write_file again with "mode": "append"; to change '
                "part of it, use edit_file with text copied exactly from the file.",
            )
        if not seen:
            return ToolResult(
                ok=False,
                observation=f"{shown} was not read since it last changed, so it is "
                f"unchanged.{now}Now that you have seen it: to add to its end, call "
                "write_file again; to change part of it, use edit_file with text copied "
                "exactly from the file.",
            )
        if size > _MAX_EDIT_BYTES:
            if args.mode == "overwrite":
                return FileChange(shown, None, args.content, target)
            return ToolResult(ok=False, observation=f"{shown} is too big to append to")
        try:
            text = old.decode("utf-8")
        except UnicodeDecodeError:
            if args.mode == "overwrite":
                return FileChange(shown, None, args.content, target)  # replaced whole, not shown
            return ToolResult(ok=False, observation=f"{shown} is not UTF-8 text; it is unchanged")
        if args.mode == "overwrite":
            return FileChange(shown, text, args.content, target)
        gap = "" if not text or text.endswith("\n") else "\n"
        return FileChange(shown, text, text + gap + args.content, target)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        plan = await self._plan(args, ctx)
        if isinstance(plan, ToolResult):
            return plan
        data = plan.after.encode("utf-8", errors="surrogatepass")
        if failure := await _write(ctx, plan.write_path, plan.path, data):
            return failure
        if args.mode == "append":
            added = len(args.content.encode("utf-8", errors="surrogatepass"))
            said = f"appended {added} bytes to {plan.path} (now {len(data)} bytes)"
            return ToolResult(ok=True, observation=said)
        return ToolResult(ok=True, observation=f"wrote {len(data)} bytes to {plan.path}")


async def _write_reviewed(ctx: ToolContext, change: FileChange, text: str) -> ToolResult:
    """Write what a person took of ``change``, provided the file is still as it was shown."""
    now = await _load(ctx, change.write_path, _MAX_EDIT_BYTES + 1, missing_ok=True)
    if isinstance(now, ToolResult):
        return now
    current = None if now is None else now[2].decode("utf-8", errors="replace")
    if current != change.before:
        return ToolResult(
            ok=False,
            observation=f"{change.path} changed after it was reviewed; nothing was written",
        )
    data = text.encode("utf-8", errors="surrogatepass")
    failure = await _write(ctx, change.write_path, change.path, data)
    return failure or ToolResult(ok=True, observation=f"wrote {len(data)} bytes to {change.path}")


async def _write(ctx: ToolContext, raw: str, shown: str, data: bytes) -> ToolResult | None:
    """Write atomically to the path given as ``raw``; the refusal or failure to return, or
    None when it worked."""
    try:
        path = resolve_path(ctx.workspace, raw, ctx.protected)
        await asyncio.to_thread(write_atomic, ctx.workspace, path, data)
    except PathRefused as exc:
        return ToolResult(ok=False, observation=f"could not write {shown}: {exc}")
    except OSError as exc:
        why = exc.strerror or str(exc)
        return ToolResult(ok=False, observation=f"could not write {shown}: {why}; it is unchanged")
    _saw(ctx, path)  # the model wrote it: it knows what is there
    return None


def _occurrence_lines(text: str, part: str, most: int = 21) -> list[int]:
    """The line (1-based) where each of the first ``most`` non-overlapping occurrences of
    ``part`` starts; lines are counted once, from one occurrence to the next."""
    lines: list[int] = []
    line, counted, start = 1, 0, text.find(part)
    while start != -1 and len(lines) < most:
        line += text.count("\n", counted, start)
        counted = start
        lines.append(line)
        start = text.find(part, start + len(part))
    return lines


class EditFile(_TextFileTool):
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

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return _git_risk(self, args.path, ctx)

    async def _plan(self, args: Args, ctx: ToolContext) -> FileChange | ToolResult:
        loaded = await _load(ctx, args.path, _MAX_EDIT_BYTES + 1)
        if isinstance(loaded, ToolResult):
            return loaded
        path, shown, data, size = loaded
        target = _relative(ctx, path)
        if size != len(data):
            return ToolResult(
                ok=False,
                observation=f"{shown} is {size:,} bytes, more than edit_file edits "
                f"({_MAX_EDIT_BYTES:,}); it is unchanged. Use shell tools for files this big.",
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return ToolResult(
                ok=False,
                observation=f"{shown} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at "
                f"offset {exc.start}); edit_file only edits UTF-8 text, so it is unchanged",
            )
        count = text.count(args.old)
        if count == 0:
            return ToolResult(
                ok=False, observation=f"`old` does not occur in {shown}; it must occur exactly once"
            )
        if count > 1:
            # Where each one is, so the model can take in a neighbouring line to pick one.
            lines = _occurrence_lines(text, args.old)
            shown_lines = ", ".join(map(str, lines[:20])) + (", …" if count > 20 else "")
            return ToolResult(
                ok=False,
                observation=f"`old` occurs {count} times in {shown} (lines {shown_lines}); it "
                "must occur exactly once: include the line before or after the one to change",
            )
        return FileChange(shown, text, text.replace(args.old, args.new), target)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        plan = await self._plan(args, ctx)
        if isinstance(plan, ToolResult):
            return plan
        new_data = plan.after.encode("utf-8", errors="surrogatepass")
        failure = await _write(ctx, plan.write_path, plan.path, new_data)
        if failure:
            return failure
        # The edited lines as they now read: told only "edited", small models read the
        # whole file again to see their change, a step each time.
        start = (plan.before or "").index(args.old)
        shown = _edited_lines(plan.after, start, start + len(args.new))
        return ToolResult(ok=True, observation=f"edited {plan.path}; {shown}")


EDIT_LINES_SHOWN = 12
"""At most this many lines of an edit are shown back."""


def _edited_lines(text: str, start: int, end: int) -> str:
    """Lines ``start``..``end`` (character offsets) of ``text`` with one line either side,
    numbered as read_file numbers them."""
    lines = text.splitlines()
    first = text.count("\n", 0, start)  # 0-based
    last = text.count("\n", 0, max(start, end - 1))
    low, high = max(first - 1, 0), min(last + 1, len(lines) - 1)
    if high < low:
        return "the file is now empty"
    cut = high - low + 1 > EDIT_LINES_SHOWN
    high = low + EDIT_LINES_SHOWN - 1 if cut else high
    body = "\n".join(f"{n + 1:>5}  {lines[n]}" for n in range(low, high + 1))
    return f"lines {low + 1}-{high + 1} now:\n{body}" + ("\n[…]" if cut else "")


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
        found = assess_shell(args.command, ctx.workspace, ctx.protected)
        return RiskAssessment(tier=found.tier, reasons=found.reasons, commands=found.commands)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        if ctx.shell_refusal:
            return ToolResult(ok=False, observation=f"Refused: {ctx.shell_refusal}")
        # The user's limit is a ceiling: the model may ask for less time, never more.
        timeout = min(args.timeout_s or ctx.shell_timeout_s, ctx.shell_timeout_s)
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


def _source_and_destination(
    ctx: ToolContext, source: str, destination: str, resolve_source: Callable[..., Path]
) -> tuple[Path, Path, str] | ToolResult:
    """Both paths of a move or copy, checked, and ``a to b`` as shown; or the refusal."""
    try:
        start = resolve_source(ctx.workspace, source, ctx.protected)
        end = resolve_entry(ctx.workspace, destination, ctx.protected)
    except PathRefused as exc:
        return _refused(exc)
    return start, end, f"{display_path(ctx.workspace, start)} to {display_path(ctx.workspace, end)}"


class MovePath(_PathTool):
    name = "move_path"
    description = "Rename or move a file or folder in the workspace (never over an existing one)."
    risk = "write"
    path_fields = ("source", "destination")

    class Args(_Args):
        source: str = Field(
            max_length=PATH_CHARS, description="Path to move, relative to the workspace"
        )
        destination: str = Field(
            max_length=PATH_CHARS, description="New path, relative to the workspace"
        )

    def touches(self, args: Args) -> list[str]:
        return [args.source, args.destination]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        risks = [_git_risk(self, p, ctx) for p in (args.source, args.destination)]
        return max(risks, key=lambda r: r.tier == "dangerous")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        ends = _source_and_destination(ctx, args.source, args.destination, resolve_entry)
        if isinstance(ends, ToolResult):
            return ends
        source, destination, shown = ends
        try:
            await asyncio.to_thread(move_entry, ctx.workspace, source, destination)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await _missing(ctx, source))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not move {shown}: {why}")
        return ToolResult(ok=True, observation=f"moved {shown}")


class CopyPath(_PathTool):
    name = "copy_path"
    description = "Copy a file in the workspace to a new path (never over an existing file)."
    risk = "write"
    path_fields = ("source", "destination")

    class Args(_Args):
        source: str = Field(
            max_length=PATH_CHARS, description="File to copy, relative to the workspace"
        )
        destination: str = Field(
            max_length=PATH_CHARS, description="Path of the copy, relative to the workspace"
        )

    def touches(self, args: Args) -> list[str]:
        return [args.destination]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return _git_risk(self, args.destination, ctx)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        # The file copied is the one a link names; the copy is a new entry, never a link's end.
        ends = _source_and_destination(ctx, args.source, args.destination, resolve_path)
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
                read_bytes, ctx.workspace, source, _MAX_EDIT_BYTES + 1
            )
            if size > _MAX_EDIT_BYTES:
                raise PathRefused(f"it is {size:,} bytes, more than copy_path copies")
            await asyncio.to_thread(write_new, ctx.workspace, destination, data)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await _missing(ctx, source))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not copy {shown}: {why}")
        return ToolResult(ok=True, observation=f"copied {shown}")


class MakeDir(_PathTool):
    name = "make_dir"
    description = "Create a folder in the workspace, with any missing parent folders."
    risk = "write"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(
            max_length=PATH_CHARS, description="Folder path, relative to the workspace"
        )

    def touches(self, args: Args) -> list[str]:
        return [args.path]

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return _git_risk(self, args.path, ctx)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_entry(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return _refused(exc)
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


class DeletePath(_PathTool):
    name = "delete_path"
    description = "Delete a file, or an empty folder, in the workspace."
    risk = "write"
    path_fields = ("path",)

    class Args(_Args):
        path: str = Field(
            max_length=PATH_CHARS, description="Path to delete, relative to the workspace"
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return _git_risk(self, args.path, ctx)

    def touches(self, args: Args) -> list[str]:
        return [args.path]

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_entry(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return _refused(exc)
        shown = display_path(ctx.workspace, path)
        try:
            kind = await asyncio.to_thread(delete_entry, ctx.workspace, path)
        except FileNotFoundError:
            return ToolResult(ok=False, observation=await _missing(ctx, path))
        except (PathRefused, OSError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(ok=False, observation=f"could not delete {shown}: {why}")
        return ToolResult(ok=True, observation=f"deleted the {kind} {shown}")


def builtin_tools() -> list[Tool]:
    return [
        ReadFile(),
        ListDir(),
        SearchFiles(),
        WriteFile(),
        EditFile(),
        CopyPath(),
        MovePath(),
        MakeDir(),
        DeletePath(),
        ShellExec(),
    ]


def default_registry() -> ToolRegistry:
    return ToolRegistry(builtin_tools())
