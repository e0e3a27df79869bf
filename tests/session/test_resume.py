"""Resume and replay: the log is enough to carry a conversation on and to show it again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pheron_tui.config import Settings
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.runtime import Runtime
from pheron_tui.session.store import load_session, sessions_dir

from ..ui.helpers import idle, send, wait_for

LIST = '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'
FIRST = {
    "classify": ["task"],
    "plan": [["<think>look</think>", LIST], "Two files."],
    "critic": ["PASS: ok"],
}


async def first_turn(workspace: Path) -> tuple[Runtime, Path]:
    provider = ScriptedProvider(Script.model_validate({"replies": FIRST}))
    runtime = Runtime.create(
        Settings(provider="scripted", workspace=workspace), "all", provider=provider
    )
    runtime.start_recording()
    result = await runtime.orchestrator.submit("what is here?")
    assert result.status == "finished"
    await runtime.aclose()
    return runtime, runtime.store.path


async def test_round_trip_run_log_resume_gives_the_same_conversation(workspace: Path) -> None:
    runtime, path = await first_turn(workspace)
    session = load_session(path)
    assert session.conversation() == runtime.orchestrator.history

    second = ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["chat"], "chat": ["Yes."]}})
    )
    settings = Settings(provider="scripted", workspace=workspace)
    resumed = Runtime.resume(settings, "all", session, provider=second)
    resumed.start_recording()
    await resumed.orchestrator.submit("sure?")
    await resumed.aclose()
    sent = second.requests[-1].messages
    assert [m.content for m in sent if m.role == "user"] == ["what is here?", "sure?"]
    assert any(m.role == "tool" and "notes.md" in m.content for m in sent)
    assert any(m.reasoning_content == "look" for m in sent)

    both = load_session(path)  # one file, one header, seq and turns running on
    assert [e.seq for e in both.events] == list(range(1, len(both.events) + 1))
    assert both.prompts == ["what is here?", "sure?"]
    assert {e.turn_id for e in both.events} == {1, 2}
    assert path.read_text().count('"SessionHeader"') == 1


def test_resume_last_from_the_command_line(workspace: Path) -> None:
    script = workspace.parent / "s.json"
    script.write_text(
        json.dumps({"replies": {"classify": ["chat", "chat"], "chat": ["One.", "Two."]}})
    )
    base = [
        sys.executable,
        "-m",
        "pheron_tui",
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--workspace",
        str(workspace),
    ]
    assert subprocess.run([*base, "first"], capture_output=True).returncode == 0
    done = subprocess.run([*base, "--resume", "last", "second"], capture_output=True, text=True)
    assert (
        done.returncode == 0 and done.stdout.strip() == "One."
    )  # the script restarts; the log goes on
    [log] = sessions_dir().glob("*.jsonl")
    assert load_session(log).prompts == ["first", "second"]
    missing = subprocess.run([*base, "--resume", "nope", "x"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr


async def test_resumed_session_is_shown_in_the_tui(workspace: Path) -> None:
    from pheron_tui.ui.app import PheronApp
    from pheron_tui.ui.widgets.chat import Note, UserMessage
    from pheron_tui.ui.widgets.tool_log import ToolCard

    _, path = await first_turn(workspace)
    settings = Settings(provider="scripted", workspace=workspace)
    runtime = Runtime.resume(
        settings, "ask", load_session(path), provider=ScriptedProvider(Script())
    )
    app = PheronApp(runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(app.query(Note)))
        assert [str(m.render()) for m in app.query(UserMessage)] == ["what is here?"]
        assert app.query_one(ToolCard).status == "ok"
        assert "Resumed session" in str(app.query(Note).last().render())


async def test_session_picker_resumes_a_session_inside_the_app(workspace: Path) -> None:
    from textual.widgets import OptionList

    from pheron_tui.ui.app import PheronApp
    from pheron_tui.ui.screens.sessions import SessionPicker
    from pheron_tui.ui.widgets.chat import Note, UserMessage
    from pheron_tui.ui.widgets.tool_log import ToolCard

    _, recorded = await first_turn(workspace)
    provider = ScriptedProvider(
        Script.model_validate(
            {"replies": {"classify": ["chat", "chat"], "chat": ["Yes.", "Sure."]}}
        )
    )
    settings = Settings(provider="scripted", workspace=workspace)
    app = PheronApp(Runtime.create(settings, "ask", provider=provider))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hello from the new session")
        await wait_for(pilot, lambda: bool(provider.requests) and idle(app))
        left = app.runtime.store.path
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker))
        picker = app.screen
        options = picker.query_one(OptionList)
        await wait_for(pilot, lambda: options.option_count == 2)
        # Newest first: the session just left is listed but cannot be picked.
        assert options.get_option_at_index(0).disabled
        assert "this session" in str(options.get_option_at_index(0).prompt)
        await pilot.press("enter")  # the newest session that can be resumed is highlighted
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker))
        await wait_for(pilot, lambda: any("Resumed" in str(n.render()) for n in app.query(Note)))
        assert app.runtime.bus.session_id == recorded.stem
        assert [str(m.render()) for m in app.query(UserMessage)] == ["what is here?"]
        assert app.query_one(ToolCard).status == "ok"

        asked = len(provider.requests)
        await send(pilot, "sure?")
        await wait_for(pilot, lambda: len(provider.requests) >= asked + 2 and idle(app))
    sent = [m.content for m in provider.requests[-1].messages if m.role == "user"]
    assert sent == ["what is here?", "sure?"]  # the model sees the resumed conversation
    assert load_session(recorded).prompts == ["what is here?", "sure?"]
    assert load_session(left).prompts == ["hello from the new session"]


async def test_replay_shows_decisions_as_they_were_made(workspace: Path) -> None:
    from pheron_tui.ui.app import PheronApp
    from pheron_tui.ui.widgets.critic import VerdictCard
    from pheron_tui.ui.widgets.tool_log import ToolCard

    _, path = await first_turn(workspace)
    quiet = Settings(provider="scripted", workspace=workspace, record_sessions=False)
    runtime = Runtime.create(quiet, "none", provider=ScriptedProvider(Script()))
    app = PheronApp(runtime, replay=load_session(path), replay_speed=1000)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(app.query(VerdictCard)) and idle(app))
        card = app.query_one(ToolCard)
        assert card.status == "ok" and card.by == "policy:all"
        assert app.query_one("#prompt").disabled
        assert not runtime.provider.requests  # no model was asked anything


async def test_a_resumed_cancelled_turn_puts_no_words_in_the_models_mouth(
    workspace: Path,
) -> None:
    import asyncio

    words = [f"w{i} " for i in range(5_000)]
    provider = ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["chat"], "chat": [words]}, "delay_s": 0.01})
    )
    settings = Settings(provider="scripted", workspace=workspace)
    runtime = Runtime.create(settings, "all", provider=provider)
    runtime.start_recording()
    turn = asyncio.create_task(runtime.orchestrator.submit("talk"))
    await asyncio.sleep(0.3)
    runtime.orchestrator.cancel()
    assert (await turn).status == "cancelled"
    await runtime.aclose()

    second = ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["chat"], "chat": ["Hello."]}})
    )
    resumed = Runtime.resume(settings, "all", load_session(runtime.store.path), provider=second)
    await resumed.orchestrator.submit("are you there?")
    await resumed.aclose()
    said = [m.content for m in second.requests[-1].messages if m.role == "assistant"]
    assert said and not any("cancel" in text.lower() for text in said)


async def test_a_resumed_session_can_rewind_what_was_done_before(workspace: Path) -> None:
    write = '<tool_call>{"name": "write_file", "arguments": {"path": "a.txt", "content": "%s"}}</tool_call>'
    replies = {
        "classify": ["task", "task", "chat"],
        "plan": [write % "one", "Wrote.", "Checked."],
        "critic": ["PASS: ok", "PASS: ok"],
        "chat": ["fine"],
    }
    provider = ScriptedProvider(Script.model_validate({"replies": replies}))
    settings = Settings(provider="scripted", workspace=workspace)
    runtime = Runtime.create(settings, "all", provider=provider)
    runtime.start_recording()
    await runtime.orchestrator.submit("write a.txt")
    await runtime.orchestrator.submit("check it")
    await runtime.orchestrator.submit("thanks")
    runtime.orchestrator.rewind_conversation(3)  # drop the last turn: recorded in the log
    path = runtime.store.path
    await runtime.aclose()

    session = load_session(path)
    assert session.conversation() == runtime.orchestrator.history
    resumed = Runtime.resume(settings, "all", session, provider=provider)
    assert [r.turn_id for r in resumed.rewind_points()] == [1, 2]
    report = resumed.rewind(1, files=True, conversation=True)
    assert not (workspace / "a.txt").exists() and report.files.removed == ["a.txt"]
    assert resumed.orchestrator.history == []
