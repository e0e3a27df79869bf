"""What a prefix allow rule may cover: never a command that can run other programs or write
files through its arguments (environment assignments, output redirections, ``find -exec``,
``sed e``, ``awk system()``, ``git -c`` and aliases, ``tar --to-command`` …). Such a command is
approved by a person each time, whatever ``allow git status`` or ``allow find`` says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pheron_tui.core.rules import command_words
from pheron_tui.tools.shell_parse import FIND_EXEC, SimpleCommand

HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"}
GIT_COMMANDS = {
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
    "cat-file", "check-ignore", "checkout", "cherry", "cherry-pick", "clean", "clone", "commit",
    "config", "count-objects", "describe", "diff", "diff-files", "diff-index", "diff-tree",
    "fetch", "format-patch", "fsck", "gc", "grep", "help", "init", "log", "ls-files",
    "ls-remote", "ls-tree", "merge", "merge-base", "mv", "notes", "pull", "push", "range-diff",
    "rebase", "reflog", "remote", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
    "shortlog", "show", "show-ref", "stash", "status", "submodule", "switch", "tag", "version",
    "whatchanged", "worktree",
}  # fmt: skip
# Options that make a program run another program (or a pager, a diff tool, a hook).
_RUNS_PROGRAMS: dict[str, tuple[str, ...]] = {
    "git": (
        "-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--exec",
        "-u", "--ext-diff", "--textconv", "-O", "--open-files-in-pager", "--tool", "-x",
    ),
    "tar": (
        "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--rsh-command",
        "--info-script", "-F", "--new-volume-script",
    ),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "zip": ("-TT", "--unzip-command"),
    "sort": ("--compress-program",),
    "rg": ("--pre",),
    "fd": ("-x", "-X", "--exec", "--exec-batch"),
    "vim": ("-c", "+", "--cmd", "-S"),
    "vi": ("-c", "+", "--cmd", "-S"),
    "nvim": ("-c", "+", "--cmd", "-S"),
    "less": ("+",),
    "ssh": ("-o",),
    "make": ("-f", "--file", "--eval", "SHELL="),
}  # fmt: skip
_FIND_WRITES = {"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
_AWK = {"awk", "gawk", "mawk", "nawk", "busybox awk"}
# sed commands that run a program or write a file: e, w and W, and the s command's e/w flags.
_SED_RUNS = re.compile(r"(^|[;\n{}!]|[0-9$/])\s*[ewW]\b|s(.).*?\2.*?\2[gpiImM0-9]*[ew]")
MAX_CHECKED_SED_SCRIPT = 1000
"""Longer, and ``_SED_RUNS`` (which backtracks over every ``s``) is not asked: not allowed."""


def effective(command: SimpleCommand) -> tuple[str, list[str]]:
    """The program and arguments that matter: without global options (``git -C . pull`` is
    ``git pull``), and ``python -m pip install`` is ``pip install``."""
    words = command_words(command.argv)
    program, args = (words[0], list(words[1:])) if words else ("", [])
    if program.startswith("python") and len(args) >= 2 and args[0] == "-m":
        return args[1], args[2:]
    return program, args


def option_flags(args: list[str]) -> set[str]:
    """Single-letter flags (``-rf`` → r, f) and long options, before a ``--``."""
    found: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            found.add(arg)
        elif arg.startswith("-") and len(arg) > 1:
            found.update(arg[1:])
    return found


def unallowable(command: SimpleCommand) -> str:
    """Why a prefix allow rule must not approve this command, or empty."""
    if command.computed:
        return "its program is computed when it runs"
    if command.assignments:
        return "it sets environment variables for the program"
    if any(op in (">", ">>", ">|", "&>", "&>>", "<>") and t not in HARMLESS_TARGETS
           for op, t in command.redirects):  # fmt: skip
        return "it writes a file through a redirection"
    if any(w == "xargs" or w.startswith("find ") for w in command.wrappers):
        return f"it runs with arguments chosen at run time ({command.wrappers[-1]})"
    program, args = effective(command)
    if program == "find" and any(a in FIND_EXEC or a in _FIND_WRITES for a in args):
        return "find runs commands or writes files through its arguments"
    if program == "sed" and any(len(a) > MAX_CHECKED_SED_SCRIPT for a in args):
        return "its sed script is too long to check"
    if program == "sed" and (
        option_flags(args) & {"i", "--in-place", "f", "--file"}
        or any(a.startswith(("--in-place", "--file")) for a in args)
        or any(_SED_RUNS.search(a) for a in args if not a.startswith("-"))
    ):
        return "its sed script can run commands or write files"
    if program in _AWK and any(
        re.search(r"system\s*\(|\||>|getline", a) for a in args if not a.startswith("-")
    ):
        return "its awk program can run commands or write files"
    if program == "git" and args and args[0] not in GIT_COMMANDS:
        return f"git {args[0]!r} is not a git command, so it may be an alias"
    if _option_used(command.argv[1:], _RUNS_PROGRAMS.get(program, ())):
        return f"{program} runs other programs through its options"
    if _option_used(command.argv[1:], ("-o", "--output", "--output-file", "--log-file")):
        return f"{program} writes a file named in its options"
    return ""


def _option_used(args: Sequence[str], options: Sequence[str]) -> bool:
    """Whether any of ``options`` appears: alone, as ``--opt=value``, or for a ``+`` or
    ``NAME=`` entry, as a word starting with it."""
    for arg in args:
        for option in options:
            if arg == option or arg.startswith(option + "="):
                return True
            if option.endswith(("+", "=")) and arg.startswith(option):
                return True
    return False
