"""The tools that write one text file: write_file and edit_file, each previewed as a diff."""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
from abc import abstractmethod
from typing import Any, Literal

from pydantic import Field

from pheron_tui.core.diffs import FileChange
from pheron_tui.core.safety import shorten
from pheron_tui.core.tools import RiskAssessment, ToolContext, ToolResult
from pheron_tui.tools.files import (
    PathRefused,
    display_path,
    resolve_path,
    write_atomic,
)
from pheron_tui.tools.import_guard import lost_import, warning_key
from pheron_tui.tools.path_tool import (
    MAX_EDIT_BYTES,
    PATH_CHARS,
    TEXT_CHARS,
    PathTool,
    StrictArgs,
    file_stamp,
    git_risk,
    load_file,
    mark_seen,
    refusal_result,
    relative_path,
    seen_as_is,
)
from pheron_tui.tools.reading import as_read, without_read_view
from pheron_tui.tools.syntax_guard import (
    UNREADABLE_AFTER,
    broken_syntax,
    function_rewrite,
    header_only,
    without_stray_closer,
)
from pheron_tui.tools.write_guard import (
    Overwrite,
    added_definitions,
    merged_definitions,
    merged_keys,
    merged_lines,
    merged_settings,
    rewritten,
)

FIT_AROUND = "Correct the call: the lines you write must fit the ones around them."
"""How a change refused for what it would leave of a JSON or Python file ends its result."""


