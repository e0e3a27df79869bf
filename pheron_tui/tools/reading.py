"""The tools that read: read_file, list_dir, search_files."""

from __future__ import annotations

import asyncio
import csv
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

if TYPE_CHECKING:
    import regex

from pheron_tui.core.limits import SKIPPED_FOLDERS
from pheron_tui.core.tools import ToolContext, ToolResult
from pheron_tui.tools.files import (
    PathRefused,
    display_path,
    list_folder,
    read_bytes,
    resolve_path,
)
from pheron_tui.tools.path_tool import (
    MAX_READ_BYTES,
    PATH_CHARS,
    PathTool,
    StrictArgs,
    entry_names,
    is_glob,
    load_file,
    looks_binary,
    mark_seen,
    missing_path_help,
    refusal_result,
    same_name,
)

_NAME_ONLY = re.compile(r"[\w.*?-]{1,255}\.[\w*?]+")
"""A pattern that reads as a file's name or a glob of names (``test_units.py``, ``*.log``).
No longer than a name can be, so a model's pattern of dots cannot make it backtrack for long."""

# A search is cut off after this long, and so is one line that takes longer than
# LINE_BUDGET_S to match: a pattern that backtracks without end cannot freeze the app, and a
# cancelled search's thread ends within a second.
SEARCH_BUDGET_S = 10.0
LINE_BUDGET_S = 1.0


class ReadFile(PathTool):
    name = "read_file"
    description = "Read a text file in the workspace. Lines are numbered from 1."
    risk = "read"
    path_fields = ("path",)

    class Args(StrictArgs):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        offset: int = Field(1, ge=1, le=10**9, description="First line to read (1-based)")
        limit: int = Field(400, ge=1, le=5000, description="How many lines to read at most")

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        loaded = await load_file(ctx, args.path, MAX_READ_BYTES)
        instead = ""
        if isinstance(loaded, ToolResult) and (other := await _only_same_name(ctx, args.path)):
            # Told "tests/test_units.py does not exist; did you mean test_units.py?", the 1.5B
            # model read the same missing path again, twice. A read changes nothing: the one
            # file of that name is shown, and said to be the one shown.
            loaded = await load_file(ctx, other, MAX_READ_BYTES)
            instead = f"[{args.path} does not exist; shown instead: {other}, the one file here "
            instead += "with that name]\n"
        if isinstance(loaded, ToolResult):
            return loaded
        path, shown, data, size = loaded
        mark_seen(ctx, path)
        view = as_read(shown, data, size, args.offset, args.limit)
        return ToolResult(ok=True, observation=instead + view)


async def _only_same_name(ctx: ToolContext, raw: str) -> str | None:
    """The one workspace file named as the missing path ``raw`` is, if only one is."""
    try:
        path = resolve_path(ctx.workspace, raw, ctx.protected)
        if path.exists() or path.is_symlink() or is_glob(path.name):
            return None
    except (PathRefused, OSError, ValueError):  # a name too long to look up, a NUL byte
        return None
    found = await asyncio.to_thread(same_name, ctx, path.name, 2)
    return found[0] if len(found) == 1 else None


READ_LINES = 400
"""Lines read_file shows unless told otherwise."""
SHORT_FILE_LINES = 80
SHORT_FILE_CHARS = 4_000
"""A file no longer than this is shown whole, whatever part of it was asked for."""


def as_read(shown: str, data: bytes, size: int, offset: int = 1, limit: int = READ_LINES) -> str:
    """A file's text as read_file shows it: a head naming the file and its lines, then the
    lines numbered from 1, then notes on anything cut or undecodable."""
    data = data[:MAX_READ_BYTES]
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
    asked = (offset, min(offset - 1 + limit, len(lines)))
    short = len(lines) <= SHORT_FILE_LINES and len(text) <= SHORT_FILE_CHARS
    if short and size == len(data) and offset <= len(lines) and asked != (1, len(lines)):
        # Small models guess where to look: a line a note named ("offset 5"), one line of a
        # CSV for its header. A file this short costs little shown whole, and the rest was
        # what the question needed ("how many stations?" answered from the header).
        notes.append(
            f"lines {asked[0]}-{asked[1]} were asked for; the file is short, so all of it is shown"
        )
        offset, limit = 1, len(lines)
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


