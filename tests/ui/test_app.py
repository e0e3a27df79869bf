"""The TUI driven with Pilot: approval keys, interrupts, literal text, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.ui.screens.help import HELP
from pheron_tui.ui.widgets.chat import AssistantMessage, Note, UserMessage
from pheron_tui.ui.widgets.critic import VerdictCard
from pheron_tui.ui.widgets.prompt import PromptInput
from pheron_tui.ui.widgets.status import StatusBar
from pheron_tui.ui.widgets.tool_log import ToolCard

from ..processes import running_with
from .helpers import BrokenProvider, idle, make_app, send, slow_chat_provider, wait_for

LIST = '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'
SIZE = (120, 40)


def pending(app) -> bool:
    return bool(app.orchestrator.gate.pending) and bool(app.query(ToolCard))


async def test_approve_runs_the_call_and_shows_output(workspace: Path) -> None:
    app = make_app(workspace, classify=["task"], plan=[LIST, "Two files."], critic=["PASS: ok"])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list files")
        await wait_for(pilot, lambda: pending(app))
        card = app.query_one(ToolCard)
        assert card.status == "pending" and card.has_class("-pending")
        assert app.query_one("#prompt", PromptInput).disabled
        await pilot.press("y")
        await wait_for(pilot, lambda: idle(app))
        assert card.status == "ok"
        assert "notes.md" in str(card._preview.render())
        assert app.query_one(VerdictCard)
        assert not app.query_one("#prompt", PromptInput).disabled


async def test_always_allows_the_tool_for_the_session(workspace: Path) -> None:
    again = LIST.replace('"."', '"./"')  # the same tool, not a repeat of the same call
    app = make_app(workspace, classify=["task"], plan=[LIST, again, "done"], critic=["PASS: ok"])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list twice")
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("a")
        await wait_for(pilot, lambda: idle(app))
        first, second = app.query(ToolCard)
        assert (first.status, second.status) == ("ok", "ok")
        assert second.by == "rule:session: allow list_dir"


async def test_deny_tells_the_model_and_marks_the_card(workspace: Path) -> None:
    app = make_app(
        workspace, classify=["task"], plan=[LIST, "I was not allowed."], critic=["FAIL: no"]
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list files")
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("n")
        await wait_for(pilot, lambda: idle(app))
        assert app.query_one(ToolCard).status == "denied"
        assert "denied" in app.runtime.provider.requests[2].messages[-1].content


@pytest.mark.parametrize("key", ["y", "n"])
async def test_the_status_says_planning_after_a_decision(key: str, workspace: Path) -> None:
    """After y or n the model plans again: the status must not keep saying it waits for you
    or runs a tool that has finished."""
    provider = ScriptedProvider(  # each chunk takes 0.5 s, like a prompt being read
        Script.model_validate(
            {"replies": {"classify": ["task"], "plan": [LIST, ["a", "b"]]}, "delay_s": 0.5}
        )
    )
    app = make_app(workspace, provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list files")
        await wait_for(pilot, lambda: pending(app), timeout=10)
        await pilot.press(key)
        card = app.query_one(ToolCard)
        await wait_for(pilot, lambda: card.status in ("ok", "denied"))
        state = app.query_one("#status").state
        assert state == "planning", state
        app.orchestrator.cancel()


async def test_approval_keys_never_reach_the_input(workspace: Path) -> None:
    script = Script.model_validate(
        {
            "replies": {"classify": ["task"], "plan": [LIST, ["ok"] * 5], "critic": ["PASS: ok"]},
            "delay_s": 0.2,
        }
    )
    app = make_app(workspace, provider=ScriptedProvider(script))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list")
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("x", "z", "q")  # stray keys while the call waits
        await pilot.press("a")
        await pilot.press("n", "y", "k")  # right after the decision, the turn still running
        assert app.orchestrator.busy
        assert app.query_one("#prompt", PromptInput).value == ""
        await wait_for(pilot, lambda: idle(app))
        assert app.query_one(ToolCard).status == "ok"
        assert app.query_one("#prompt", PromptInput).has_focus


async def test_a_double_tap_cannot_approve_a_card_nobody_has_seen(workspace: Path) -> None:
    app = make_app(workspace, classify=["task"], plan=[LIST, "ok"], critic=["PASS: ok"])
    app.DECISION_GUARD_S = 60.0
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list")
        await wait_for(pilot, lambda: pending(app))
        card = app.query_one(ToolCard)
        hint = str(card.query_one(".tool-hint", Static).render())
        assert "keys count in a moment" in hint and not card.has_class("-armed")
        await pilot.press("y")
        await pilot.pause(0.1)
        assert card.status == "pending"
        app._arm(card)  # the guard's timer firing: the hint lights up and the keys count
        assert card.has_class("-armed")
        assert "keys count in a moment" not in str(card.query_one(".tool-hint", Static).render())
        await pilot.press("y")
        await wait_for(pilot, lambda: card.status != "pending")
        app.orchestrator.cancel()
        await wait_for(pilot, lambda: idle(app))


async def test_typing_y_in_the_input_when_nothing_waits_is_just_text(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("y", "a", "n")
        assert app.query_one("#prompt", PromptInput).value == "yan"


async def test_escape_interrupts_a_stream(workspace: Path) -> None:
    app = make_app(workspace, provider=slow_chat_provider())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "talk forever")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)))
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app))
        notes = [str(n.render()) for n in app.query(Note)]
        assert any("cancelled" in n for n in notes)


async def test_escape_kills_a_running_shell_command(workspace: Path) -> None:
    """Escape kills the command and the child it sent to the background, sandboxed or not."""
    call = '<tool_call>{"name": "shell_exec", "arguments": {"command": "sleep 61.25 & sleep 60.25"}}</tool_call>'
    app = make_app(workspace, policy="all", classify=["task"], plan=[call])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "sleep")
        await wait_for(
            pilot, lambda: len(running_with("sleep 61.25")) >= 1 and running_with("sleep 60.25")
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app))
        assert app.query_one(ToolCard).status == "cancelled"
        await wait_for(pilot, lambda: not running_with("61.25"), timeout=3)


async def test_markup_and_escape_sequences_are_shown_literally(workspace: Path) -> None:
    hostile = "[bold red]x[/] [link=file:///etc/passwd]click[/link] \x1b[2J done"
    call = '<tool_call>{"name": "shell_exec", "arguments": {"command": "printf \'[red]out[/] \\\\033[2J\'"}}</tool_call>'
    app = make_app(
        workspace,
        policy="all",
        classify=["chat", "task"],
        chat=[hostile],
        plan=[call, "fine"],
        critic=[f"PASS: {hostile}"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "[b]user text[/b]")
        await wait_for(pilot, lambda: idle(app))
        answer = app.query_one(AssistantMessage)
        assert answer.text == hostile
        rendered = answer.source
        assert "[bold red]x[/]" in rendered and "\\x1b[2J" in rendered and "\x1b" not in rendered
        assert "[b]user text[/b]" in str(app.query_one(UserMessage).render())
        await send(pilot, "run it")
        await wait_for(pilot, lambda: idle(app) and bool(app.query(VerdictCard)))
        preview = str(app.query_one(ToolCard)._preview.render())
        assert "[red]out[/]" in preview and "\\x1b[2J" in preview
        verdict = str(app.query_one(VerdictCard).render())
        assert "[link=file:///etc/passwd]" in verdict and "\x1b" not in verdict


async def test_submitting_while_a_turn_runs_is_refused(workspace: Path) -> None:
    app = make_app(workspace, provider=slow_chat_provider())
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, "first")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)))
        await send(pilot, "second")
        assert app.query_one("#prompt", PromptInput).value == "second"  # kept, not lost
        assert any("Esc" in str(n.message) for n in app._notifications)
        assert [str(m.render()) for m in app.query(UserMessage)] == ["first"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app))


async def test_model_load_error_is_shown_and_the_app_stays_usable(workspace: Path) -> None:
    app = make_app(workspace, provider=BrokenProvider(Script()))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: bool(app.query(Note)))
        assert "no config.json" in str(app.query_one(Note).render())
        await send(pilot, "hello")
        assert any("could not be loaded" in str(n.message) for n in app._notifications)
        await pilot.press("f1")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.pause()
        # The help says how to close it, on screen and in its footer.
        assert app.screen.query("Footer")
        shown = {b.binding.key: b.binding.description for b in app.active_bindings.values()}
        assert shown.get("escape") == "Close help"
        await pilot.press("escape")
        assert app.screen.__class__.__name__ != "HelpScreen"


async def test_quitting_during_a_turn_asks_first(workspace: Path) -> None:
    app = make_app(workspace, provider=slow_chat_provider())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)))
        await pilot.press("ctrl+q")
        assert app.screen.__class__.__name__ == "ConfirmScreen"
        await pilot.pause()
        question = app.screen.query_one("#confirm-box Static")
        # The question is readable on one line, not squeezed into an empty box.
        assert question.region.width >= len(app.screen.question), question.region
        await pilot.press("n")
        assert app.is_running and app.orchestrator.busy
        await pilot.press("ctrl+q", "y")
        await pilot.pause()
    assert not app.is_running


def test_help_lists_every_key() -> None:
    from pheron_tui.ui.app import PheronApp

    for binding in PheronApp.BINDINGS:
        assert f"`{binding.key}`" in HELP, binding.key
    assert "to close this help" in HELP


async def test_a_worker_that_dies_says_so(workspace: Path, monkeypatch) -> None:
    async def broken_pump(bus, post) -> None:
        raise RuntimeError("the pump broke")

    monkeypatch.setattr("pheron_tui.ui.app.pump_events", broken_pump)
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "stopped" in app.query_one(StatusBar).state)
        notes = " ".join(str(n.render()) for n in app.query(Note))
        assert "RuntimeError: the pump broke" in notes


async def test_an_answer_sent_back_is_marked_and_kept_apart_from_the_next(workspace: Path) -> None:
    """Two replies' text had run together in one block ("…test_calc.py.Yes: it divides…"),
    the first read as the turn's answer though the model was told it was not."""
    (workspace / "calc.py").write_text("def average(xs):\n    return sum(xs) / (len(xs) - 1)\n")
    (workspace / "test_calc.py").write_text(
        "from calc import average\nassert average([2, 4]) == 3\n"
    )
    run = '<tool_call>{"name": "shell_exec", "arguments": {"command": "python3 test_calc.py"}}</tool_call>'
    plan = [run, "average is correct.", "Yes: it divides by len(xs) - 1."]
    app = make_app(workspace, "all", classify=["task"], plan=plan, critic=["PASS: ok"])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Is there a bug in the average function in calc.py?")
        await wait_for(pilot, lambda: idle(app) and bool(app.query(AssistantMessage)))
        first, second = app.query(AssistantMessage)
        assert first.text == "average is correct." and first.has_class("-sent-back")
        assert second.text == "Yes: it divides by len(xs) - 1." and not second.has_class(
            "-sent-back"
        )
        notes = [str(n.render()) for n in app.query(Note)]
        assert any(
            n.startswith("↩ sent back to the model: `python3 test_calc.py` failed") for n in notes
        )