class _TextFileTool(PathTool):
    """A tool that changes one text file (``path``): its change is planned first, so the card
    shows a diff and a person may take only some hunks."""

    fails_whole = True  # planned and checked first, then written atomically

    @abstractmethod
    async def _plan(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult:
        """The file's text before and after, or why the call cannot go ahead."""

    text_fields: tuple[str, ...] = ()
    """The arguments that hold text for the file."""
    least_numbered = 2
    """Numbered lines, at least, that make text without a heading a copy of read_file's view:
    a whole file's text of one such line may be the file's own."""

    async def preview(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult | None:
        args, unviewed = self.as_meant(args)
        plan = await self._checked_plan(args, ctx)
        # A refusal here is the call's result (it fails without an approval card).
        return _said_unviewed(plan) if unviewed and isinstance(plan, ToolResult) else plan

    def as_meant(self, args: Any) -> tuple[Any, bool]:
        """``args`` with any text copied from read_file's view of a file (heading, line
        numbers) turned back into the file's own lines; and whether any was."""
        plain = {
            name: text
            for name in self.text_fields
            if (text := without_read_view(getattr(args, name), self.least_numbered)) is not None
        }
        return (args.model_copy(update=plain), True) if plain else (args, False)

    async def _checked_plan(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult:
        """The plan, unless it would leave a JSON or Python file that reads as one unreadable
        (``broken_syntax``)."""
        plan = await self._plan(args, ctx)
        if isinstance(plan, ToolResult) or plan.before is None:
            return plan
        # Parsing a big file takes a while: not on the event loop.
        why = await asyncio.to_thread(broken_syntax, plan.path, plan.before, plan.after)
        if why is None:
            return await self._imports_kept(plan, ctx)
        return ToolResult(
            ok=False,
            observation=f"{plan.path} is unchanged: {why}{self._broken_by(args, plan)}\n"
            + FIT_AROUND,
        )

    def _broken_by(self, args: Any, plan: FileChange) -> str:
        """What in the call, beyond the parser's words, left the file unreadable ("" when
        nothing more is known)."""
        return ""

    async def _imports_kept(self, plan: FileChange, ctx: ToolContext) -> FileChange | ToolResult:
        """The plan, unless it takes away a name another file imports (``import_guard``):
        held back once, or every time when that file is one the turn keeps."""
        if plan.before is None:
            return plan  # a new file takes nothing away
        lost = await asyncio.to_thread(
            lost_import, ctx.workspace, plan.write_path, plan.before, plan.after, ctx.kept
        )
        key = warning_key(plan.write_path, plan.after)
        if lost is None or (key in ctx.warned and not lost.final):
            return plan
        ctx.warned.add(key)
        return ToolResult(ok=False, observation=f"{plan.path} is unchanged: {lost.why}")

    def touches(self, args: Any, ctx: ToolContext) -> list[str]:
        return [args.path]

    async def write_reviewed(self, change: FileChange, text: str, ctx: ToolContext) -> ToolResult:
        return await _write_reviewed(ctx, change, text)


class WriteFile(_TextFileTool):
    name = "write_file"
    description = (
        "Create a text file in the workspace, or write a new version of a whole file that "
        "exists (all of its text: sorted, reordered, rewritten). To add text to the end of an "
        'existing file, pass "mode": "append".'
    )
    risk = "write"
    path_fields = ("path",)
    options_said = False  # "add a line to notes.txt" asks for append in other words
    values_said = False  # the text is the model's to write
    text_fields = ("content",)

    class Args(StrictArgs):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        content: str = Field(max_length=TEXT_CHARS, description="The text to write")
        mode: Literal["create", "append", "overwrite"] = Field(
            "create",
            description="create (the default) a new file; append to an existing one; "
            "overwrite only to throw away all of an existing file",
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return git_risk(self, args.path, ctx)

    async def _plan(self, args: Args, ctx: ToolContext) -> FileChange | ToolResult:
        try:
            path = resolve_path(ctx.workspace, args.path, ctx.protected)
        except PathRefused as exc:
            return refusal_result(exc)
        shown = display_path(ctx.workspace, path)
        target = relative_path(ctx, path)
        # A small model asked to add a function "writes" the file with just that function:
        # what was there must not be lost by default.
        existing = await load_file(ctx, args.path, MAX_EDIT_BYTES + 1, missing_ok=True)
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
        seen = seen_as_is(ctx, path)
        now = " " if seen else f" It holds now:\n{as_read(shown, old, size)}\n"
        if not seen:
            mark_seen(ctx, path)
        text = _text(old) if size <= MAX_EDIT_BYTES else None
        same = text is not None and args.content.strip() == text.strip()
        if seen and same and args.mode != "append":
            # Asked to sort a file, the 1.5B model wrote it back as it was and said it was
            # sorted: the result says nothing changed.
            return ToolResult(
                ok=False, observation=f"{shown} is unchanged: it already holds exactly this text"
            )
        if seen and text is not None:
            # Part of the file written as a whole or as an addition: made as the edit it means.
            partial = args.mode == "overwrite"
            merge = merged_definitions(target, text, args.content, partial)
            if merge is None:
                merge = merged_keys(target, text, args.content, partial)
            if merge is None:
                merge = merged_settings(target, text, args.content)
            if merge is None and args.mode == "overwrite":
                merge = merged_lines(text, args.content)
            if merge is None and args.mode != "overwrite":
                merge = rewritten(text, args.content)
            if merge is None and args.mode == "create":
                merge = added_definitions(target, text, args.content)
            if merge is not None and merge.text == text:
                return ToolResult(ok=False, observation=f"{shown} is unchanged: {merge.note}.")
            if merge is not None:
                return FileChange(shown, text, merge.text, target, note=merge.note)
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
        if text is None:
            if args.mode == "overwrite":
                return FileChange(shown, None, args.content, target)  # replaced whole, not shown
            if size > MAX_EDIT_BYTES:
                return ToolResult(ok=False, observation=f"{shown} is too big to append to")
            return ToolResult(ok=False, observation=f"{shown} is not UTF-8 text; it is unchanged")
        if args.mode == "overwrite":
            overwrite = Overwrite(text, args.content)
            key = overwrite.key(str(path), file_stamp(path))
            if held := overwrite.held(shown, key in ctx.warned):
                ctx.warned.add(key)
                return ToolResult(ok=False, observation=held)
            return FileChange(shown, text, args.content, target)
        gap = "" if not text or text.endswith("\n") else "\n"
        return FileChange(shown, text, text + gap + args.content, target)

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        args, unviewed = self.as_meant(args)
        result = await self._run(args, ctx)
        return _said_unviewed(result) if unviewed else result

    async def _run(self, args: Args, ctx: ToolContext) -> ToolResult:
        plan = await self._checked_plan(args, ctx)
        if isinstance(plan, ToolResult):
            return plan
        data = plan.after.encode("utf-8", errors="surrogatepass")
        if failure := await _write(ctx, plan.write_path, plan.path, data):
            return failure
        if plan.note:
            said = f"{plan.note} (wrote {len(data)} bytes to {plan.path})"
            return ToolResult(ok=True, observation=said)
        if args.mode == "append":
            added = len(args.content.encode("utf-8", errors="surrogatepass"))
            said = f"appended {added} bytes to {plan.path} (now {len(data)} bytes)"
            return ToolResult(ok=True, observation=said)
        return ToolResult(ok=True, observation=f"wrote {len(data)} bytes to {plan.path}")


UNVIEWED_NOTE = (
    "(The heading and line numbers read_file shows are not part of a file: they were left "
    "out of the text.)"
)


OCCURRENCES_SHOWN = 5
"""Lines shown, at most, where an edit's `old` occurs more than once."""


def _said_unviewed(result: ToolResult) -> ToolResult:
    """``result`` with a note that read_file's heading and line numbers were left out."""
    return ToolResult(result.ok, f"{result.observation}\n{UNVIEWED_NOTE}")


def _text(data: bytes) -> str | None:
    """A file's bytes as text, or None when they are not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _write_reviewed(ctx: ToolContext, change: FileChange, text: str) -> ToolResult:
    """Write what a person took of ``change``, provided the file is still as it was shown."""
    now = await load_file(ctx, change.write_path, MAX_EDIT_BYTES + 1, missing_ok=True)
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
    mark_seen(ctx, path)  # the model wrote it: it knows what is there
    return None


CLOSEST_LINES = 3
LIKENESS = 0.6
"""How alike (difflib's ratio) a line must be to `old`'s first line to be shown for it."""


def _closest_lines(text: str, old: str) -> list[tuple[int, str]]:
    """(number, line) of the file's lines most like the first line of ``old`` that is not
    blank, in file order; none below ``LIKENESS``. Long lines are compared by their start."""
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")[:200]
    lines = text.splitlines()
    if not first or len(lines) > 5000:
        return []
    scored = []
    for number, line in enumerate(lines, 1):
        matcher = difflib.SequenceMatcher(None, first, line.strip()[:300], autojunk=False)
        quick = matcher.real_quick_ratio() >= LIKENESS and matcher.quick_ratio() >= LIKENESS
        if quick and (ratio := matcher.ratio()) >= LIKENESS:
            scored.append((ratio, number, shorten(line.rstrip(), 200)))
    best = sorted(scored, key=lambda item: (-item[0], item[1]))[:CLOSEST_LINES]
    return [(number, line) for _, number, line in sorted(best, key=lambda item: item[1])]


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
    values_said = False  # the new text is the model's to write
    text_fields = ("old", "new")
    least_numbered = 1  # one line copied with its number: `old` must occur in the file as is

    class Args(StrictArgs):
        path: str = Field(max_length=PATH_CHARS, description="File path, relative to the workspace")
        old: str = Field(
            min_length=1,
            max_length=TEXT_CHARS,
            description="Exact text to replace; must occur once",
        )
        new: str = Field(max_length=TEXT_CHARS, description="Replacement text")

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        return git_risk(self, args.path, ctx)

    async def _plan(self, args: Args, ctx: ToolContext) -> FileChange | ToolResult:
        loaded = await load_file(ctx, args.path, MAX_EDIT_BYTES + 1)
        if isinstance(loaded, ToolResult):
            return loaded
        path, shown, data, size = loaded
        target = relative_path(ctx, path)
        if size != len(data):
            return ToolResult(
                ok=False,
                observation=f"{shown} is {size:,} bytes, more than edit_file edits "
                f"({MAX_EDIT_BYTES:,}); it is unchanged. Use shell tools for files this big.",
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
        if count and args.old == args.new:
            # Reported done, the same no-op edit was made again and again (1.5B model).
            return ToolResult(
                ok=False,
                observation=f"`old` and `new` are the same text, so {shown} is unchanged: "
                "write in `new` what the text should become",
            )
        if count == 0:
            said = f"`old` does not occur in {shown}; it must occur exactly once"
            if args.new.strip() and text.count(args.new) == 1:
                # Shown the faulty line and told to change it, the 1.5B model wrote the fix
                # as `old` and the faulty line as `new`, three times.
                line = text.count("\n", 0, text.index(args.new)) + 1
                said += (
                    f". `new` does (line {line}): were they swapped? `old` is the text as the "
                    "file has it now, `new` what it should become"
                )
            elif closest := _closest_lines(text, args.old):
                # Never having read env.example, the 1.5B model edited "TIMEOUT=60" (its own
                # guess) and answered that nothing needed changing; it wrote `['title']` for
                # the file's `["title"]`. The lines it likely meant are shown as they are.
                listed = "\n".join(f"{number:>6}  {line}" for number, line in closest)
                said += f". The lines most like it, as the file has them:\n{listed}"
            return ToolResult(ok=False, observation=said)
        if count > 1:
            # Where each one is, so the model can take in a neighbouring line to pick one.
            lines = _occurrence_lines(text, args.old)
            shown_lines = ", ".join(map(str, lines[:20])) + (", …" if count > 20 else "")
            # The lines themselves: given only their numbers, the 1.5B model, which had not
            # read scale.py, tried `old` "scale" again in another form.
            file_lines = text.splitlines()
            listed = "\n".join(
                f"{number:>6}  {file_lines[number - 1]}"
                for number in dict.fromkeys(lines[:OCCURRENCES_SHOWN])
                if number <= len(file_lines)
            )
            return ToolResult(
                ok=False,
                observation=f"`old` occurs {count} times in {shown} (lines {shown_lines}); it "
                "must occur exactly once: include the line before or after the one to change. "
                f"The lines, as the file has them:\n{listed}",
            )
        return FileChange(shown, text, text.replace(args.old, args.new), target)

    def _broken_by(self, args: Any, plan: FileChange) -> str:
        return header_only(plan.path, plan.before or "", args.old)

    async def _checked_plan(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult:
        """The plan; when it would leave the file unreadable and ``new`` ends with a bracket
        nothing in it opens (``without_stray_closer``), the plan without that bracket if the
        file then reads, said in its note. The approval card shows that plan."""
        plan = await super()._checked_plan(args, ctx)
        unreadable = isinstance(plan, ToolResult) and UNREADABLE_AFTER in plan.observation
        broken = isinstance(plan, ToolResult) and FIT_AROUND in plan.observation
        if broken and (rewrite := await self._function_rewrite(args, ctx)) is not None:
            return rewrite
        trimmed = without_stray_closer(args.new) if unreadable else None
        if trimmed is None:
            return plan
        again = await super()._checked_plan(args.model_copy(update={"new": trimmed}), ctx)
        if isinstance(again, ToolResult):
            return plan
        closer = args.new.rstrip()[-1]
        note = (
            f"The `{closer}` at the end of `new` was left out: nothing in `new` opens it, and "
            f"with it {again.path} would not have been valid."
        )
        return dataclasses.replace(again, note=note)

    async def _function_rewrite(
        self, args: Args, ctx: ToolContext
    ) -> FileChange | ToolResult | None:
        """The plan that replaces the whole function when `old` is its def line and `new` a
        whole function of that name (``syntax_guard.function_rewrite``), if the file then
        reads; a refusal when that function is the one the file has."""
        loaded = await self._plan(args, ctx)
        if not isinstance(loaded, FileChange) or loaded.before is None:
            return None
        # Parses the whole file: not on the event loop, as broken_syntax.
        meant = await asyncio.to_thread(
            function_rewrite, loaded.path, loaded.before, args.old, args.new
        )
        if meant is None:
            return None
        whole, rewritten, done = meant
        if whole == rewritten:
            # Told to fix km_to_miles, the 1.5B model wrote it on one line as it was; asked
            # for a docstring on add, it gave add as it was after the def line.
            return ToolResult(
                ok=False,
                observation=f"{loaded.path} is unchanged: `new` is the function as the file "
                "already has it. Write in `new` what it should become.",
            )
        again = await super()._checked_plan(
            args.model_copy(update={"old": whole, "new": rewritten}), ctx
        )
        return dataclasses.replace(again, note=done) if isinstance(again, FileChange) else None

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        args, unviewed = self.as_meant(args)
        result = await self._run(args, ctx)
        return _said_unviewed(result) if unviewed else result

    async def _run(self, args: Args, ctx: ToolContext) -> ToolResult:
        plan = await self._checked_plan(args, ctx)
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
        said = f"edited {plan.path}; {shown}"
        return ToolResult(ok=True, observation=f"{plan.note}\n{said}" if plan.note else said)


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
