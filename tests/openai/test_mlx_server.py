"""pheron-tui against a real OpenAI-compatible server: mlx_lm.server on loopback.

The server serves a tiny Qwen3-style model the tests build (its chat template takes tools);
its replies are forced token by token (see forced_mlx_server.py), so the real HTTP, SSE,
template, tool parser, logprobs and usage paths all run with known text.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ..mlx.tiny_models import build_qwen3_style

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def mlx_server(tmp_path_factory: pytest.TempPathFactory):
    folder = build_qwen3_style(tmp_path_factory.mktemp("models") / "qwen3-tiny")
    replies = tmp_path_factory.mktemp("replies") / "replies.json"
    replies.write_text("[]")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (tmp_path_factory.mktemp("log") / "server.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "forced_mlx_server.py"),
            str(replies),
            "--model",
            str(folder),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"{base_url}/models", timeout=1)
            break
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlx_lm.server did not start; see {log.name}") from None
            time.sleep(0.2)
    yield base_url, folder, replies
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


def pheron(server, workspace: Path, replies: list[str], prompt: str, *args: str):
    base_url, folder, replies_file = server
    replies_file.write_text(json.dumps(replies))
    command = [
        sys.executable,
        "-m",
        "pheron_tui",
        "run",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        base_url,
        "--model",
        str(folder),
        "--workspace",
        str(workspace),
        *args,
        prompt,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHERON_")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert json.loads(replies_file.read_text()) == [], "pheron-tui asked fewer times than scripted"
    return done, events


def kinds(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["type"] == kind]


def test_chat_turn(mlx_server, workspace: Path) -> None:
    done, events = pheron(
        mlx_server, workspace, ["chat", "Paris is the capital of France."], "Capital of France?"
    )
    assert done.returncode == 0, done.stderr
    [intent] = kinds(events, "IntentClassified")
    assert intent["intent"] == "chat"
    assert (
        "".join(e["text"] for e in kinds(events, "AnswerDelta"))
        == "Paris is the capital of France."
    )
    usage = kinds(events, "Usage")[-1]
    assert usage["prompt_tokens"] > 0  # the server's own count, not an estimate


def test_tool_task_native(mlx_server, workspace: Path) -> None:
    call = '<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
    done, events = pheron(
        mlx_server,
        workspace,
        [
            "task",
            call,
            "The folder holds main.py and notes.md.",
            "The listing shows both files.",  # the critic says what it saw,
            "PASS",  # then its verdict is scored
        ],
        "What files are here?",
        "--approve",
        "read-only",
    )
    assert done.returncode == 0, done.stderr
    [finished] = kinds(events, "ToolCallFinished")
    assert finished["ok"] and "notes.md" in finished["observation"]
    assert kinds(events, "ToolCallProposed")[0]["tool"] == "list_dir"
    [verdict] = kinds(events, "CriticVerdict")
    assert (verdict["verdict"], verdict["reason"]) == ("PASS", "The listing shows both files.")
    assert kinds(events, "TurnFinished")[0]["status"] == "finished"


def test_tool_task_legacy(mlx_server, workspace: Path) -> None:
    done, events = pheron(
        mlx_server,
        workspace,
        [
            "task",
            "CALL(",  # scored: would the model start with a call?
            'CALL(read_file) WITH {"path": "notes.md"}',
            "<final>You need to buy milk.</final>",
            "The notes say to buy milk.",
            "PASS",
        ],
        "What do my notes say?",
        "--approve",
        "read-only",
        "--tool-mode",
        "legacy",
    )
    assert done.returncode == 0, done.stderr
    [finished] = kinds(events, "ToolCallFinished")
    assert finished["ok"] and "buy milk" in finished["observation"]
    answer = "".join(e["text"] for e in kinds(events, "AnswerDelta"))
    assert "You need to buy milk." in answer
