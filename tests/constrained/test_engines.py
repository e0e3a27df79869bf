"""Constrained decoding on the real engines: the bundled model makes a real call, and a
random-weight model, once it opens a call, can only finish it well-formed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pheron_tui.core.messages import CompletionRequest, Message
from pheron_tui.core.parsing import parse_reply
from pheron_tui.providers.mlx import MLXProvider
from pheron_tui.tools.builtin import default_registry

from ..command import pheron
from ..mlx.tiny_models import build_qwen3_style, build_qwen35_style


def run_json(workspace: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    done = pheron("run", "--json", "--workspace", str(workspace), *args, timeout=600)
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_the_bundled_model_lists_the_files(workspace: Path) -> None:
    """The issue's check, on the default engine (llama.cpp where installed, else MLX)."""
    done, events = run_json(
        workspace, "--model", "smollm2-135m", "--approve", "read-only", "list the files here"
    )
    assert done.returncode == 0, done.stderr
    finished = [e for e in events if e["type"] == "ToolCallFinished"]
    assert finished and finished[0]["ok"], events
    proposed = [e for e in events if e["type"] == "ToolCallProposed"]
    assert proposed[0]["tool"] == "list_dir"
    answer = next(e for e in events if e["type"] == "TurnFinished")["answer"]
    assert "notes.md" in answer and "main.py" in answer
    [ready] = [e for e in events if e["type"] == "ModelReady"]
    if ready["provider"] == "mlx":  # llama.cpp applies its grammar inside and reports no time
        masks = [
            e["mask_ms_per_token"]
            for e in events
            if e["type"] == "Usage" and e["purpose"] == "plan"
        ]
        assert masks and masks[0] > 0  # the first planning step really was constrained


class PrefixThenFree:
    """Forces the reply's first tokens (to open a call), then lets the model (and the
    constraint) decide every token after."""

    def __init__(self, tokenizer, prefix: str) -> None:
        self.target = tokenizer.encode(prefix, add_special_tokens=False)

    def __call__(self, _request) -> list:
        import mlx.core as mx

        position = {"i": 0}

        def force(_tokens, logits):
            i = position["i"]
            position["i"] += 1
            if i >= len(self.target):
                return logits
            choice = mx.arange(logits.shape[-1]) == self.target[i]
            return mx.where(choice, mx.zeros_like(logits), mx.full(logits.shape, -mx.inf))

        return [force]


@pytest.mark.parametrize(
    ("build", "prefix"),
    [
        (build_qwen3_style, "<think>\nok\n</think>\n\n<tool_call>"),
        (build_qwen35_style, "ok\n</think>\n\n<tool_call>"),
    ],
)
async def test_a_random_model_finishes_an_opened_call_well_formed(
    tmp_path: Path, build, prefix: str
) -> None:
    folder = build(tmp_path / "model")
    # Tools whose strings are paths (bounded at 4,096 characters), so the call must end
    # within the token budget whatever the random weights write.
    tools = [s for s in default_registry().specs() if s.function.name in ("list_dir", "read_file")]
    provider = MLXProvider(str(folder))
    await provider.load()
    provider.logits_processors = PrefixThenFree(provider.tokenizer, prefix)
    request = CompletionRequest(
        messages=[Message(role="user", content="list the files")],
        tools=tools,
        purpose="plan",
        enable_thinking=True,
        max_tokens=6000,
    )
    text = "".join([c.text async for c in provider.stream(request) if c.kind == "text"])
    usage = provider.last_usage
    await provider.aclose()
    reply = text.split("</think>")[-1]
    parsed = parse_reply(reply, default_registry().schemas())
    assert parsed.kind == "tool_calls", text
    [call] = parsed.calls[:1]
    assert call.error is None, (call, text)
    default_registry().prepare(call.name, call.arguments)  # validates: right names and types
    assert usage.mask_ms_per_token > 0
