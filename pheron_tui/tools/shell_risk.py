"""How risky a shell command is: execute, or dangerous with the reasons why.

Works on the parsed command (``shell_parse``), not on the text: ``rm -rf build`` is seen as the
program ``rm`` with a recursive flag whatever the quoting, and ``echo "rm -rf /"`` is not.
What cannot be known before the line runs is dangerous until proven otherwise: a computed
program name (``$t``, ``$(…)``), a shell or interpreter fed code on its input, an alias, a
multi-call binary's unfamiliar applet.

Per simple command it also reports why no prefix allow rule may cover it
(``shell_allow.unallowable``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core.events import Risk
from pheron_tui.core.rules import CommandFacts, command_words
from pheron_tui.core.safety import shorten
from pheron_tui.tools.shell_allow import HARMLESS_TARGETS, effective, option_flags, unallowable
from pheron_tui.tools.shell_parse import (
    MULTI_CALL,
    SHELLS,
    ParsedCommand,
    SimpleCommand,
    parse_command,
)

DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https", "xh"}
INTERPRETERS = SHELLS | {
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "source",
    ".",
    "eval",
}
# Runners that fetch a package from a registry and run it.
PACKAGE_RUNNERS = {"npx", "pnpx", "bunx", "uvx"}
NETWORK = (
    DOWNLOADERS
    | PACKAGE_RUNNERS
    | {
        "nc",
        "ncat",
        "netcat",
        "socat",
        "ssh",
        "scp",
        "sftp",
        "ftp",
        "telnet",
        "ping",
        "dig",
        "nslookup",
        "host",
        "whois",
    }
)
# Programs that use the network only for some subcommands.
NETWORK_SUBCOMMANDS = {
    "git": {"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"},
    "pip": {"install", "download", "wheel"},
    "pip3": {"install", "download", "wheel"},
    "uv": {"pip", "add", "sync", "lock", "run", "tool"},
    "npm": {"install", "i", "ci", "add", "publish", "update", "exec", "x"},
    "yarn": {"install", "add", "upgrade", "publish", "dlx"},
    "pnpm": {"install", "i", "add", "update", "publish", "dlx"},
    "pipx": {"install", "run", "upgrade", "inject"},
    "conda": {"install", "create", "update"},
    "gem": {"install", "update", "fetch"},
    "cargo": {"install", "fetch", "publish", "update", "add"},
    "go": {"get", "install", "mod"},
    "apt": {"install", "update", "upgrade", "download"},
    "apt-get": {"install", "update", "upgrade", "download", "source"},
    "docker": {"pull", "push", "login", "run", "build"},
    "gh": set(),  # every gh command talks to GitHub
}
PRIVILEGE = {"sudo", "su", "doas", "pkexec", "runuser", "chroot", "setcap", "nsenter"}
SYSTEM = {
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "mkfs",
    "fdisk",
    "parted",
    "wipefs",
    "mount",
    "umount",
    "swapon",
    "swapoff",
    "systemctl",
    "crontab",
    "iptables",
    "useradd",
    "userdel",
    "passwd",
    "visudo",
}
WRITERS = {"rm", "rmdir", "touch", "mkdir", "chmod", "chown", "chgrp", "truncate", "shred", "tee"}
COPIERS = {"cp", "mv", "install", "ln", "rsync"}  # the last argument (or -t DIR) is written
# Interpreters that read code from standard input when given no script.
STDIN_INTERPRETERS = SHELLS | {"python", "python2", "python3", "perl", "ruby", "node", "php"}
STDIN_PATHS = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}
# Applets of a multi-call binary that only read or print.
HARMLESS_APPLETS = {
    "ls", "cat", "echo", "printf", "grep", "head", "tail", "wc", "sort", "uniq", "pwd",
    "true", "false", "date", "basename", "dirname", "stat", "du", "df", "find", "which",
    "uname", "id", "whoami", "env", "diff", "cmp", "tr", "cut", "md5sum", "sha256sum",
}  # fmt: skip


@dataclass
class ShellRisk:
    tier: Risk
    reasons: list[str] = field(default_factory=list)
    parsed: ParsedCommand = field(default_factory=ParsedCommand)
    commands: list[CommandFacts] = field(default_factory=list)
    """What the approval rules match, one per simple command."""


def assess_shell(command: str, workspace: Path, protected: Sequence[Path] = ()) -> ShellRisk:
    """Rate ``command``; ``protected`` are folders it must not write (the app's own files)."""
    parsed = parse_command(command)
    reasons: list[str] = []
    facts: list[CommandFacts] = []
    if parsed.error:
        reasons.append(parsed.error)
        # What could not be read is unknown: it matches every deny rule and no allow rule.
        facts.append(CommandFacts((), computed=True, unallowable=parsed.error))
    root = workspace.resolve()
    guarded = [p.resolve() for p in protected]
    for simple in parsed.commands:
        reasons.extend(_command_reasons(simple, root, guarded))
        facts.append(
            CommandFacts(
                words=command_words(simple.argv),
                computed=simple.computed,
                unallowable=unallowable(simple),
            )
        )
    reasons.extend(_downloads_run(parsed))
    unique = list(dict.fromkeys(reasons))
    return ShellRisk(
        tier="dangerous" if unique else "execute", reasons=unique, parsed=parsed, commands=facts
    )


def short(command: SimpleCommand) -> str:
    return shorten(" ".join(command.argv), 60)


def _command_reasons(command: SimpleCommand, root: Path, protected: list[Path]) -> list[str]:
    reasons: list[str] = []
    if command.computed:
        reasons.append(
            f"the program is computed when the line runs ({shorten(command.argv[0], 40)}), "
            "so it could be any program"
        )
    program, args = effective(command)
    raised = [w for w in command.wrappers if w in PRIVILEGE]
    if raised or program in PRIVILEGE:
        reasons.append(f"privilege escalation ({(raised or [program])[0]})")
    if program in SYSTEM or program.startswith("mkfs."):
        reasons.append(f"changes the system ({program})")
    if loaders := [a.split("=", 1)[0] for a in command.assignments if _runs_code(a)]:
        reasons.append(f"sets {loaders[0]}, which makes programs run other code")
    if program == "alias":
        reasons.append("defines an alias, so a later word may run any program")
    if any(w in MULTI_CALL for w in command.wrappers) and program not in HARMLESS_APPLETS:
        reasons.append(f"runs the multi-call binary applet {program!r}")
    if program in STDIN_INTERPRETERS and _reads_code_from_input(command, args):
        reasons.append(f"runs code it reads from its input ({program})")
    if program in ("source", ".") and args and args[0] in STDIN_PATHS:
        reasons.append(f"runs code it reads from its input ({program})")
    if program == "dd" and any(a.startswith("of=") for a in args):
        reasons.append("dd writes raw data (of=)")
    if program in ("chmod", "install") and _sets_setuid(program, args):
        reasons.append(f"sets a setuid or setgid bit ({program})")
    if program in ("kill", "pkill", "killall") and ("-1" in args or program == "killall"):
        reasons.append(f"kills processes broadly ({program})")
    if program == "eval":
        reasons.append("eval runs text that cannot be checked beforehand")
    if program == "git" and args[:1] == ["config"] and _sets_git_config(args[1:]):
        reasons.append("changes git's configuration, which can make git run commands")
    reasons.extend(_mass_deletion(command, program, args))
    if program in PACKAGE_RUNNERS:
        reasons.append(f"runs a package fetched from the network ({program})")
    elif program in NETWORK:
        reasons.append(f"uses the network ({program})")
    elif program in NETWORK_SUBCOMMANDS:
        sub = next((a for a in args if not a.startswith("-")), "")
        subs = NETWORK_SUBCOMMANDS[program]
        if not subs or sub in subs:
            reasons.append(f"uses the network ({program} {sub})".replace(" )", ")"))
    elif program == "rsync" and any(":" in a for a in args):
        reasons.append("uses the network (rsync to a host)")
    for target in _written_paths(command, program, args):
        where = _place(target, root, command.cwd_hint, protected)
        if where == "outside":
            reasons.append(f"writes outside the workspace ({target})")
        elif where == "protected":
            reasons.append(f"writes pheron-tui's own settings or data ({target})")
        elif where == "git":
            reasons.append(f"writes into .git, whose hooks and config run commands ({target})")
    return reasons


# Variables that make an ordinary program load or run something else.
_CODE_VARIABLES = {
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PAGER",
    "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "PYTHONSTARTUP", "PYTHONPATH",
    "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "GIT_EXEC_PATH", "GIT_DIR", "GIT_TEMPLATE_DIR",
}  # fmt: skip


def _runs_code(assignment: str) -> bool:
    name = assignment.split("=", 1)[0]
    return name in _CODE_VARIABLES or name.startswith(("GIT_CONFIG", "LD_", "DYLD_"))


def _reads_code_from_input(command: SimpleCommand, args: list[str]) -> bool:
    """An interpreter whose code comes from its standard input (a pipe or a redirection)."""
    if any(a in STDIN_PATHS for a in args) or "-s" in args:
        return True
    inline = any(a in ("-c", "-e", "-E", "-m", "--eval") for a in args)
    script = next((a for a in args if not a.startswith("-")), None)
    fed = command.piped_in or command.stdin_redirected
    return fed and not inline and script is None


def _sets_setuid(program: str, args: list[str]) -> bool:
    if program == "install":
        modes = [
            args[i + 1] if a in ("-m", "--mode") and i + 1 < len(args) else a.split("=", 1)[-1]
            for i, a in enumerate(args)
            if a in ("-m", "--mode") or a.startswith("--mode=")
        ]
    else:
        modes = args
    # "u+s", "g=rxs": the who-letters before the sign may be none, so they are not searched
    # for (searching for them made a long argument of letters backtrack for seconds).
    return any(
        re.fullmatch(r"0*[2467][0-7]{3}", m) or re.search(r"[+=][rwxXt]*s", m) for m in modes
    )


def _sets_git_config(args: list[str]) -> bool:
    """``git config KEY VALUE`` (a write), not ``git config --get KEY`` or ``--list``."""
    reading = {"--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin"}
    if any(a in reading for a in args):
        return False
    operands = [a for a in args if not a.startswith("-")]
    return len(operands) >= 2 or any(a in ("--add", "--replace-all", "-e", "--edit") for a in args)


def _mass_deletion(command: SimpleCommand, program: str, args: list[str]) -> list[str]:
    flags = option_flags(args)
    targets = [a for a in args if not a.startswith("-")]
    found = []
    if program in ("rm", "unlink", "shred") and any(
        w == "xargs" or w.startswith("find ") for w in command.wrappers
    ):
        found.append(f"deletes every file named at run time ({command.wrappers[-1]} {program})")
    return found + _deletion(command, program, args, flags, targets)


def _deletion(
    command: SimpleCommand, program: str, args: list[str], flags: set[str], targets: list[str]
) -> list[str]:
    if program == "rm":
        if flags & {"r", "R", "--recursive"}:
            return [f"deletes recursively ({short(command)})"]
        if any(any(c in t for c in "*?[") for t in targets):
            return [f"deletes every file a pattern matches ({short(command)})"]
        if len(targets) > 10:
            return [f"deletes {len(targets)} files"]
    if program == "find" and "-delete" in args:
        return [f"deletes every file find matches ({short(command)})"]
    if program == "git" and args[:1] == ["clean"] and flags & {"f", "--force"}:
        return ["deletes untracked files (git clean -f)"]
    if program == "rsync" and any(a.startswith("--delete") for a in args):
        return ["deletes files at the destination (rsync --delete)"]
    if program in ("shred", "wipe"):
        return [f"destroys file contents ({program})"]
    return []


def _written_paths(command: SimpleCommand, program: str, args: list[str]) -> list[str]:
    paths = [
        target
        for op, target in command.redirects
        if op in (">", ">>", ">|", "&>", "&>>", "<>") and target not in HARMLESS_TARGETS
    ]
    flags = option_flags(args)
    operands = [a for a in args if not a.startswith("-")]
    if program in WRITERS:
        if program in ("chmod", "chown", "chgrp") and operands:
            operands = operands[1:]  # the mode or owner comes first
        paths.extend(operands)
    elif program in COPIERS and operands:
        if "-t" in args and args.index("-t") + 1 < len(args):
            paths.append(args[args.index("-t") + 1])
        elif program == "rsync" and any(":" in a for a in operands):
            pass  # a remote destination is reported as network use
        else:
            paths.append(operands[-1])
            if program == "mv":
                paths.extend(operands[:-1])  # moving a file away changes its old place too
    elif program == "dd":
        paths.extend(a[3:] for a in args if a.startswith("of="))
    elif program in ("sed", "perl") and (
        "i" in flags or any(a.startswith("--in-place") for a in args)
    ):
        # Every operand may be a file edited in place (the first is usually sed's script,
        # but not with -e or -f, and a wrong guess here only means asking).
        paths.extend(operands)
    elif program == "tar":
        paths.extend(_tar_writes(args))
    return [p for p in paths if p not in HARMLESS_TARGETS]


def _tar_writes(args: list[str]) -> list[str]:
    """Where tar writes: the folder it extracts into (-C), the archive it creates (-f)."""
    first = args[0] if args else ""
    letters = set(first) if first and not first.startswith("-") else set()  # tar xzf …
    letters |= option_flags(args)
    extracting = bool(letters & {"x", "--extract", "--get"})
    creating = bool(letters & {"c", "r", "u", "--create", "--append", "--update"})
    found: list[str] = []
    if creating and "f" in letters and first and not first.startswith("-") and len(args) > 1:
        found.append(args[1])  # tar cf ARCHIVE …
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-C", "--directory") or arg.startswith("--directory="):
            target = arg.split("=", 1)[1] if "=" in arg else value
            if extracting or not creating:
                found.append(target)
        archive = arg in ("--file",) or re.fullmatch(r"-[A-Za-z]*f", arg) is not None
        if creating and (archive or arg.startswith("--file=")):
            found.append(arg.split("=", 1)[1] if "=" in arg else value)
    return found


def written_files(command: str, workspace: Path) -> list[Path]:
    """The workspace paths a command line names to write (a redirection's target, what
    ``sed -i`` edits, ``cp``'s destination…), resolved; any it cannot place is left out."""
    parsed = parse_command(command)
    if parsed.error:
        return []
    root = workspace.resolve()
    found: dict[Path, None] = {}
    for simple in parsed.commands:
        if simple.computed:
            continue
        program, args = effective(simple)
        for target in _written_paths(simple, program, args):
            landing = _landing(target, root, simple.cwd_hint)
            if landing is not None and landing != root and landing.is_relative_to(root):
                found[landing] = None
    return list(found)


def _landing(raw: str, root: Path, cwd_hint: str | None) -> Path | None:
    """Where a written path lands, resolved; None when it cannot be known before it runs."""
    if not raw or raw.startswith("$") or "$(" in raw or "`" in raw:
        return None
    home = os.path.expanduser("~")
    raw = re.sub(r"^~(?=/|$)", home, raw)
    base = root
    if cwd_hint is not None:
        hint = re.sub(r"^~(?=/|$)", home, cwd_hint)
        if hint.startswith("$") or "`" in hint:
            return None
        base = (root / hint) if not os.path.isabs(hint) else Path(hint)
    candidate = Path(raw) if os.path.isabs(raw) else base / raw
    try:
        return candidate.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):  # loops, overlong names, NUL bytes
        return None


def _place(raw: str, root: Path, cwd_hint: str | None, protected: list[Path]) -> str:
    """Where a written path lands: inside, outside, protected (the app's files) or git."""
    resolved = _landing(raw, root, cwd_hint)
    if resolved is None:
        return "outside"  # cannot be known before it runs: treat as outside
    if any(resolved == p or resolved.is_relative_to(p) for p in protected):
        return "protected"
    if resolved != root and not resolved.is_relative_to(root):
        return "outside"
    if ".git" in resolved.relative_to(root).parts:
        return "git"
    return "inside"


def _downloads_run(parsed: ParsedCommand) -> list[str]:
    """A downloader and an interpreter in one line: downloaded code may be executed."""
    downloaders = [c for c in parsed.commands if c.program in DOWNLOADERS]
    interpreters = [
        c
        for c in parsed.commands
        if c.program in INTERPRETERS
        or c.computed
        or any(w.split()[0] in SHELLS for w in c.wrappers)
    ]
    if downloaders and interpreters:
        first, runner = downloaders[0].program, interpreters[0].program
        return [f"runs downloaded code ({first} into {runner})"]
    return []