_READ_HEADING = re.compile(
    r"^\S[^\n]* \((?:[\d,]+\+? lines?|lines \d+-\d+ of [\d,]+\+?)(?:: [^)\n]*)?\):\n"
)
_NUMBERED_LINE = re.compile(r"^( *)(\d{1,9})(?:  (.*))?$")
_READ_NOTE = re.compile(r"^\[[^\n]*\]$")


def without_read_view(text: str, least: int = 2) -> str | None:
    """The file's own text, when ``text`` is a copy of how ``as_read`` shows a file: its
    heading ("names.txt (5 lines):") and numbered lines. Asked to sort names.txt, the 1.5B
    model wrote back what read_file showed it, heading and line numbers included. A copy is
    numbered lines after the heading or, without it, at least ``least`` numbered exactly
    as ``as_read`` numbers them; None for anything else."""
    heading = _READ_HEADING.match(text)
    body = text[heading.end() :] if heading else text
    lines = body.rstrip("\n").split("\n")
    while heading and lines and _READ_NOTE.match(lines[-1]):
        lines.pop()  # "[line 9 is past the end …]": the view's note, not the file's
    kept: list[str] = []
    for line in lines:
        match = _NUMBERED_LINE.match(line)
        if match is None:
            return None
        pad, number, rest = match.groups()
        # Without the heading, only the view's exact layout counts: "    1  Maya", not "1  x".
        # The numbers need not follow one another: sorted, the lines keep theirs.
        if not heading and len(pad) + len(number) != 5:
            return None
        kept.append(rest or "")
    if len(kept) < (1 if heading else least):
        return None
    return "\n".join(kept) + ("\n" if text.endswith("\n") or heading else "")


def _has_header_row(shown: str, text: str) -> bool:
    """Whether a CSV or TSV file opens with a header row (the standard library's guess)."""
    if not shown.lower().endswith((".csv", ".tsv")):
        return False
    try:
        return csv.Sniffer().has_header(text[:2048])  # a few rows tell; bounded time
    except csv.Error:
        return False


async def shown_whole(ctx: ToolContext, given: str, shown: str) -> str | None:
    """A short file (``given`` as the model gave it) as read_file shows it, marked seen; None
    for a longer one or one that cannot be read."""
    loaded = await load_file(ctx, given, SHOWN_WHOLE_BYTES + 1)
    if isinstance(loaded, ToolResult):
        return None
    path, _shown, data, size = loaded
    if size > SHOWN_WHOLE_BYTES or data.count(b"\n") >= SHOWN_WHOLE:
        return None
    mark_seen(ctx, path)
    return as_read(shown, data, size)


