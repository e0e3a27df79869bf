"""shell_exec: one shell command in the workspace, in its own process group, with a timeout."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from pathlib import Path

from pydantic import Field

from pheron_tui.core.tools import RiskAssessment, Tool, ToolContext, ToolResult
from pheron_tui.tools.files import display_path
from pheron_tui.tools.path_tool import StrictArgs
from pheron_tui.tools.python_failure import python_failure
from pheron_tui.tools.sandbox import run_shell
from pheron_tui.tools.shell_risk import assess_shell, written_files

HASHED_BYTES = 4_000_000
"""A written file up to this size is compared by its contents; a bigger one by size and time."""


class ShellExec(Tool):
    name = "shell_exec"
    description = (
        "Run a shell command in the workspace directory and return its combined output "
        "and exit code."
    )
    risk = "execute"
    values_said = False  # a command line is written, not named: "yes | head -c 100000000"
    on_workspace = True

    class Args(StrictArgs):
        command: str = Field(min_length=1, max_length=10_000, description="The shell command line")
        timeout_s: float | None = Field(
            None, gt=0, le=3600, description="Seconds before the command is killed"
        )

    def assess(self, args: Args, ctx: ToolContext) -> RiskAssessment:
        found = assess_shell(args.command, ctx.workspace, ctx.protected)
        return RiskAssessment(tier=found.tier, reasons=found.reasons, commands=found.commands)

    def named_writes(self, args: Args, ctx: ToolContext) -> list[str]:
        root = ctx.workspace.resolve()
        return [p.relative_to(root).as_posix() for p in written_files(args.command, root)]

    async def run(self, args: Args, ctx: ToolContext) -> ToolResult:
        if ctx.shell_refusal:
            return ToolResult(ok=False, observation=f"Refused: {ctx.shell_refusal}")
        # The user's limit is a ceiling: the model may ask for less time, never more.
        timeout = min(args.timeout_s or ctx.shell_timeout_s, ctx.shell_timeout_s)
        # What the command names to write, as it is now: `sed -i 's/TIMEOUT=60/TIMEOUT=60/'`
        # exits 0 and prints nothing, and the 1.5B model then said TIMEOUT had been changed.
        watched = written_files(args.command, ctx.workspace)
        before = await asyncio.to_thread(_states, watched)
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
        observation = f"exit code {result.exit_code}\n{output}"
        failure = (
            await asyncio.to_thread(python_failure, output, ctx.workspace)
            if result.exit_code != 0
            else ""
        )
        if failure:
            observation += f"\n({failure})"
        kept = [path for path, state in before.items() if state is not None]
        if result.exit_code == 0 and kept and await asyncio.to_thread(_states, watched) == before:
            # Said only when every file it names to write is as it was: one it made or
            # changed means it did something.
            shown = [display_path(ctx.workspace, path) for path in kept]
            left = ", ".join(shown)
            was = "it was" if len(shown) == 1 else "they were"
            observation += f"\n(the command left {left} as {was}: nothing in it changed)"
            return ToolResult(ok=True, observation=observation, unchanged=tuple(shown))
        return ToolResult(ok=result.exit_code == 0, observation=observation)


def _states(paths: list[Path]) -> dict[Path, tuple[int, int, str] | None]:
    """Each path's kind, mode and contents (a digest), or None when it is missing or no
    regular file; never blocks on a pipe a command could write to."""
    return {path: _state(path) for path in paths}


def _state(path: Path) -> tuple[int, int, str] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > HASHED_BYTES:
            return info.st_size, info.st_mode, str(info.st_mtime_ns)
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return info.st_size, info.st_mode, digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)
