"""On screen: risk reasons on the card, no "always" for a dangerous call, the rules screen."""

from __future__ import annotations

import json
from pathlib import Path

from pheron_tui.core.rules import Rule
from pheron_tui.ui.screens.rules import RulesScreen
from pheron_tui.ui.widgets.tool_log import ToolCard

from .helpers import idle, make_app, send, wait_for


def shell(command: str) -> str:
    body = json.dumps({"name": "shell_exec", "arguments": {"command": command}})
    return f"<tool_call>{body}</tool_call>"


def pending(app) -> bool:
    return bool(app.orchestrator.gate.pending) and bool(app.query(ToolCard))


async def test_a_dangerous_call_shows_why_and_offers_no_always(workspace: Path) -> None:
    app = make_app(
        workspace, classify=["task"], plan=[shell("rm -rf build"), "ok"], critic=["PASS: ok"]
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "clean")
        await wait_for(pilot, lambda: pending(app))
        card = app.query_one(ToolCard)
        assert "deletes recursively (rm -rf build)" in str(card._reasons.render())
        assert 'no "always"' in str(card._hint.render())
        footer_keys = {
            key for key, b in app.active_bindings.items() if b.binding.show and b.enabled
        }
        assert "y" in footer_keys and "a" not in footer_keys
        await pilot.press("a")  # ignored: not offered
        assert app.orchestrator.gate.pending and not app.orchestrator.gate.rules.rules
        await pilot.press("n")
        await wait_for(pilot, lambda: idle(app))
        assert card.status == "denied"


async def test_always_then_keep_for_the_project_then_revoke(workspace: Path) -> None:
    app = make_app(
        workspace,
        classify=["task"],
        plan=[shell("git status -s"), shell("git status"), "done"],
        critic=["PASS: ok"],
    )
    config = app.runtime.config_path
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "status")
        await wait_for(pilot, lambda: pending(app))
        assert "a always (allow shell_exec `git status`" in str(
            app.query_one(ToolCard)._hint.render()
        )
        await pilot.press("a")
        await wait_for(pilot, lambda: idle(app) and len(app.query(ToolCard)) == 2)
        second = app.query(ToolCard).last()
        assert second.by == "rule:session: allow shell_exec `git status`"

        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RulesScreen))
        await pilot.press("p")
        await pilot.pause()
        project = Rule(
            "allow", "shell_exec", ("git", "status"), "project", str(workspace.resolve())
        )
        assert app.orchestrator.gate.rules.rules == [project]
        assert 'command = "git status"' in config.read_text()
        await pilot.press("d")
        await pilot.pause()
        assert app.orchestrator.gate.rules.rules == []
        assert "git status" not in config.read_text()
        await pilot.press("escape")
        assert not isinstance(app.screen, RulesScreen)


async def test_decision_keys_do_nothing_under_a_dialog(workspace: Path) -> None:
    app = make_app(workspace, classify=["task"], plan=[shell("ls"), "ok"], critic=["PASS: ok"])
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "list")
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("f1")  # the help screen covers the card
        await pilot.press("y")
        await pilot.pause()
        assert app.orchestrator.gate.pending  # y did not approve a call the user cannot see
        await pilot.press("escape", "y")
        await wait_for(pilot, lambda: idle(app))
        assert app.query_one(ToolCard).status == "ok"
