"""shell_exec: one shell command in the workspace, in its own process group, with a timeout."""

from __future__ import annotations

from pydantic import Field

from pheron_tui.core.tools import RiskAssessment, Tool, ToolContext, ToolResult
from pheron_tui.tools.path_tool import StrictArgs
from pheron_tui.tools.sandbox import run_shell
from pheron_tui.tools.shell_risk import assess_shell


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
