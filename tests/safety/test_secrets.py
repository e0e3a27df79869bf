"""Secrets stay out of commands, out of reach of /proc, and off the screen and the log
(hostile review, classes 9 and 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pheron_tui.tools.sandbox import is_secret, scrubbed_environment

from ..command import pheron, run_scripted, tool_call
from ..openai.fake_server import (
    FakeServer,
    Reply,
    chunk_event,
    finish_event,
    logprobs_reply,
    usage_event,
)

SECRETS = {
    "DATABASE_URL": "postgres://app:hunter2-db@db.internal:5432/app",
    "REDIS_URL": "redis://:hunter2-redis@cache:6379/0",
    "MYSQL_PWD": "hunter2-mysql",
    "SENTRY_DSN": "https://abc123hunter2@o1.ingest.sentry.io/1",
    "GH_PAT": "hunter2-ghpat",
    "HTTPS_PROXY": "http://user:hunter2-proxy@proxy:3128",
    "OPENAI_API_KEY": "sk-hunter2hunter2hunter2hunter2",
    "SOME_SETTING": "ghp_hunter2hunter2hunter2hunter2hunter2",
    "AWS_SECRET_ACCESS_KEY": "hunter2-aws",
    "NPM_CONFIG__AUTH": "hunter2-npm",
}
HARMLESS = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "HTTPS_PROXY_PLAIN": "http://proxy:3128",
    "KEYBOARD_LAYOUT": "us",
    "PWD": "/work",
    "EDITOR": "vi",
}


def test_secrets_are_known_by_name_words_and_by_value_shape() -> None:
    for name, value in SECRETS.items():
        assert is_secret(name, value), name
    for name, value in HARMLESS.items():
        assert not is_secret(name, value), name
    assert scrubbed_environment({**SECRETS, **HARMLESS}) == HARMLESS


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_commands_see_no_secret_in_their_environment_nor_the_apps(
    workspace: Path, sandbox: str, tmp_path: Path
) -> None:
    commands = ["env", "cat /proc/$PPID/environ | tr '\\0' '\\n'", "cat /proc/*/environ"]
    plan = [tool_call("shell_exec", command=c) for c in commands] + ["done"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    done, events = run_scripted(
        workspace,
        replies,
        "--json",
        "--approve",
        "all",
        "--sandbox",
        sandbox,
        env={**SECRETS, **HARMLESS, "XDG_DATA_HOME": str(tmp_path / "data")},
    )
    finished = [e for e in events if e["type"] == "ToolCallFinished"]
    assert len(finished) == 3, done.stderr
    assert "GIT_AUTHOR_NAME=Ada" in finished[0]["observation"]
    for value in SECRETS.values():
        assert value not in done.stdout, value
    [log] = (tmp_path / "data").rglob("*.jsonl")
    assert "hunter2" not in log.read_text()


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.close()


KEY = "sk-test-0123456789abcdef0123456789"


def test_a_key_echoed_by_the_server_never_reaches_output_or_log(
    server: FakeServer, workspace: Path, tmp_path: Path
) -> None:
    half = len(KEY) // 2
    server.replies += [
        Reply(body='{"data": [{"id": "m"}]}'),
        logprobs_reply(("chat", -0.1), ("task", -3.0)),
        Reply(
            events=[
                chunk_event(reasoning=f"the key is {KEY[:half]}"),
                chunk_event(reasoning=f"{KEY[half:]} indeed"),
                chunk_event(f"Your key: {KEY[:5]}"),
                chunk_event(f"{KEY[5:]}!"),
                finish_event(),
                usage_event(),
                "[DONE]",
            ]
        ),
    ]
    data = tmp_path / "data"
    done = pheron(
        "run",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        server.base_url,
        "--model",
        "m",
        "--workspace",
        str(workspace),
        "what is my key?",
        env={"OPENAI_API_KEY": KEY, "XDG_DATA_HOME": str(data)},
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    shown = "".join(e["text"] for e in events if e["type"] == "AnswerDelta")
    thought = "".join(e["text"] for e in events if e["type"] == "ThinkDelta")
    assert shown == "Your key: ***!" and "the key is *** indeed" in thought
    [log] = data.rglob("*.jsonl")
    for text in (done.stdout, done.stderr, log.read_text()):
        assert KEY not in text and KEY[:half] not in text
