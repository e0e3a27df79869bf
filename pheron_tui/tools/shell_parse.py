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
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"}

# Programs that run another command given after their own options.
_WRAPPERS_NO_ARG = {"nohup", "command", "builtin", "exec", "setsid", "nice", "stdbuf", "ionice"}
_WRAPPERS_PRIVILEGE = {"sudo", "doas", "pkexec", "runuser"}


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

    @property
    def program(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""


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
        if current.argv or current.redirects:
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
            else:
                finish()
                pipeline += 1
                current.pipeline = pipeline
            i += 1
            continue
        if not current.argv and token in KEYWORDS:
            i += 1
            continue
        if not current.argv and "=" in token and token.split("=", 1)[0].isidentifier():
            i += 1  # VAR=value before the command
            continue
        for inner in _substitutions(token):
            parsed.has_substitution = True
            _merge(parsed, parse_command(inner, _depth + 1))
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
    """Peel wrappers (sudo, env, timeout, xargs, …) off so the real program is argv[0], and
    parse ``sh -c STRING`` as commands of its own."""
    while command.argv:
        program = command.program
        args = command.argv[1:]
        if program in _WRAPPERS_PRIVILEGE or program in _WRAPPERS_NO_ARG or program == "env":
            rest = _skip_options(args, takes_value={"-u", "-g", "-C", "-n", "-c", "-S", "-o"})
            if program == "env":
                while rest and "=" in rest[0] and not rest[0].startswith("-"):
                    rest = rest[1:]
        elif program == "timeout":
            rest = _skip_options(args, takes_value={"-s", "-k", "--signal", "--kill-after"})
            rest = rest[1:]  # the duration
        elif program == "xargs":
            rest = _skip_options(args, takes_value={"-I", "-n", "-P", "-d", "-E", "-L", "-s"})
        elif program in SHELLS and "-c" in args:
            script = args[args.index("-c") + 1] if args.index("-c") + 1 < len(args) else ""
            command.wrappers.append(f"{program} -c")
            _merge(parsed, parse_command(script, depth + 1))
            return
        else:
            return
        command.wrappers.append(program)
        if not rest:
            return
        command.argv = rest


def _skip_options(args: list[str], takes_value: set[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--":
            return args[i + 1 :]
        i += 2 if args[i] in takes_value else 1
    return args[i:]
