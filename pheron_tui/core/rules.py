"""Approval rules: allow or deny a tool, or for shell_exec a command prefix, per scope.

Scopes: ``session`` (the "always" key; gone when the app exits), ``project`` (one workspace)
and ``user`` (everywhere). The last two live in the config file. A deny rule always wins;
an allow rule never approves a dangerous call by itself (the gate asks instead).

Shell prefixes match whole words of each simple command the parser found, so ``git status``
allows ``git status -s`` but not ``git statusx`` nor ``git status; rm -rf ~`` (the ``rm``
needs an allow rule of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["allow", "deny"]
Scope = Literal["session", "project", "user"]

SHELL_TOOL = "shell_exec"
# Programs whose first argument names what they do: "git status" differs from "git push".
_SUBCOMMAND_PROGRAMS = {
    "git",
    "npm",
    "yarn",
    "pnpm",
    "cargo",
    "go",
    "uv",
    "pip",
    "pip3",
    "poetry",
    "docker",
    "kubectl",
    "gh",
    "apt",
    "apt-get",
    "brew",
    "dotnet",
    "make",
    "just",
}


@dataclass(frozen=True)
class Rule:
    action: Action
    tool: str
    command: tuple[str, ...] = ()
    """For shell_exec: the words a command must start with; empty means any command."""
    scope: Scope = "session"
    workspace: str | None = None
    """For project rules: the workspace they belong to."""

    def describe(self) -> str:
        what = self.tool + (f" `{' '.join(self.command)}`" if self.command else "")
        return f"{self.action} {what}"

    def covers(self, argv: Sequence[str]) -> bool:
        return list(argv[: len(self.command)]) == list(self.command)


def command_prefix(argv: Sequence[str]) -> tuple[str, ...]:
    """The prefix an "always" answer allows for one command: the program, and its
    subcommand for programs like git (``git status``) or ``python -m`` (``python -m pytest``)."""
    if not argv:
        return ()
    program = argv[0]
    if program.rsplit("/", 1)[-1].startswith("python") and len(argv) >= 3 and argv[1] == "-m":
        return tuple(argv[:3])
    if program in _SUBCOMMAND_PROGRAMS and len(argv) >= 2 and not argv[1].startswith("-"):
        return tuple(argv[:2])
    return (program,)


@dataclass(frozen=True)
class RuleMatch:
    action: Action
    rule: Rule

    @property
    def by(self) -> str:
        return f"rule:{self.rule.scope}: {self.rule.describe()}"


class RuleBook:
    """The rules in force for one workspace."""

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)

    def add(self, rule: Rule) -> None:
        if rule not in self.rules:
            self.rules.append(rule)

    def remove(self, rule: Rule) -> bool:
        if rule in self.rules:
            self.rules.remove(rule)
            return True
        return False

    def match(
        self, tool: str, commands: Sequence[Sequence[str]] | None, raw_command: str = ""
    ) -> RuleMatch | None:
        """The rule deciding this call: a deny if any applies, else an allow covering all of it.

        ``commands`` are the simple commands of a shell call (None for other tools);
        ``raw_command`` is its text, so a deny still applies to a line that could not be parsed.
        """
        for rule in self.rules:
            if (
                rule.action == "deny"
                and rule.tool == tool
                and self._deny_applies(rule, commands, raw_command)
            ):
                return RuleMatch("deny", rule)
        allows = [r for r in self.rules if r.action == "allow" and r.tool == tool]
        whole = next((r for r in allows if not r.command), None)
        if whole is not None:
            return RuleMatch("allow", whole)
        if tool != SHELL_TOOL or not commands:
            return None
        covering: list[Rule] = []
        for argv in commands:
            rule = next((r for r in allows if r.command and r.covers(argv)), None)
            if rule is None:
                return None
            covering.append(rule)
        return RuleMatch("allow", covering[0])

    @staticmethod
    def _deny_applies(
        rule: Rule, commands: Sequence[Sequence[str]] | None, raw_command: str
    ) -> bool:
        if not rule.command:
            return True
        if commands and any(rule.covers(argv) for argv in commands):
            return True
        # A line the parser could not fully read is checked as text too: a deny must not be
        # dodged by quoting.
        words = raw_command.split()
        n = len(rule.command)
        return any(tuple(words[i : i + n]) == rule.command for i in range(len(words)))