class ListDir(PathTool):
    name = "list_dir"
    description = "List the entries of a directory in the workspace; directories end with '/'."
    risk = "read"
    path_fields = ("path",)

    class Args(StrictArgs):
        path: str = Field(
            ".", max_length=PATH_CHARS, description="Directory, relative to the workspace"
        )

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        try:
            path = resolve_path(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return refusal_result(exc)
        shown = display_path(ctx.workspace, path)
        if not path.exists():
            return ToolResult(ok=False, observation=await missing_path_help(ctx, path))
        if path.is_file():
            # Listed, a CSV file was "not a directory" twice over, and the 1.5B model asked
            # the user for the right path: a short file is shown as read_file shows it.
            said = f"{shown} is a file, not a folder"
            if text := await shown_whole(ctx, args.path, shown):
                return ToolResult(ok=True, observation=f"{said}. {text}")
            return ToolResult(ok=False, observation=f"{said}; read_file {shown} shows it")
        if not path.is_dir():
            return ToolResult(ok=False, observation=f"{shown} is not a directory")
        try:
            found = await asyncio.to_thread(list_folder, ctx.workspace, path)
        except PathRefused as exc:
            return ToolResult(ok=False, observation=f"{shown}: {exc}")
        except OSError as exc:
            return ToolResult(ok=False, observation=f"{shown} cannot be listed: {exc.strerror}")
        entries = entry_names(found)
        if not entries:
            return ToolResult(ok=True, observation=f"{shown} is empty")
        limit = 500
        listing = "\n".join(entries[:limit])
        if len(entries) > limit:
            listing += f"\n[… {len(entries) - limit} more entries]"
        count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
        return ToolResult(ok=True, observation=f"{shown} ({count}):\n{listing}")


class SearchFiles(PathTool):
    name = "search_files"
    description = (
        "Search text files under a directory for a regular expression; "
        "prints path:line: text for each match."
    )
    risk = "read"
    path_fields = ("path",)

    class Args(StrictArgs):
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
            return refusal_result(exc)
        if not root.exists():
            # "no matches in tests" for a folder that is not there read as an answer: the
            # 1.5B model said test_units.py tested nothing.
            return ToolResult(ok=False, observation=await missing_path_help(ctx, root))
        import regex  # ~15 ms to import: not before the first frame

        try:
            pattern = regex.compile(args.pattern)
        except (regex.error, OverflowError, RecursionError):
            pattern = regex.compile(regex.escape(args.pattern))
        search, matches = await self._search(pattern, root, ctx)
        literal = regex.escape(args.pattern)
        as_text = False
        if not matches and not search.timed_out and literal != args.pattern:
            # Code searched for as written: "def average(numbers):" as a regular expression
            # reads its parentheses as a group and matches nothing, and the 1.5B model, which
            # had been shown that very line, said the function was not there.
            search, matches = await self._search(regex.compile(literal), root, ctx)
            as_text = bool(matches)
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
                # Shown "no matches for 'temperature'" first, the 1.5B model asked which city
                # is warmest called the question ambiguous: the file comes with a word of
                # what it is for.
                if text := await shown_whole(ctx, args.path, shown):
                    return ToolResult(
                        ok=True,
                        observation=f"{said}, but the file is short: what is asked may be in it "
                        f"in other words. {text}",
                    )
                said += f"; read_file {shown} shows all of it"
            elif _NAME_ONLY.fullmatch(args.pattern) and (
                named := await asyncio.to_thread(same_name, ctx, args.pattern)
            ):
                # A file's name searched for in the files' text: asked which functions
                # test_units.py tests, the 1.5B model searched for "test_units.py", was told
                # "no matches" and said there was no such file.
                said += (
                    f"; files named so: {', '.join(named)} (search_files looks inside files; "
                    f"read_file {named[0]} shows one)"
                )
            return ToolResult(ok=True, observation=said)
        # The count is said: shown a match among the lines around it, the 1.5B model asked
        # how many ERROR lines a log has counted the context lines too.
        found = search.found
        files = len(search.files)
        head = (
            f"{found}{'+' if found >= search.cap else ''} matching line{'s' if found != 1 else ''}"
            f" in {files} file{'s' if files != 1 else ''}"
        )
        if as_text:
            head += " (as plain text: as a regular expression it matches nothing)"
        if len(search.hits) <= CONTEXT_MATCHES and not search.timed_out:
            matches = search.with_context()
            head += ' (marked "path:N:"; the lines around them "path-N-")'
        return ToolResult(ok=not search.timed_out, observation="\n".join([f"{head}:", *matches]))

    @staticmethod
    async def _search(
        pattern: regex.Pattern[str], root: Path, ctx: ToolContext
    ) -> tuple[_Search, list[str]]:
        """One search on a thread, the GIL released while matching (concurrent=True), under a
        time budget, stopped at once when the call is cancelled."""
        stop = threading.Event()
        search = _Search(pattern, ctx.workspace, ctx.protected, stop)
        try:
            return search, await asyncio.to_thread(search.run, root)
        finally:
            stop.set()


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
        self.found = 0
        """Matching lines found (up to ``cap``)."""
        self.files: set[str] = set()
        """The files they are in."""

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
                data, size = read_bytes(self.workspace, real, MAX_READ_BYTES)
            except (PathRefused, OSError):
                continue  # a link out of the workspace, a device, a file gone meanwhile
            if size > MAX_READ_BYTES or looks_binary(data):
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
                    self.found += 1
                    self.files.add(shown)
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
