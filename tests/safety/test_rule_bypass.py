"""Approval rules cannot be dodged or stretched (hostile review, classes 1, 2 and 8).

A deny matches the program whatever path, global options or computed name it hides behind; an
allow covers only commands that cannot run other programs or write through their arguments;
"always" grants no more than the command that was approved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pheron_tui.core.approval import ApprovalGate, CallFacts
from pheron_tui.core.rules import Rule, RuleBook
from pheron_tui.core.tools import ToolContext
from pheron_tui.tools.builtin import default_registry

from ..command import run_scripted, tool_call


def facts(command: str, workspace: Path) -> CallFacts:
    """What the gate sees for a shell call, built by the real tool."""
    registry = default_registry()
    prepared = registry.prepare("shell_exec", {"command": command})
    assessed = prepared.tool.assess(prepared.args, ToolContext(workspace=workspace))
    return CallFacts("shell_exec", assessed.tier, assessed.commands)


def decide(policy: str, rules: list[Rule], command: str, workspace: Path):
    return ApprovalGate(policy, RuleBook(rules)).automatic(facts(command, workspace))  # type: ignore[arg-type]


DENY_TOUCH = Rule("deny", "shell_exec", ("touch",))
DENY_COMMIT = Rule("deny", "shell_exec", ("git", "commit"))


@pytest.mark.parametrize(
    "command",
    [
        "touch x",
        "/usr/bin/touch x",
        "./../../usr/bin/touch x",
        "t=touch; $t x",
        "${T:-touch} x",
        "$(echo touch) x",
        "`echo touch` x",
        "/???/bin/tou?h x",
        "\\touch x",
        "'touch' x",
        "to''uch x",
        "command touch x",
        "env -i touch x",
        "nice -n 5 touch x",
        "timeout 5 touch x",
        "strace -o /dev/null touch x",
        "busybox touch x",
        "find . -maxdepth 0 -exec touch x \\;",
        "echo x | xargs touch",
        "sh -c 'touch x'",
        "env -S 'touch x'",
        "ls; touch x",
        "ls\ntouch x",
        "git -C . commit -m x",
        "/usr/bin/git commit -m x",
        "git -c user.name=x commit -m x",
        "git --no-pager --git-dir=.git commit -m x",
        "git --work-tree . commit",
        "git commit --amend 'unclosed",
    ],
)
def test_a_deny_rule_cannot_be_dodged(command: str, workspace: Path) -> None:
    decision = decide("all", [DENY_TOUCH, DENY_COMMIT], command, workspace)
    assert decision is not None and not decision.approved, command
    assert decision.by.startswith("rule:"), decision.by


def test_a_deny_rule_leaves_other_programs_alone(workspace: Path) -> None:
    for command in ("ls -la", "git status", "git log --grep commit", "echo touch"):
        decision = decide("all", [DENY_TOUCH, DENY_COMMIT], command, workspace)
        assert decision is not None and decision.approved, command


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        (
            ("git", "status"),
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
            "GIT_CONFIG_VALUE_0='touch pwned' git status",
        ),
        (("git", "status"), "env GIT_DIR=/tmp git status"),
        (("git", "status"), "git -c core.fsmonitor='touch pwned' status"),
        (("git", "status"), "git status > main.py"),
        (("git", "log"), "git -c alias.log='!touch pwned' log"),
        (("git", "log"), "git log --output=/tmp/x"),
        (("git", "fetch"), "git fetch --upload-pack='touch pwned' origin"),
        (("git",), "git -c alias.x='!touch pwned' x"),
        (("git",), "git x"),
        (("find",), "find . -exec sh -c 'touch pwned' \\;"),
        (("find",), "find . -execdir touch pwned \\;"),
        (("find",), "find . -ok touch pwned \\;"),
        (("find",), "find . -fprint pwned"),
        (("find",), "find . -delete"),
        (("sed",), "sed 'e touch pwned' notes.md"),
        (("sed",), "sed '1e touch pwned' notes.md"),
        (("sed",), "sed 's/a/touch pwned/e' notes.md"),
        (("sed",), "sed 'w pwned' notes.md"),
        (("sed",), "sed -i s/a/b/ notes.md"),
        (("sed",), "sed --in-place=.bak s/a/b/ notes.md"),
        (("sed",), "sed -f script.sed notes.md"),
        (("sed",), "sed '" + "s/a/b/;" * 200 + "1e touch pwned' notes.md"),  # too long to check
        (("awk",), "awk 'BEGIN { system(\"touch pwned\") }'"),
        (("awk",), "awk '{ print > \"pwned\" }' notes.md"),
        (("tar",), "tar --to-command='touch pwned' -xf a.tar"),
        (("tar",), "tar -I 'touch pwned' -xf a.tar"),
        (("rsync",), "rsync -e 'touch pwned' a b"),
        (("ls",), "ls > main.py"),
        (("ls",), "ls >> main.py"),
        (("ls",), "ls &> main.py"),
        (("ls",), "LD_PRELOAD=./evil.so ls"),
        (("ls",), "echo x | xargs ls"),
        (("rm",), "find . -name '*.py' -exec rm {} +"),
    ],
)
def test_an_allow_rule_never_covers_a_command_that_runs_or_writes_through_it(
    rule: tuple[str, ...], command: str, workspace: Path
) -> None:
    decision = decide("ask", [Rule("allow", "shell_exec", rule)], command, workspace)
    assert decision is None or not decision.approved, command  # asked, never auto-approved


def test_allow_rules_still_cover_plain_commands(workspace: Path) -> None:
    rules = [
        Rule("allow", "shell_exec", ("git", "status")),
        Rule("allow", "shell_exec", ("ls",)),
        Rule("allow", "shell_exec", ("sed",)),
        Rule("allow", "shell_exec", ("find",)),
    ]
    for command in (
        "git status -s",
        "/usr/bin/git status",
        "git --no-pager status",
        "ls -la 2>/dev/null",
        "sed -n 1,5p notes.md",
        "sed s/a/b/ notes.md",
        "find . -name '*.md'",
    ):
        decision = decide("ask", rules, command, workspace)
        assert decision is not None and decision.approved, command


async def _always(command: str, workspace: Path) -> list[Rule]:
    gate = ApprovalGate("ask")
    waiting = asyncio.create_task(gate.wait("c1", facts(command, workspace)))
    await asyncio.sleep(0)
    gate.decide("c1", "always")
    assert (await waiting).approved
    return gate.rules.rules


@pytest.mark.parametrize(
    ("command", "granted"),
    [
        ("git --no-pager log -3", ("git", "log")),
        ("git -C sub status", ("git", "status")),
        ("python3 tool.py --fast", ("python3", "tool.py")),
        ("python -m pytest -q", ("python", "-m", "pytest")),
        ("node build.js", ("node", "build.js")),
        ("bash scripts/check.sh", ("bash", "scripts/check.sh")),
        ("npm run build", ("npm", "run", "build")),
        ("poetry run pytest", ("poetry", "run", "pytest")),
        ("make test", ("make", "test")),
        ("ls -la", ("ls",)),
    ],
)
async def test_always_grants_no_more_than_the_command(
    command: str, granted: tuple[str, ...], workspace: Path
) -> None:
    assert await _always(command, workspace) == [Rule("allow", "shell_exec", granted)]


async def test_what_always_granted_does_not_stretch(workspace: Path) -> None:
    gate = ApprovalGate("ask", RuleBook(await _always("git --no-pager log", workspace)))
    assert gate.automatic(facts("git log --oneline", workspace)).approved
    for later in (
        "git -c alias.x='!touch pwned' x",
        "git -c core.pager='touch pwned' log",
        "git push",
        "git log > out.txt",
    ):
        assert gate.automatic(facts(later, workspace)) is None, later
    gate = ApprovalGate("ask", RuleBook(await _always("python3 tool.py", workspace)))
    for later in ("python3 other.py", "python3 -c 'import os'", "python3"):
        assert gate.automatic(facts(later, workspace)) is None, later


@pytest.mark.parametrize("command", ["python3 -c 'print(1)'", "cat x | xargs ls", "$T x"])
def test_always_is_not_offered_where_nothing_narrow_describes_the_command(
    command: str, workspace: Path
) -> None:
    assert facts(command, workspace).always_rules() == []


@pytest.mark.parametrize(
    "attempts",
    [["/usr/bin/touch a1", "t=touch; $t a2"], ["busybox touch a3", "env touch a4"]],
)
def test_a_headless_run_with_deny_rules_runs_nothing_denied(
    attempts: list[str], workspace: Path, tmp_path: Path
) -> None:
    """Through the real command: deny touch and deny git commit under --approve all (two
    attempts per run: a third denial in a row ends the task)."""
    config = tmp_path / "config.toml"
    config.write_text(
        '[[rules]]\naction = "deny"\ntool = "shell_exec"\ncommand = "touch"\n'
        '[[rules]]\naction = "deny"\ntool = "shell_exec"\ncommand = "git commit"\n'
    )
    plan = [tool_call("shell_exec", command=c) for c in attempts] + ["gave up"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    done, events = run_scripted(
        workspace,
        replies,
        "--json",
        "--approve",
        "all",
        "--sandbox",
        "off",
        "--config",
        str(config),
    )
    decided = [e for e in events if e["type"] == "ToolCallDecided"]
    assert [d["decision"] for d in decided] == ["denied"] * 2, done.stderr
    assert not any((workspace / f"a{i}").exists() for i in range(1, 5))
