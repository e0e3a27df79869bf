"""Floods are capped, hostile servers are bounded, slow regexes cannot freeze the app
(hostile review, classes 10, 11, 14 and 23)."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pheron_tui.core.messages import CompletionRequest, Message, TextChunk
from pheron_tui.core.provider import ProviderError
from pheron_tui.core.tools import ToolContext
from pheron_tui.providers.openai_compat import OpenAIProvider
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.sandbox import run_shell

from ..command import run_scripted, tool_call


# -- class 10: output floods ---------------------------------------------------------------------
def test_a_flooding_command_is_capped_on_stdout_and_in_the_log(
    workspace: Path, tmp_path: Path
) -> None:
    plan = [tool_call("shell_exec", command="yes | head -c 100000000"), "done"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    done, events = run_scripted(
        workspace,
        replies,
        "--json",
        "--approve",
        "all",
        "--sandbox",
        "off",
        env={"XDG_DATA_HOME": str(tmp_path / "data")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout) < 200_000, len(done.stdout)
    [log] = (tmp_path / "data").rglob("*.jsonl")
    assert log.stat().st_size < 200_000
    [finished] = [e for e in events if e["type"] == "ToolCallFinished"]
    assert "characters cut from the middle" in finished["observation"]


def test_a_huge_call_is_a_short_line_in_a_plain_run(workspace: Path) -> None:
    """Without --json each call is one log line on stderr: not a 100 KB one."""
    plan = [tool_call("edit_file", path="notes.md", old="y" * 100_000, new="x"), "done"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    done, _ = run_scripted(workspace, replies, "--approve", "all")
    [line] = [line for line in done.stderr.splitlines() if line.startswith("→ edit_file")]
    assert len(line) < 500 and '"new": "x"' in line and "…" in line


async def test_streamed_output_stops_at_the_cap_and_says_so(workspace: Path) -> None:
    seen: list[str] = []
    result = await run_shell(
        "seq 1 200000", workspace, timeout_s=30, cap_chars=2000, on_output=seen.append
    )
    streamed = "".join(seen)
    assert len(streamed) < 2200 and "more output" in streamed
    assert result.truncated and "200000" in result.output  # the end is kept


class _EndlessServer:
    """An OpenAI-compatible server that streams forever, or sends one endless line or body."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            status = "500 X" if self.mode == "body" else "200 OK"
            kind = "text/plain" if self.mode == "body" else "text/event-stream"
            conn.sendall(f"HTTP/1.1 {status}\r\ncontent-type: {kind}\r\n\r\n".encode())
            piece = b'data: {"choices": [{"delta": {"content": "flood "}}]}\n\n' * 200
            if self.mode != "events":
                piece = b"x" * 65536
                if self.mode == "line":
                    conn.sendall(b"data: ")
            sent = 0
            deadline = time.monotonic() + 20
            try:
                while not self.stop.is_set() and sent < 400_000_000 and time.monotonic() < deadline:
                    conn.sendall(piece)
                    sent += len(piece)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("mode", ["events", "line", "body"])
async def test_a_hostile_server_is_cut_off_without_filling_memory(mode: str) -> None:
    server = _EndlessServer(mode)
    provider = OpenAIProvider(server.url, "m", max_retries=0, read_timeout_s=30)
    request = CompletionRequest(messages=[Message(role="user", content="hi")], max_tokens=2048)
    before = _peak_rss_mb()
    received = 0
    started = time.monotonic()
    try:
        async for chunk in provider.stream(request):
            if isinstance(chunk, TextChunk):
                received += len(chunk.text)
    except ProviderError as exc:
        assert mode in ("line", "body"), exc
    finally:
        server.close()
        await provider.aclose()
    assert received <= 2048 * 16 + 100
    assert time.monotonic() - started < 15
    assert _peak_rss_mb() - before < 150


# -- class 11: a catastrophic regex --------------------------------------------------------------
async def test_a_catastrophic_regex_is_cut_off_and_the_loop_stays_live(workspace: Path) -> None:
    (workspace / "evil.txt").write_text("a" * 40 + "!\n")
    registry = default_registry()
    prepared = registry.prepare("search_files", {"pattern": "(a|aa)+$", "path": "."})
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    beating = asyncio.create_task(heartbeat())
    started = time.monotonic()
    result = await prepared.tool.run(prepared.args, ToolContext(workspace=workspace))
    took = time.monotonic() - started
    beating.cancel()
    assert "too slow" in result.observation and not result.ok
    assert took < 15
    assert ticks > took / 0.05 * 0.5  # the event loop kept running meanwhile


async def test_cancelling_a_search_returns_at_once(workspace: Path) -> None:
    (workspace / "evil.txt").write_text("a" * 40 + "!\n")
    prepared = default_registry().prepare("search_files", {"pattern": "(a|aa)+$"})
    task = asyncio.create_task(prepared.tool.run(prepared.args, ToolContext(workspace=workspace)))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5


def test_ctrl_c_stops_a_headless_run_stuck_in_a_regex(workspace: Path, tmp_path: Path) -> None:
    # Each line takes a fraction of a second to fail; together, many seconds.
    (workspace / "evil.txt").write_text(("a" * 26 + "!\n") * 200)
    script = tmp_path / "script.json"
    call = tool_call("search_files", pattern="(a|aa)+$")
    script.write_text('{"replies": {"classify": ["task"], "plan": [' + _json(call) + ', "x"]}}')
    process = subprocess.Popen(
        [sys.executable, "-m", "pheron_tui", "run", "--provider", "scripted", "--script",
         str(script), "--workspace", str(workspace), "--approve", "all", "find it"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("PHERON_")},
    )  # fmt: skip
    time.sleep(2.5)
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    assert process.wait(timeout=10) == 130
    assert time.monotonic() - started < 2


def _json(text: str) -> str:
    import json

    return json.dumps(text)


# -- class 23: a character cut between two reads ---------------------------------------------------
async def test_multibyte_characters_split_across_reads_decode_whole(workspace: Path) -> None:
    # 4,095 ASCII bytes then é: the two bytes of é straddle a 4,096-byte boundary, and the
    # same again across 65,536 for the larger reads.
    line = "x" * 4095 + "é" + "y" * (65536 - 4097) + "é" + "z" * 10
    (workspace / "text.txt").write_text(line, encoding="utf-8")
    result = await run_shell("cat text.txt", workspace, timeout_s=10, cap_chars=200_000)
    assert "\ufffd" not in result.output and result.output.count("é") == 2
