"""Approval rules: allow or deny a tool, or for shell_exec a command prefix, per scope.

Scopes: ``session`` (the "always" key; gone when the app exits), ``project`` (one workspace)
and ``user`` (everywhere). The last two live in the config file. A deny rule always wins;
an allow rule never approves a dangerous call by itself (the gate asks instead).

Shell prefixes match the *words* of each simple command the parser found: the program's base
name (``/usr/bin/git`` is ``git``) and its arguments without the program's global options
(``git -C . -c x=y commit`` is ``git commit``). So ``git status`` allows ``git status -s`` but
not ``git statusx`` nor ``git status; rm -rf ~`` (the ``rm`` needs an allow rule of its own).
A program whose name is computed when the line runs (``$t``, ``$(…)``) matches every deny rule
and no allow rule, and a prefix allow never covers a command that can run other programs or
write through its arguments (environment assignments, ``find -exec``, ``sed e``, ``git -c``,
output redirections …): the tool reports those as ``unallowable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["allow", "deny"]
Scope = Literal["session", "project", "user"]

SHELL_TOOL = "shell_exec"
# Programs whose first operand names what they do: "git status" differs from "git push".
# The value lists their global options that take a separate value (``git -C DIR status``).
_SUBCOMMAND_PROGRAMS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"}
    ),
    "npm": frozenset({"--prefix", "-w", "--workspace", "--userconfig", "--cache"}),
    "yarn": frozenset({"--cwd"}),
    "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "cargo": frozenset({"-C", "--config", "-Z", "--manifest-path"}),
    "go": frozenset({"-C"}),
    "uv": frozenset({"--directory", "--project", "--config-file", "--cache-dir", "-p"}),
    "pip": frozenset({"--proxy", "--log", "--cache-dir", "-r"}),
    "pip3": frozenset({"--proxy", "--log", "--cache-dir", "-r"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "docker": frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}),
    "kubectl": frozenset({"-n", "--namespace", "--context", "--kubeconfig", "-s", "--server"}),
    "gh": frozenset({"-R", "--repo"}),
    "apt": frozenset({"-o", "-c", "-t"}),
    "apt-get": frozenset({"-o", "-c", "-t"}),
    "brew": frozenset(),
    "dotnet": frozenset(),
    "make": frozenset({"-C", "-f", "--file", "--directory", "-j", "-l", "-o", "-W", "-I"}),
    "just": frozenset({"-f", "--justfile", "-d", "--working-directory"}),
    "systemctl": frozenset({"-H", "--host", "-M", "--machine"}),
}
# Programs that run what they are given: an "always" answer never covers one alone, only the
# script or target it was approved with.
INTERPRETERS = frozenset(
    {
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "fish",
        "python",
        "python2",
        "python3",
        "perl",
        "ruby",
        "node",
        "deno",
        "bun",
        "php",
        "lua",
        "Rscript",
        "java",
        "npx",
        "pnpx",
        "bunx",
        "uvx",
        "busybox",
        "toybox",
    }
)
# Subcommands that run something named next: ``npm run build`` is not ``npm run``.
_RUNNER_SUBCOMMANDS = frozenset({"run", "exec", "x", "dlx", "tool"})
COMPUTED = "<computed program>"
"""How a program whose name is computed at run time is shown."""


def _base(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def command_words(argv: Sequence[str]) -> tuple[str, ...]:
    """The words rules match: the program's base name, then its arguments without the global
    options that come before its subcommand (for programs with subcommands)."""
    if not argv:
        return ()
    program = _base(argv[0])
    args = list(argv[1:])
    takes_value = _SUBCOMMAND_PROGRAMS.get(program)
    if takes_value is None:
        return (program, *args)
    i = 0
    while i < len(args) and args[i].startswith(("-", "+")) and args[i] != "--":
        i += 2 if args[i] in takes_value else 1
    if i < len(args) and args[i] == "--":
        i += 1
    return (program, *args[i:])


@dataclass(frozen=True)
class CommandFacts:
    """One simple command of a shell call, as the approval rules see it."""

    words: tuple[str, ...]
    """``command_words`` of its argv."""
    computed: bool = False
    """The program's name is only known when the line runs (``$t x``, ``$(…) x``)."""
    unallowable: str = ""
    """Why no prefix allow rule may cover it (it can run programs or write files through its
    arguments), or empty."""


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

    def covers(self, words: Sequence[str]) -> bool:
        wanted = command_words(self.command)
        return tuple(words[: len(wanted)]) == wanted


def command_prefix(command: CommandFacts | Sequence[str]) -> tuple[str, ...]:
    """The prefix an "always" answer allows for one command, as narrow as the command itself:
    the program with its subcommand (``git log``), ``python -m pytest``, an interpreter with its
    script (``python3 tool.py``), a runner with what it runs (``npm run build``). Empty when
    nothing narrower than "anything" would describe it (a computed program, an interpreter
    given code inline)."""
    facts = command if isinstance(command, CommandFacts) else CommandFacts(command_words(command))
    words = facts.words
    if not words or facts.computed or facts.unallowable:
        return ()
    program, args = words[0], words[1:]
    if program.startswith("python") and len(args) >= 2 and args[0] == "-m":
        return words[:3]
    if program in INTERPRETERS:
        script = next((a for a in args if not a.startswith("-")), None)
        if script is None or any(a in ("-c", "-e", "-s", "-", "--eval") for a in args):
            return ()
        return (program, *args[: args.index(script) + 1])
    if program in _SUBCOMMAND_PROGRAMS and args and not args[0].startswith("-"):
        if args[0] in _RUNNER_SUBCOMMANDS:
            target = next((a for a in args[1:] if not a.startswith("-")), None)
            return (program, args[0], target) if target else ()
        return words[:2]
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

    def match(self, tool: str, commands: Sequence[CommandFacts] | None) -> RuleMatch | None:
        """The rule deciding this call: a deny if any applies, else an allow covering all of it.

        ``commands`` are the simple commands of a shell call (None for other tools); a line the
        parser could not read arrives as one computed command, which every deny matches.
        """
        for rule in self.rules:
            if rule.action == "deny" and rule.tool == tool and self._deny_applies(rule, commands):
                return RuleMatch("deny", rule)
        allows = [r for r in self.rules if r.action == "allow" and r.tool == tool]
        whole = next((r for r in allows if not r.command), None)
        if whole is not None:
            return RuleMatch("allow", whole)
        if tool != SHELL_TOOL or not commands:
            return None
        covering: list[Rule] = []
        for command in commands:
            if command.computed or command.unallowable:
                return None
            found = next((r for r in allows if r.command and r.covers(command.words)), None)
            if found is None:
                return None
            covering.append(found)
        return RuleMatch("allow", covering[0])

    @staticmethod
    def _deny_applies(rule: Rule, commands: Sequence[CommandFacts] | None) -> bool:
        if not rule.command:
            return True
        return bool(commands) and any(c.computed or rule.covers(c.words) for c in commands or ())
