"""Splitting a shell command line into the simple commands it runs, for risk and rules.

This is not a shell. It tokenises the way ``sh`` does (quotes, operators, newlines) and walks
the tokens into simple commands (argv + redirections), unwrapping ``sudo``-style wrappers and
``sh -c`` strings, and collecting ``$(…)``, backtick and ``<(…)`` substitutions as commands of
their own. Wherever it is unsure it errs towards seeing *more* commands, never fewer: a rule
can only allow a command line whose every part it has seen.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

CONTROL = (";;", "&&", "||", "|&", ";", "|", "&", "(", ")", "\n")
REDIRECTS = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<", "<&", "<>", ">", "<")
KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "until",
    "case",
    "esac",
    "{",
    "}",
    "!",
    "time",
}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish"}
# Multi-call binaries: ``busybox rm`` is ``rm``.
MULTI_CALL = {"busybox", "toybox"}

# Programs that run another command given after their own options, with the options that
# take a separate value.
_WRAPPERS: dict[str, set[str]] = {
    "nohup": set(),
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "setsid": set(),
    "nice": {"-n", "--adjustment"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p", "-t"},
    "sudo": {"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-R"},
    "doas": {"-u", "-C"},
    "pkexec": {"--user"},
    "runuser": {"-u", "-g", "-G"},
    "env": {"-u", "--unset", "-C", "--chdir"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--arg-file", "--delimiter"},
    "strace": {"-o", "-e", "-p", "-s", "-u", "-E", "-a"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u", "-a"},
    "time": {"-o", "--output", "-f", "--format"},
    "fakeroot": {"-l", "-s", "-i"},
    "unbuffer": set(),
    "chronic": set(),
    "proxychains": {"-f"},
    "proxychains4": {"-f"},
    "torsocks": {"-u", "-p", "-a", "-P"},
    "catchsegv": set(),
    "valgrind": set(),
    "firejail": set(),
    "unshare": {"-S", "-G", "--setuid", "--setgid", "--wd"},
    "systemd-run": {"-u", "--unit", "-p", "--property", "-E", "--setenv", "-M"},
    "taskset": set(),
    "chrt": set(),
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
    "caffeinate": set(),
}
# Wrappers whose first operand is theirs, not the command's.
_WRAPPER_OPERANDS = {"timeout": 1, "taskset": 1, "chrt": 1, "flock": 1}
# ``find … -exec CMD … ;`` and friends run a command of their own.
FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


@dataclass
class SimpleCommand:
    argv: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)
    """(operator, target) pairs such as ('>', 'out.txt')."""
    wrappers: list[str] = field(default_factory=list)
    """What it was run through: sudo, env, timeout, xargs, sh -c …"""
    pipeline: int = 0
    """Commands joined by ``|`` share a number; the next ``;`` or ``&&`` starts a new one."""
    cwd_hint: str | None = None
    """The directory an earlier ``cd`` in the same line moved to, if any."""
    assignments: list[str] = field(default_factory=list)
    """``NAME=value`` words before the program (or given to ``env``)."""
    piped_in: bool = False
    """Its standard input is the output of the command before it (``a | b``)."""

    @property
    def program(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def computed(self) -> bool:
        """The program's name is only known when the line runs: an expansion (``$t``,
        ``${x}``, ``$(…)``, backticks), a glob (``/???/r?``) or a brace list."""
        if not self.argv:
            return False
        name = self.argv[0]
        return not name or any(c in name for c in "$`*?[") or ("{" in name and "," in name)

    @property
    def stdin_redirected(self) -> bool:
        return any(op in ("<", "<<", "<<<", "<>", "<&") for op, _ in self.redirects)


@dataclass
class ParsedCommand:
    commands: list[SimpleCommand] = field(default_factory=list)
    error: str | None = None
    """Why the line could not be parsed (then ``commands`` is incomplete)."""
    has_substitution: bool = False


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # newlines separate commands; they must reach us as tokens
    lexer.commenters = ""  # '#' words stay visible: a comment can only add words, never hide
    lexer.whitespace_split = True
    tokens: list[str] = []
    for token in lexer:
        if token and set(token) <= set("();<>|&\n"):
            tokens.extend(_split_operators(token))
        else:
            tokens.append(token)
    return tokens


def _split_operators(run: str) -> list[str]:
    """shlex glues adjacent punctuation together (``;\\n``, ``>&``); split it into operators."""
    out: list[str] = []
    i = 0
    while i < len(run):
        for op in (*REDIRECTS, *CONTROL):
            if run.startswith(op, i):
                out.append(op)
                i += len(op)
                break
        else:
            out.append(run[i])
            i += 1
    return out


def _substitutions(word: str) -> list[str]:
    """The text inside each ``$(…)`` and backtick pair of a word (outermost only)."""
    found: list[str] = []
    i = 0
    while i < len(word):
        if word.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(word) and depth:
                depth += {"(": 1, ")": -1}.get(word[j], 0)
                j += 1
            found.append(word[i + 2 : j - 1] if depth == 0 else word[i + 2 :])
            i = j
        elif word[i] == "`":
            end = word.find("`", i + 1)
            found.append(word[i + 1 :] if end < 0 else word[i + 1 : end])
            i = len(word) if end < 0 else end + 1
        else:
            i += 1
    return found


def parse_command(text: str, _depth: int = 0) -> ParsedCommand:
    parsed = ParsedCommand()
    if _depth > 8:
        parsed.error = "commands nested too deeply to check"
        return parsed
    try:
        tokens = _tokens(text)
    except ValueError as exc:  # an unclosed quote
        parsed.error = f"the command cannot be parsed ({exc})"
        return parsed

    pipeline = 0
    cwd: str | None = None
    current = SimpleCommand(argv=[], pipeline=pipeline)
    i = 0

    def finish() -> None:
        nonlocal current, cwd
        if current.argv or current.redirects or current.assignments:
            _unwrap(current, parsed, _depth)
            current.cwd_hint = cwd
            parsed.commands.append(current)
            if current.program == "cd" and len(current.argv) > 1:
                cwd = current.argv[1]
        current = SimpleCommand(argv=[], pipeline=pipeline)

    while i < len(tokens):
        token = tokens[i]
        if token in REDIRECTS:
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if target == "(":  # process substitution <(…) or >(…): a command of its own
                depth, j = 1, i + 2
                while j < len(tokens) and depth:
                    depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                    j += 1
                inner = " ".join(
                    shlex.quote(t) if t not in CONTROL else t for t in tokens[i + 2 : j - 1]
                )
                parsed.has_substitution = True
                _merge(parsed, parse_command(inner, _depth + 1))
                current.argv.append("<(…)")
                i = j
                continue
            # "2>" reaches us as the word "2" then ">": that "2" is a file descriptor.
            if current.argv and current.argv[-1].isdigit():
                current.argv.pop()
            current.redirects.append((token, target))
            i += 2
            continue
        if token in CONTROL:
            if token in ("|", "|&"):
                finish()
                current.piped_in = True
            else:
                finish()
                pipeline += 1
                current.pipeline = pipeline
            i += 1
            continue
        if not current.argv and token in KEYWORDS:
            i += 1
            continue
        for inner in _substitutions(token):
            parsed.has_substitution = True
            _merge(parsed, parse_command(inner, _depth + 1))
        if not current.argv and "=" in token and token.split("=", 1)[0].isidentifier():
            current.assignments.append(token)  # VAR=value before the command
        else:
            current.argv.append(token)
        i += 1
    finish()
    return parsed


def _merge(into: ParsedCommand, other: ParsedCommand) -> None:
    into.commands.extend(other.commands)
    into.has_substitution = into.has_substitution or other.has_substitution
    if other.error and not into.error:
        into.error = other.error


def _unwrap(command: SimpleCommand, parsed: ParsedCommand, depth: int) -> None:
    """Peel wrappers (sudo, env, timeout, xargs, busybox, …) off so the real program is argv[0],
    and parse what runs a command of its own (``sh -c STRING``, ``env -S STRING``,
    ``find -exec``, ``watch``) as commands of their own."""
    while command.argv:
        program = command.program
        args = command.argv[1:]
        if program == "find":
            _find_exec(command, parsed, depth)
            return
        if program in SHELLS and "-c" in args:
            index = args.index("-c") + 1
            script = args[index] if index < len(args) else ""
            command.wrappers.append(f"{program} -c")
            _merge(parsed, parse_command(script, depth + 1))
            return
        if program in ("watch", "script", "su") and args:
            # These hand a string to a shell: watch joins its operands, script and su take -c.
            if program == "watch":
                rest = _skip_options(args, takes_value={"-n", "--interval", "-d"})
                script = " ".join(rest)
            elif "-c" in args and args.index("-c") + 1 < len(args):
                script = args[args.index("-c") + 1]
            else:
                return
            command.wrappers.append(f"{program} -c")
            _merge(parsed, parse_command(script, depth + 1))
            return
        if program == "env":
            split = next((a for a in args if a in ("-S", "--split-string")), None)
            if split is not None and args.index(split) + 1 < len(args):
                # env -S 'cmd args' splits one string into a command line.
                command.wrappers.append("env -S")
                _merge(parsed, parse_command(args[args.index(split) + 1], depth + 1))
                return
            rest = _skip_options(args, takes_value=_WRAPPERS["env"])
            while rest and "=" in rest[0] and not rest[0].startswith("-"):
                command.assignments.append(rest[0])
                rest = rest[1:]
        elif program in MULTI_CALL:
            rest = args if args and not args[0].startswith("-") else []
        elif program in _WRAPPERS:
            rest = _skip_options(args, takes_value=_WRAPPERS[program])
            rest = rest[_WRAPPER_OPERANDS.get(program, 0) :]
        else:
            return
        command.wrappers.append(program)
        if not rest:
            return
        command.argv = rest


def _find_exec(command: SimpleCommand, parsed: ParsedCommand, depth: int) -> None:
    """The commands ``find … -exec CMD … ;`` runs, as commands of their own."""
    args = command.argv
    i = 0
    while i < len(args):
        if args[i] in FIND_EXEC:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            inner = [a for a in args[i + 1 : end] if a != "{}"]
            if inner:
                found = SimpleCommand(argv=inner, wrappers=["find " + args[i]])
                found.pipeline, found.cwd_hint = command.pipeline, command.cwd_hint
                _unwrap(found, parsed, depth + 1)
                parsed.commands.append(found)
            i = end
        i += 1


def _skip_options(args: list[str], takes_value: set[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--":
            return args[i + 1 :]
        i += 2 if args[i] in takes_value else 1
    return args[i:]
