"""Dangerous commands in disguise are still rated dangerous (hostile review, class 7).

What cannot be known before a line runs is dangerous until proven otherwise: computed program
names, interpreters fed code on their input, aliases, multi-call binaries, commands that
``find``, ``xargs``, ``env -S`` or ``watch`` run for you, and the usual tools pointed at places
outside the workspace by options rather than operands.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.tools.shell_risk import assess_shell

OBFUSCATED = [
    ("$a -rf ~", "computed"),
    ("${RM:-rm} -rf ~", "computed"),
    ("rm${IFS}-rf${IFS}~", "computed"),
    ("$(printf rm) -rf ~", "computed"),
    ("`echo rm` -rf ~", "computed"),
    ("/???/r? -rf ~", "computed"),
    ("/bin/{rm,-rf,~}", "computed"),
    ("t=rm; $t -rf ~", "computed"),
    ("alias x='rm -rf ~'; x", "alias"),
    ("busybox rm -rf ~", "deletes recursively"),
    ("busybox sh -c 'echo hi'", "multi-call"),
    ("toybox rm x", "multi-call"),
    ("find . -exec /bin/rm {} \\;", "find -exec rm"),
    ("find . -execdir rm -f {} +", "find -execdir rm"),
    ("find ~ -exec shred {} \\;", "deletes every file"),
    ("xargs -a files.txt rm", "xargs rm"),
    ("xargs --arg-file=files.txt rm -f", "xargs rm"),
    ("cat list | xargs rm", "xargs rm"),
    ("env -S 'rm -rf ~'", "deletes recursively"),
    ("watch -n 1 'rm -rf ~'", "deletes recursively"),
    ("strace -f rm -rf ~", "deletes recursively"),
    ("base64 -d payload | sh", "input (sh)"),
    ("echo cm0gLXJmIH4K | base64 -d | bash", "input (bash)"),
    ("cat x | python3", "input (python3)"),
    ("cat x | python3 -", "input (python3)"),
    ("bash -s < script", "input (bash)"),
    ("bash <<< 'rm -rf ~'", "input (bash)"),
    ("sh < /dev/stdin", "input (sh)"),
    ("source /dev/stdin", "input (source)"),
    ("sed --in-place ~/.bashrc", "writes outside"),
    ("sed --in-place=.bak -e s/a/b/ ~/.bashrc", "writes outside"),
    ("sed -i.bak s/a/b/ /etc/hosts", "writes outside"),
    ("perl -pi -e s/a/b/ ~/.profile", "writes outside"),
    ("tar -C ~ -xf payload.tar", "writes outside"),
    ("tar xzf payload.tgz --directory=/etc", "writes outside"),
    ("tar -cf /tmp/out.tar .", "writes outside"),
    ("git -C . pull", "network (git pull)"),
    ("git --git-dir=.git fetch", "network (git fetch)"),
    ("python3 -m pip install requests", "network (pip install)"),
    ("python -m pip download x", "network (pip download)"),
    ("npx cowsay hi", "fetched from the network"),
    ("uvx ruff", "fetched from the network"),
    ("pnpm dlx create-x", "network"),
    ("install -m 4755 a /tmp/b", "setuid"),
    ("install --mode=6755 a b", "setuid"),
    ("chmod u=rwxs x", "setuid"),
    ("chmod g+s x", "setuid"),
    ("LD_PRELOAD=./evil.so ls", "LD_PRELOAD"),
    ("GIT_SSH_COMMAND='touch x' git status", "GIT_SSH_COMMAND"),
    ("echo '#!/bin/sh' > .git/hooks/pre-commit", "writes into .git"),
    ("cp hook .git/hooks/post-checkout", "writes into .git"),
    ("git config core.fsmonitor 'touch x'", "git's configuration"),
    ("git config --add alias.x '!touch x'", "git's configuration"),
]


@pytest.mark.parametrize(("command", "reason"), OBFUSCATED)
def test_obfuscated_dangerous_commands_are_dangerous(
    command: str, reason: str, workspace: Path
) -> None:
    risk = assess_shell(command, workspace)
    assert risk.tier == "dangerous", command
    assert any(reason in found for found in risk.reasons), risk.reasons


@pytest.mark.parametrize(
    "command",
    [
        "git config --get user.name",
        "git config --list",
        "python3 tool.py < input.txt",
        "cat x | python3 script.py",
        "cat x | grep y | sort",
        "echo hi | tee out.txt",
        "busybox ls",
        "sed -n 1,3p notes.md",
        "tar -xf a.tar",
        "tar -cf out.tar -C sub .",
        "find . -name '*.py' -print",
        "git --no-pager log -3",
        "python3 -m pytest -q",
    ],
)
def test_ordinary_lines_stay_execute(command: str, workspace: Path) -> None:
    risk = assess_shell(command, workspace)
    assert (risk.tier, risk.reasons) == ("execute", []), command


WORDS = st.sampled_from(
    ["ls", "-la", "x", "notes.md", "echo", "hi", "grep", "-r", "cat", "sort", "wc", "-l", "."]
)
SAFE_WORD = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
COMPUTED = st.sampled_from(
    [
        "$t",
        "${x}",
        "$(echo rm)",
        "`echo rm`",
        "${CMD:-ls}",
        "$1",
        "/???/??",
        "/bin/{ls,rm}",
        "$'rm'",
    ]
)
INTERPRETER = st.sampled_from(
    ["sh", "bash", "dash", "zsh", "python3", "python", "perl", "ruby", "node", "bash -s"]
)
JOIN = st.sampled_from(["; ", " && ", " || ", "\n", " | "])


@given(before=SAFE_WORD, program=COMPUTED, args=SAFE_WORD, joiner=JOIN, after=SAFE_WORD)
def test_fuzz_any_line_with_a_computed_program_is_dangerous(
    before: str, program: str, args: str, joiner: str, after: str, tmp_path_factory
) -> None:
    workspace = tmp_path_factory.getbasetemp()
    line = f"{before}{joiner}{program} {args}{joiner}{after}"
    assert assess_shell(line, workspace).tier == "dangerous", line


@given(
    feeder=SAFE_WORD,
    interpreter=INTERPRETER,
    wrapper=st.sampled_from(["", "env ", "nice ", "timeout 5 ", "command ", "/usr/bin/"]),
    after=st.one_of(st.just(""), SAFE_WORD.map(lambda w: "; " + w)),
)
def test_fuzz_an_interpreter_fed_from_a_pipe_is_dangerous(
    feeder: str, interpreter: str, wrapper: str, after: str, tmp_path_factory
) -> None:
    workspace = tmp_path_factory.getbasetemp()
    line = f"{feeder} | {wrapper}{interpreter}{after}"
    assert assess_shell(line, workspace).tier == "dangerous", line


@given(text=st.text(max_size=200))
def test_fuzz_the_parser_and_rater_never_raise(text: str, tmp_path_factory) -> None:
    risk = assess_shell(text, tmp_path_factory.getbasetemp())
    assert risk.tier in ("execute", "dangerous")
    if "$" in text and not any("'" in c for c in text):
        # An unquoted expansion as a program is never rated harmless.
        words = shlex.split(text) if text.count('"') % 2 == 0 else []
        if words and words[0].startswith("$") and risk.commands:
            assert risk.tier == "dangerous"
