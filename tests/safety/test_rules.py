"""Approval rules: deny wins, dangerous calls always ask, prefixes match whole commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pheron_tui.config import TOOL_NAMES, ConfigError, load_settings
from pheron_tui.core.approval import ApprovalGate, CallFacts
from pheron_tui.core.rules import Rule, RuleBook, command_prefix
from pheron_tui.rules_file import delete_rule, rules_for, save_rule
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.shell_risk import assess_shell


def shell(command: str, workspace: Path) -> CallFacts:
    risk = assess_shell(command, workspace)
    return CallFacts(
        tool="shell_exec",
        risk=risk.tier,
        commands=risk.commands,
    )


def gate(policy: str, *rules: Rule) -> ApprovalGate:
    return ApprovalGate(policy, RuleBook(rules))  # type: ignore[arg-type]


GIT_STATUS = Rule("allow", "shell_exec", ("git", "status"))


def test_a_prefix_rule_allows_that_command_only(workspace: Path) -> None:
    g = gate("ask", GIT_STATUS)
    assert g.automatic(shell("git status -s", workspace)).approved
    for other in ("git statusx", "git push", "ls", "git status; rm x", "git status | sh"):
        assert g.automatic(shell(other, workspace)) is None, other


def test_a_compound_command_needs_a_rule_for_every_part(workspace: Path) -> None:
    g = gate("ask", GIT_STATUS, Rule("allow", "shell_exec", ("ls",)))
    assert g.automatic(shell("git status && ls -la", workspace)).approved
    assert g.automatic(shell("git status && ls -la && cat x", workspace)) is None


def test_deny_wins_over_allow_and_over_policy_all(workspace: Path) -> None:
    deny = Rule("deny", "shell_exec", ("git", "push"), scope="user")
    for policy in ("ask", "read-only", "all"):
        decision = gate(policy, Rule("allow", "shell_exec"), deny).automatic(
            shell("git add . && git push", workspace)
        )
        assert decision is not None and not decision.approved
        assert decision.by == "rule:user: deny shell_exec `git push`"


def test_deny_applies_even_when_the_line_cannot_be_parsed(workspace: Path) -> None:
    g = gate("all", Rule("deny", "shell_exec", ("git", "push")))
    decision = g.automatic(shell("git push 'unclosed", workspace))
    assert decision is not None and not decision.approved


def test_a_dangerous_call_is_never_approved_by_a_rule(workspace: Path) -> None:
    g = gate("read-only", Rule("allow", "shell_exec"), Rule("allow", "shell_exec", ("rm",)))
    assert g.automatic(shell("rm -rf build", workspace)) is None  # asks
    assert g.automatic(shell("rm one.txt", workspace)).approved


def test_tool_rules_and_policies() -> None:
    read = CallFacts("read_file", "read")
    write = CallFacts("write_file", "write")
    assert gate("read-only").automatic(read).approved
    assert gate("read-only").automatic(write) is None
    assert gate("ask", Rule("allow", "write_file")).automatic(write).approved
    assert not gate("ask", Rule("deny", "read_file")).automatic(read).approved
    assert not gate("none", Rule("allow", "read_file")).automatic(read).approved


async def test_always_adds_session_rules_for_each_command_prefix(workspace: Path) -> None:
    g = gate("ask")
    facts = shell("git status && python -m pytest -q", workspace)
    waiting = asyncio.create_task(g.wait("c1", facts))
    await asyncio.sleep(0)
    g.decide("c1", "always")
    decision = await waiting
    assert decision.approved and "git status" in decision.by
    assert g.rules.rules == [
        Rule("allow", "shell_exec", ("git", "status")),
        Rule("allow", "shell_exec", ("python", "-m", "pytest")),
    ]
    assert g.automatic(shell("git status -s", workspace)).approved
    assert g.automatic(shell("git push", workspace)) is None


def test_always_is_not_offered_for_a_dangerous_call(workspace: Path) -> None:
    assert shell("rm -rf build", workspace).always_rules() == []


def test_command_prefixes() -> None:
    assert command_prefix(["git", "status", "-s"]) == ("git", "status")
    assert command_prefix(["git", "-C", "x", "log"]) == ("git", "log")
    assert command_prefix(["pytest", "-q"]) == ("pytest",)
    assert command_prefix(["python3", "-m", "pytest", "-q"]) == ("python3", "-m", "pytest")


def test_rules_round_trip_through_the_config_file_keeping_comments(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# mine\nmax_steps = 5  # short\n")
    project = tmp_path / "project"
    project.mkdir()
    kept = Rule("allow", "shell_exec", ("git", "status"), "project", str(project.resolve()))
    deny = Rule("deny", "shell_exec", ("git", "push"), "user")
    save_rule(config, kept)
    save_rule(config, deny)
    save_rule(config, deny)  # saved once
    text = config.read_text()
    assert "# mine" in text and "# short" in text and text.count("[[rules]]") == 2

    settings = load_settings(config_path=config, environ={})
    assert rules_for(settings.rules, project) == [kept, deny]
    assert rules_for(settings.rules, tmp_path) == [deny]  # project rules stay in their project

    assert delete_rule(config, kept)
    assert not delete_rule(config, kept)
    settings = load_settings(config_path=config, environ={})
    assert rules_for(settings.rules, project) == [deny]
    assert "# mine" in config.read_text()


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ('action = "allow"\ntool = "shell"', "unknown tool 'shell'"),
        ('action = "maybe"\ntool = "shell_exec"', "rules.0.action"),
        ('action = "allow"\ntool = "read_file"\ncommand = "ls"', "only applies to shell_exec"),
    ],
)
def test_a_broken_rule_gets_a_clear_message(tmp_path: Path, rule: str, problem: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[[rules]]\n{rule}\n")
    with pytest.raises(ConfigError, match=problem) as raised:
        load_settings(config_path=config, environ={})
    assert str(config) in str(raised.value)


def test_rule_tool_names_are_the_registry_names() -> None:
    assert set(TOOL_NAMES) == set(default_registry().names())
