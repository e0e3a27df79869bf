"""How risky a shell command is: execute, or dangerous with the reasons why.

Works on the parsed command (``shell_parse``), not on the text: ``rm -rf build`` is seen as the
program ``rm`` with a recursive flag whatever the quoting, and ``echo "rm -rf /"`` is not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core.events import Risk
from pheron_tui.tools.shell_parse import SHELLS, ParsedCommand, SimpleCommand, parse_command

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
NETWORK = DOWNLOADERS | {
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
# Programs that use the network only for some subcommands.
NETWORK_SUBCOMMANDS = {
    "git": {"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"},
    "pip": {"install", "download", "wheel"},
    "pip3": {"install", "download", "wheel"},
    "uv": {"pip", "add", "sync", "lock", "run", "tool"},
    "npm": {"install", "i", "ci", "add", "publish", "update"},
    "yarn": {"install", "add", "upgrade", "publish"},
    "pnpm": {"install", "i", "add", "update", "publish"},
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
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"}


@dataclass
class ShellRisk:
    tier: Risk
    reasons: list[str] = field(default_factory=list)
    parsed: ParsedCommand = field(default_factory=ParsedCommand)


def assess_shell(command: str, workspace: Path) -> ShellRisk:
    parsed = parse_command(command)
    reasons: list[str] = []
    if parsed.error:
        reasons.append(parsed.error)
    root = workspace.resolve()
    for simple in parsed.commands:
        reasons.extend(_command_reasons(simple, root))
    reasons.extend(_downloads_run(parsed))
    unique = list(dict.fromkeys(reasons))
    return ShellRisk(tier="dangerous" if unique else "execute", reasons=unique, parsed=parsed)


def _short(command: SimpleCommand) -> str:
    text = " ".join(command.argv)
    return text if len(text) <= 60 else text[:57] + "…"


def _command_reasons(command: SimpleCommand, root: Path) -> list[str]:
    reasons: list[str] = []
    program, args = command.program, command.argv[1:]
    raised = [w for w in command.wrappers if w in PRIVILEGE]
    if raised or program in PRIVILEGE:
        reasons.append(f"privilege escalation ({(raised or [program])[0]})")
    if program in SYSTEM or program.startswith("mkfs."):
        reasons.append(f"changes the system ({program})")
    if program == "dd" and any(a.startswith("of=") for a in args):
        reasons.append("dd writes raw data (of=)")
    if program in ("chmod",) and any(
        re.fullmatch(r"[0-7]?[2467][0-7]{3}|.*\+s.*", a) for a in args
    ):
        reasons.append("sets a setuid or setgid bit (chmod)")
    if program in ("kill", "pkill", "killall") and ("-1" in args or program == "killall"):
        reasons.append(f"kills processes broadly ({program})")
    if program == "eval":
        reasons.append("eval runs text that cannot be checked beforehand")
    reasons.extend(_mass_deletion(command))
    if program in NETWORK:
        reasons.append(f"uses the network ({program})")
    elif program in NETWORK_SUBCOMMANDS:
        sub = next((a for a in args if not a.startswith("-")), "")
        subs = NETWORK_SUBCOMMANDS[program]
        if not subs or sub in subs:
            reasons.append(f"uses the network ({program} {sub})".replace(" )", ")"))
    elif program == "rsync" and any(":" in a for a in args):
        reasons.append("uses the network (rsync to a host)")
    for target in _written_paths(command):
        if not _inside(target, root, command.cwd_hint):
            reasons.append(f"writes outside the workspace ({target})")
    return reasons


def _flags(args: list[str]) -> set[str]:
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


def _mass_deletion(command: SimpleCommand) -> list[str]:
    program, args = command.program, command.argv[1:]
    flags = _flags(args)
    targets = [a for a in args if not a.startswith("-")]
    if program == "rm":
        if flags & {"r", "R", "--recursive"}:
            return [f"deletes recursively ({_short(command)})"]
        if any(any(c in t for c in "*?[") for t in targets):
            return [f"deletes every file a pattern matches ({_short(command)})"]
        if len(targets) > 10:
            return [f"deletes {len(targets)} files"]
    if program == "find" and ("-delete" in args or ("-exec" in args and "rm" in args)):
        return [f"deletes every file find matches ({_short(command)})"]
    if program == "git" and args[:1] == ["clean"] and flags & {"f", "--force"}:
        return ["deletes untracked files (git clean -f)"]
    if program == "rsync" and any(a.startswith("--delete") for a in args):
        return ["deletes files at the destination (rsync --delete)"]
    if program in ("shred", "wipe"):
        return [f"destroys file contents ({program})"]
    return []


def _written_paths(command: SimpleCommand) -> list[str]:
    paths = [
        target
        for op, target in command.redirects
        if op in (">", ">>", ">|", "&>", "&>>", "<>") and target not in HARMLESS_TARGETS
    ]
    program, args = command.program, command.argv[1:]
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
    elif program in ("sed", "perl") and (flags := _flags(args)) and ("i" in flags):
        paths.extend(operands[1:] if program == "sed" else operands)
    return [p for p in paths if p not in HARMLESS_TARGETS]


def _inside(raw: str, root: Path, cwd_hint: str | None) -> bool:
    if not raw or raw.startswith("$") or "$(" in raw or "`" in raw:
        return False  # cannot be known before it runs: treat as outside
    home = os.path.expanduser("~")
    raw = re.sub(r"^~(?=/|$)", home, raw)
    base = root
    if cwd_hint is not None:
        hint = re.sub(r"^~(?=/|$)", home, cwd_hint)
        if hint.startswith("$") or "`" in hint:
            return False
        base = (root / hint) if not os.path.isabs(hint) else Path(hint)
    candidate = Path(raw) if os.path.isabs(raw) else base / raw
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):  # loops, overlong names, NUL bytes
        return False
    return resolved == root or resolved.is_relative_to(root)


def _downloads_run(parsed: ParsedCommand) -> list[str]:
    """A downloader and an interpreter in one line: downloaded code may be executed."""
    downloaders = [c for c in parsed.commands if c.program in DOWNLOADERS]
    interpreters = [
        c
        for c in parsed.commands
        if c.program in INTERPRETERS or any(w.split()[0] in SHELLS for w in c.wrappers)
    ]
    if downloaders and interpreters:
        first, runner = downloaders[0].program, interpreters[0].program
        return [f"runs downloaded code ({first} into {runner})"]
    return []
