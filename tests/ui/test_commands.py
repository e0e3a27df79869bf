"""Slash commands, the palette, @ mentions, multi-line input, ctrl+c, per-hunk review,
rewind, plan mode, AGENTS.md and notifications, driven with Pilot as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pheron_tui.ui.screens.context import ContextScreen
from pheron_tui.ui.screens.file_picker import FilePicker
from pheron_tui.ui.screens.help import HelpScreen
from pheron_tui.ui.screens.hunks import HunkCheck, HunkReview
from pheron_tui.ui.screens.rewind import RewindScreen
from pheron_tui.ui.screens.rules import RulesScreen
from pheron_tui.ui.screens.sessions import SessionPicker
from pheron_tui.ui.widgets.chat import Note, UserMessage
from pheron_tui.ui.widgets.prompt import PromptInput
from pheron_tui.ui.widgets.status import StatusBar
from pheron_tui.ui.widgets.tool_log import ToolCard

from .helpers import idle, make_app, send, slow_chat_provider, wait_for

SIZE = (120, 40)


def call(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def notes(app) -> str:
    return "\n".join(str(n.render()) for n in app.query(Note))


def record_writes(app) -> list[str]:
    """What the app writes to the terminal from now on (bell, OSC sequences, frames)."""
    written: list[str] = []
    real_write = app._driver.write
    app._driver.write = lambda data: (written.append(data), real_write(data))[1]
    return written


def waiting(app) -> bool:
    return bool(app.orchestrator.gate.pending) and bool(app.query(ToolCard))


@pytest.mark.parametrize(
    ("command", "screen"),
    [
        ("/help", HelpScreen),
        ("/context", ContextScreen),
        ("/rewind", RewindScreen),
        ("/sessions", SessionPicker),
        ("/rules", RulesScreen),
    ],
)
async def test_a_command_opens_its_screen_and_never_reaches_the_model(
    workspace: Path, command: str, screen: type
) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await send(pilot, command)
        await wait_for(pilot, lambda: isinstance(app.screen, screen))
        assert app.runtime.provider.requests == []
        assert not app.query(UserMessage)


async def test_an_unknown_command_is_an_error_not_a_message(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await send(pilot, "/hepl")
        await pilot.pause()
        shown = [n.message for n in app._notifications]
        assert any("Unknown command /hepl. Did you mean /help?" in m for m in shown)
        assert app.runtime.provider.requests == [] and not app.query(UserMessage)


async def test_a_double_slash_sends_the_text_to_the_model(workspace: Path) -> None:
    app = make_app(workspace, classify=["chat"], chat=["It is a path."])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "//etc/hosts is what?")
        await wait_for(pilot, lambda: idle(app) and bool(app.query(UserMessage)))
        assert app.runtime.provider.requests[-1].messages[-1].content == "/etc/hosts is what?"


async def test_typing_a_slash_lists_the_commands_and_tab_completes(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await pilot.press("slash", "c", "o")
        completion = app.query_one("#completion")
        assert completion.display
        names = [completion.get_option_at_index(i).id for i in range(completion.option_count)]
        assert names == ["compact", "context"]
        await pilot.press("down", "tab")
        assert app.query_one("#prompt", PromptInput).text == "/context "
        assert not completion.display
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))


async def test_the_palette_lists_the_commands_with_their_keys(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"rewind")
        await pilot.pause(0.3)
        from textual.command import CommandList

        listing = app.screen.query_one(CommandList)
        shown = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert any("/rewind" in s for s in shown)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))


async def test_new_starts_a_fresh_conversation_in_a_new_session(workspace: Path) -> None:
    app = make_app(workspace, classify=["chat", "chat"], chat=["one", "two"])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        old_session = app.runtime.bus.session_id
        await send(pilot, "/new")
        await wait_for(pilot, lambda: app.runtime.bus.session_id != old_session)
        assert app.orchestrator.history == [] and not app.query(UserMessage)
        await send(pilot, "second")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        assert [m.content for m in app.runtime.provider.requests[-1].messages[1:]] == ["second"]


async def test_model_switch_failure_keeps_the_current_model(workspace: Path) -> None:
    app = make_app(workspace, classify=["chat"], chat=["still here"])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        before = app.runtime.provider
        await send(pilot, "/model")  # no NAME
        await pilot.pause()
        assert any("/model needs NAME" in n.message for n in app._notifications)
        await send(pilot, "/model other")  # the scripted provider needs a script
        await wait_for(
            pilot, lambda: any("not switched" in (n.title or "") for n in app._notifications)
        )
        assert app.runtime.provider is before
        await send(pilot, "hello")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)


async def test_model_switch_loads_the_new_one_and_keeps_the_conversation(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "other.json"
    script.write_text(json.dumps({"replies": {"classify": ["chat"], "chat": ["from the new one"]}}))
    app = make_app(workspace, classify=["chat"], chat=["from the first"])
    app.runtime.settings = app.runtime.settings.model_copy(update={"script": script})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        await send(pilot, "/model other")
        await wait_for(pilot, lambda: app.runtime.provider.model == "other.json")
        await send(pilot, "again")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 4)
        request = app.runtime.provider.requests[-1]
        assert [m.content for m in request.messages[1:]] == ["hi", "from the first", "again"]
        assert "other.json" in str(app.query_one(StatusBar).render())


async def test_export_writes_the_conversation_as_markdown(workspace: Path) -> None:
    app = make_app(workspace, classify=["chat"], chat=["An answer."])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "a question")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        await send(pilot, "/export talk.md")
        await wait_for(pilot, lambda: (workspace / "talk.md").exists())
        text = (workspace / "talk.md").read_text()
        assert "a question" in text and "An answer." in text


async def test_quit_command_quits(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await send(pilot, "/quit")
        await pilot.pause(0.2)
    assert not app.is_running


async def test_ctrl_c_interrupts_a_turn_and_twice_on_idle_quits(workspace: Path) -> None:
    from pheron_tui.config import Settings
    from pheron_tui.runtime import Runtime
    from pheron_tui.ui.app import PheronApp

    settings = Settings(provider="scripted", workspace=workspace)
    runtime = Runtime.create(settings, default_policy="ask", provider=slow_chat_provider())
    app = PheronApp(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "talk for a long time")
        await wait_for(pilot, lambda: app.orchestrator.busy and app.query(UserMessage))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: idle(app))
        assert app.is_running and "cancelled" in notes(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and any("again to quit" in n.message for n in app._notifications)
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
    assert not app.is_running


async def test_ctrl_j_makes_a_new_line_and_enter_sends_it_all(workspace: Path) -> None:
    app = make_app(workspace, classify=["chat"], chat=["ok"])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await pilot.press("a", "ctrl+j", "b")
        assert app.query_one("#prompt", PromptInput).text == "a\nb"
        await pilot.press("enter")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        assert app.orchestrator.history[0].content == "a\nb"


async def test_a_pasted_block_is_one_message(workspace: Path) -> None:
    from textual import events

    app = make_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        prompt = app.query_one("#prompt", PromptInput)
        app.post_message(events.Paste("line one\nline two\nline three"))  # as the driver does
        await pilot.pause()
        assert prompt.text == "line one\nline two\nline three"
        assert app.runtime.provider.requests == []  # nothing sent line by line


async def test_at_opens_the_picker_and_the_file_is_attached(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.txt").write_text("ignored")
    app = make_app(workspace, classify=["chat"], chat=["It says buy milk."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await pilot.press(*"what is in ", "@")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker) and app.screen.files)
        assert "build/out.txt" not in app.screen.files and "notes.md" in app.screen.files
        await pilot.press(*"note", "enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, FilePicker))
        prompt = app.query_one("#prompt", PromptInput)
        assert prompt.text == "what is in @notes.md "
        await pilot.press("enter")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        sent = app.orchestrator.history[0].content
        assert sent.startswith("what is in @notes.md") and "buy milk" in sent
        assert "@notes.md attached" in notes(app)


async def test_accepting_one_of_two_hunks_writes_exactly_that_hunk(workspace: Path) -> None:
    before = "".join(f"line {i}\n" for i in range(30))
    (workspace / "f.txt").write_text(before)
    after = before.replace("line 1\n", "line one\n").replace("line 25\n", "line 25!\n")
    app = make_app(
        workspace,
        classify=["task"],
        plan=[call("edit_file", path="f.txt", old=before, new=after), "Edited."],
        critic=["PASS: ok"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "edit f.txt")
        await wait_for(pilot, lambda: waiting(app))
        card = app.query_one(ToolCard)
        assert card.hunks == 2 and "h review 2 hunks" in str(card._hint.render())
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HunkReview))
        assert len(app.screen.query(HunkCheck)) == 2
        await pilot.press("space", "enter")  # leave the first, take the second
        await wait_for(pilot, lambda: idle(app))
        assert (workspace / "f.txt").read_text() == before.replace("line 25\n", "line 25!\n")
        told = app.runtime.provider.requests[2].messages[-1].content
        assert "applied 2 of 2, rejected 1" in told


async def test_rewind_puts_files_and_conversation_back_to_turn_one(workspace: Path) -> None:
    plans = []
    for n in (1, 2, 3):
        plans += [call("write_file", path="log.txt", content=f"turn {n}\n", mode="append"),
                  f"Appended turn {n}."]  # fmt: skip
    app = make_app(
        workspace, policy="all", classify=["task"] * 3, plan=plans, critic=["PASS: ok"] * 3
    )
    async with app.run_test(size=SIZE) as pilot:
        for n in (1, 2, 3):
            await send(pilot, f"append turn {n}")
            await wait_for(
                pilot, lambda n=n: idle(app) and f"turn {n}" in (workspace / "log.txt").read_text()
            )
        (workspace / "main.py").unlink()  # a change of the user's own: not the agent's to undo
        await send(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("down", "down", "b")  # the list is newest first: turn 1 is third
        await wait_for(pilot, lambda: not (workspace / "log.txt").exists())
        await wait_for(pilot, lambda: "Rewound to before turn 1" in notes(app))
        assert app.orchestrator.history == []
        assert not app.query(UserMessage)
        assert not (workspace / "main.py").exists()
        assert "removed: log.txt" in notes(app)


async def test_rewind_names_turns_that_ran_shell_commands(workspace: Path) -> None:
    app = make_app(
        workspace,
        policy="all",
        classify=["task"],
        plan=[call("shell_exec", command="echo hi > said.txt"), "Said hi."],
        critic=["PASS: ok"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "say hi into a file")
        await wait_for(
            pilot,
            lambda: idle(app) and app.query(Note) is not None and len(app.orchestrator.history) > 2,
        )
        await send(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        text = str(app.screen.query_one("#rewind-list").get_option_at_index(0).prompt)
        assert "ran shell_exec: not undone by a rewind" in text


async def test_plan_mode_refuses_a_write_and_leaving_offers_the_plan(workspace: Path) -> None:
    write = call("write_file", path="x.txt", content="x")
    app = make_app(
        workspace,
        policy="all",
        classify=["task", "task"],
        plan=[write, "1. create x.txt", write, "Created."],
        critic=["PASS: plan", "PASS: done"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        await pilot.press("shift+tab")
        assert app.orchestrator.settings.plan_mode
        assert "PLAN MODE" in str(app.query_one(StatusBar).render())
        await send(pilot, "create x.txt")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) >= 4)
        assert app.query_one(ToolCard).by == "plan mode" and not (workspace / "x.txt").exists()
        await send(pilot, "/plan")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
        assert not app.orchestrator.settings.plan_mode
        await pilot.press("y")
        await wait_for(pilot, lambda: idle(app) and (workspace / "x.txt").exists())
        asked = [m.content for m in app.orchestrator.history if m.role == "user"]
        assert asked[-1].startswith("Carry out the plan") and (workspace / "x.txt").exists()


async def test_agents_md_is_in_the_system_prompt_and_the_status_bar(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Always answer in haiku.")
    app = make_app(workspace, classify=["chat"], chat=["Leaves fall."])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        await wait_for(pilot, lambda: idle(app) and len(app.orchestrator.history) == 2)
        system = app.runtime.provider.requests[-1].messages[0]
        assert system.role == "system" and "Always answer in haiku." in system.content
        assert "AGENTS.md" in str(app.query_one(StatusBar).render())


async def test_a_waiting_call_rings_and_notifies_the_desktop(workspace: Path) -> None:
    app = make_app(
        workspace, classify=["task"], plan=[call("list_dir", path="."), "ok"], critic=["PASS: ok"]
    )
    async with app.run_test(size=SIZE) as pilot:
        written = record_writes(app)
        await send(pilot, "list")
        await wait_for(pilot, lambda: waiting(app))
        sent = "".join(written)
        assert "\x1b]9;pheron-tui: A tool call waits for your approval: list_dir\x07" in sent
        assert "\x1b]777;notify;" in sent and "\x07" in sent
        assert "\x1b]2;pheron-tui · waiting for your approval\x07" in sent


async def test_notifications_can_be_turned_off(workspace: Path) -> None:
    app = make_app(
        workspace, classify=["task"], plan=[call("list_dir", path="."), "ok"], critic=["PASS: ok"]
    )
    app.runtime.settings = app.runtime.settings.model_copy(update={"notify": False})
    async with app.run_test(size=SIZE) as pilot:
        written = record_writes(app)
        await send(pilot, "list")
        await wait_for(pilot, lambda: waiting(app))
        assert "\x1b]9;" not in "".join(written) and "\x1b]2;" not in "".join(written)


async def test_a_model_cannot_break_out_of_a_notification(workspace: Path) -> None:
    from pheron_tui.ui.attention import _clean

    assert _clean("evil\x07\x1b]0;owned\x07;x") == "evil  ]0 owned  x"


async def test_compact_summarises_older_turns_and_says_so(workspace: Path) -> None:
    app = make_app(
        workspace, classify=["chat"] * 2, chat=["one", "two"], compact=["They said hi twice."]
    )
    async with app.run_test(size=SIZE) as pilot:
        for text in ("hi", "hi again"):
            await send(pilot, text)
            await wait_for(
                pilot, lambda: idle(app) and app.orchestrator.history[-1].role == "assistant"
            )
        await send(pilot, "/compact")
        await wait_for(pilot, lambda: "Compacted 2 older messages" in notes(app))
        history = app.orchestrator.history
        assert "They said hi twice." in history[0].content
        assert [m.content for m in history[2:]] == ["hi again", "two"]
        assert "ctx ~" in str(app.query_one(StatusBar).render())
