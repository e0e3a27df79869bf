"""The llama.cpp engine on the bundled GGUF: answers, tool calls, cancel, KV prefix reuse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="pheron-tui[llamacpp] is not installed")

import numpy as np

from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import CompletionRequest, Message
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.providers.llamacpp import LlamaCppProvider
from pheron_tui.tools.builtin import default_registry

from ..mlx.tiny_models import QWEN3_STYLE_TEMPLATE


class Forced:
    """Makes the model say scripted text token by token, per purpose (grammar-free)."""

    def __init__(self, provider: LlamaCppProvider, **replies: list[str]) -> None:
        self.provider = provider
        self.replies = {k: list(v) for k, v in replies.items()}
        self.calls = 0

    def __call__(self, request: CompletionRequest) -> list:
        llm = self.provider._llm
        text = self.replies[request.purpose].pop(0)
        target = [*llm.tokenize(text.encode(), add_bos=False, special=True), llm.token_eos()]
        position = {"i": 0}

        def force(_ids, logits):
            self.calls += 1
            token = target[min(position["i"], len(target) - 1)]
            position["i"] += 1
            out = np.full_like(logits, -np.inf)
            out[token] = 0.0
            return out

        return [force]


class TaskFirst(LlamaCppProvider):
    """The bundled model's own label scores decide chat vs task; a tool test needs a task."""

    async def score_choices(self, request, options):
        scores = await super().score_choices(request, options)
        assert all(v < 0 for v in scores.values())  # real log-probabilities
        if set(options) == {"chat", "task"}:
            return {"task": 0.0, "chat": -10.0}
        return scores


def agent(provider, workspace: Path, **kw) -> tuple[Orchestrator, list]:
    bus = EventBus("llamacpp")
    events = bus.add_subscriber(maxsize=1_000_000)
    settings = AgentSettings(workspace=workspace, policy="all", **kw)
    return Orchestrator(provider, default_registry(), bus, settings), events


def test_bundled_model_answers_through_the_command(workspace: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHERON_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pheron_tui",
            "run",
            "--provider",
            "llamacpp",
            "--workspace",
            str(workspace),
            "What is the capital of France? Answer briefly.",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "Paris" in done.stdout


async def test_a_tool_task_on_a_template_with_tools(workspace: Path) -> None:
    provider = TaskFirst("bundled", chat_template=QWEN3_STYLE_TEMPLATE)
    await provider.load()
    assert provider.native_tools
    call = '<think>I should look.</think>\n<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
    forced = Forced(
        provider, plan=[call, "The folder holds main.py and notes.md."], critic=["ok"] * 3
    )
    provider.logits_processors = forced
    orchestrator, events = agent(provider, workspace)
    result = await orchestrator.submit("What files are here?")
    await provider.aclose()
    assert result.status == "finished", result
    assert result.answer == "The folder holds main.py and notes.md."
    seen = events.drain()
    [finished] = [e for e in seen if e.type == "ToolCallFinished"]
    assert finished.ok and "notes.md" in finished.observation
    thoughts = "".join(e.text for e in seen if e.type == "ThinkDelta" and e.phase == "plan")
    assert "I should look." in thoughts
    plans = [e for e in seen if e.type == "Usage" and e.purpose == "plan"]
    assert len(plans) == 2
    # The second planning cycle re-evaluates only what the first one added.
    assert plans[1].cached_tokens >= plans[0].prompt_tokens - 1, plans


async def test_cancel_stops_within_one_token() -> None:
    """Closing the stream (what cancelling the consuming task does) stops generation: the
    model is asked for at most one more token after the consumer let go."""
    provider = LlamaCppProvider("bundled")
    await provider.load()
    forced = Forced(provider, chat=[" ".join(["word"] * 300), "Short."])
    provider.logits_processors = forced
    request = CompletionRequest(messages=[Message(role="user", content="talk")], max_tokens=400)
    stream = provider.stream(request)
    received = ""
    async for chunk in stream:
        received += chunk.text if chunk.kind == "text" else ""
        if received.count("word") >= 20:
            calls_when_let_go = forced.calls
            break
    await stream.aclose()
    assert forced.calls <= calls_when_let_go + 1
    assert forced.calls < 100  # nowhere near the 300 words asked for
    again = [c.text async for c in provider.stream(request) if c.kind == "text"]
    await provider.aclose()
    assert "".join(again) == "Short."  # the context is free for the next request


async def test_prefix_is_reused_across_turns(workspace: Path) -> None:
    provider = LlamaCppProvider("bundled")
    orchestrator, events = agent(provider, workspace, chat_max_tokens=12)
    await orchestrator.submit("Say hello.")
    await orchestrator.submit("Say it again.")
    await provider.aclose()
    chats = [e for e in events.drain() if e.type == "Usage" and e.purpose == "chat"]
    assert len(chats) == 2
    assert chats[1].cached_tokens >= chats[0].prompt_tokens - 1
    assert chats[1].prompt_tokens > chats[0].prompt_tokens


async def test_scores_are_log_probabilities() -> None:
    provider = LlamaCppProvider("bundled")
    request = CompletionRequest(
        messages=[Message(role="user", content="Answer yes or no: is Paris in France?")]
    )
    scores = await provider.score_choices(request, ["yes", "no"])
    await provider.aclose()
    assert all(v < 0 for v in scores.values())
    assert 0 < sum(np.exp(v) for v in scores.values()) <= 1.0 + 1e-9
