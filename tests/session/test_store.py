"""Session logs: written as events happen, readable after a crash, exportable."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pheron_tui.config import Settings
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.runtime import Runtime
from pheron_tui.session.store import SessionError, load_session, sessions_dir, to_markdown

from ..command import pheron, run_scripted

LIST = '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'


def headless(
    workspace: Path, script: dict, *args: str, data: Path | None = None
) -> subprocess.Popen:
    path = workspace.parent / f"script-{random.random()}.json"
    path.write_text(json.dumps(script))
    command = [
        sys.executable,
        "-m",
        "pheron_tui",
        "run",
        "--provider",
        "scripted",
        "--script",
        str(path),
        "--workspace",
        str(workspace),
        "--approve",
        "all",
        *args,
        "list the files",
    ]
    env = {**os.environ, "XDG_DATA_HOME": str(data)} if data is not None else None
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def only_session() -> Path:
    [path] = sessions_dir().glob("*.jsonl")
    return path


def test_a_run_is_recorded_and_exported(workspace: Path) -> None:
    script = {
        "replies": {"classify": ["task"], "plan": [LIST, "Two files."], "critic": ["PASS: ok"]}
    }
    assert headless(workspace, script).wait(timeout=60) == 0
    session = load_session(only_session())
    assert session.header.workspace == str(workspace.resolve())
    assert session.prompts == ["list the files"] and session.status == "finished"
    kinds = [type(e).__name__ for e in session.events]
    assert kinds[0] == "ModelLoading" and kinds[-1] == "TurnFinished"
    text = to_markdown(session)
    assert "## You\n\nlist the files" in text and "`list_dir`" in text and "Two files." in text


def test_truncated_last_line_is_tolerated_and_reported(workspace: Path) -> None:
    script = {"replies": {"classify": ["chat"], "chat": ["Hello."]}}
    assert headless(workspace, script).wait(timeout=60) == 0
    path = only_session()
    whole = load_session(path)
    with path.open("a") as handle:
        handle.write('{"session_id": "x", "type": "AnswerDe')
    damaged = load_session(path)
    assert damaged.events == whole.events
    assert "last line could not be read" in damaged.damage


def test_newer_format_gets_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"type": "SessionHeader", "format_version": 99}) + "\n")
    with pytest.raises(SessionError, match="newer pheron-tui"):
        load_session(path)


def test_sessions_and_export_commands(workspace: Path) -> None:
    script = {"replies": {"classify": ["chat"], "chat": ["Hello there."]}}
    assert headless(workspace, script).wait(timeout=60) == 0
    listing = pheron("sessions")
    assert only_session().stem in listing.stdout and "finished" in listing.stdout
    export = pheron("export", "last")
    assert export.returncode == 0 and "Hello there." in export.stdout
    missing = pheron("export", "nope")
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr


async def resume_and_continue(log: Path) -> None:
    """Carry a killed session on: the model gets a well-formed conversation (every call
    answered) and the log grows by one whole turn with seq running on."""
    session = load_session(log)
    provider = ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["chat"], "chat": ["Carrying on."]}})
    )
    settings = Settings(provider="scripted", workspace=Path(session.header.workspace))
    runtime = Runtime.resume(settings, "none", session, provider=provider)
    runtime.start_recording(folder=log.parent)
    result = await runtime.orchestrator.submit("go on")
    await runtime.aclose()
    assert result.status == "finished", (log, result)
    sent = provider.requests[-1].messages
    assert_calls_answered_in_place(sent)
    assert sent[-1].content == "go on"
    after = load_session(log)
    assert [e.seq for e in after.events] == list(range(1, len(after.events) + 1)), log
    assert after.prompts[-1] == "go on" and after.status == "finished"
    assert_calls_answered_in_place(after.conversation())
    assert after.conversation()[-1].content == "Carrying on."


def assert_calls_answered_in_place(history: list) -> None:
    """Each assistant call is answered by the tool messages right after it, as chat
    templates require, and never later in the conversation."""
    for index, message in enumerate(history):
        if not message.tool_calls:
            continue
        following = []
        for later in history[index + 1 :]:
            if later.role != "tool":
                break
            following.append(later.tool_call_id)
        assert sorted(following) == sorted(call.id for call in message.tool_calls), history


def test_killed_runs_leave_loadable_logs_without_gaps(workspace: Path) -> None:
    """SIGKILL 100 headless runs at random moments: every log loads, the events it holds
    run without a gap from the first (a lost complete event would leave one), and every
    session resumes and takes another turn."""
    rng = random.Random(7)
    script = {
        "delay_s": 0.01,
        "replies": {
            "classify": ["task"],
            "plan": [
                ["<think>", *["thinking "] * 30, "</think>", LIST],
                ["The ", "folder ", "has ", "two ", "files."],
            ],
            "critic": ["PASS: ok"],
        },
    }

    def one(index: int) -> Path:
        folder = workspace.parent / f"ws{index}"
        folder.mkdir()
        data = workspace.parent / f"data{index}"  # each run its own log folder
        process = headless(folder, script, data=data)
        sessions = data / "pheron-tui" / "sessions"
        deadline = time.monotonic() + 30
        while not list(sessions.glob("*.jsonl")) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 1.2))  # somewhere in the turn, or just after it
        process.send_signal(signal.SIGKILL)
        process.wait()
        [log] = sessions.glob("*.jsonl")
        return log

    with ThreadPoolExecutor(8) as pool:
        logs = list(pool.map(one, range(100)))
    assert len(logs) == 100
    for log in logs:
        session = load_session(log)
        seqs = [e.seq for e in session.events]
        assert seqs == list(range(1, len(seqs) + 1)), log
        if session.damage:
            assert "last line" in session.damage
        asyncio.run(resume_and_continue(log))
    assert os.environ.get("XDG_DATA_HOME")  # all of this stayed in the test's own folder


def test_run_json_prints_the_lines_the_session_log_keeps(workspace: Path) -> None:
    done, printed = run_scripted(
        workspace,
        {"classify": ["task"], "plan": [LIST, "Two files."], "critic": ["PASS: listed"]},
        "--json",
        "--approve",
        "read-only",
    )
    assert done.returncode == 0
    logged = only_session().read_text().splitlines()[1:]  # after the header line
    assert printed == [json.loads(line) for line in logged]
    assert {e["type"] for e in printed} >= {"ModelLoading", "ModelReady", "TurnFinished"}


def test_sessions_are_listed_newest_first_by_start_time(tmp_path: Path) -> None:
    from pheron_tui.session.store import SessionHeader, list_sessions

    # Written in an order unlike their start times (a resumed old session is touched last).
    for name, started in (("b0627", 1_700_000_820.0), ("a0620", 1_700_000_400.0),
                          ("c0625", 1_700_000_700.0)):  # fmt: skip
        header = SessionHeader(
            session_id=name, provider="scripted", model="m", workspace="/w", started=started
        )
        (tmp_path / f"{name}.jsonl").write_text(header.model_dump_json() + "\n")
    (tmp_path / "broken.jsonl").write_text("not json\n")
    assert [path.stem for path, _ in list_sessions(tmp_path)] == [
        "b0627", "c0625", "a0620", "broken"
    ]  # fmt: skip
