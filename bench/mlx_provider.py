"""MLX provider against raw mlx-lm, prompt-cache reuse, and start-up time.

Run: python bench/mlx_provider.py [--rounds 3] [--tokens 48]

1. Raw ``mlx_lm.stream_generate`` and pheron-tui's MLXProvider on the bundled model, the same
   prompt, greedy, alternating in one process (both on the provider's MLX thread, since MLX
   streams are thread-local). Prints generated tokens/s for each and the ratio (goal >= 0.97).
2. A 4-cycle tool loop with forced replies through the orchestrator: prompt tokens, cached
   tokens and the share from the cache per cycle (goal >= 90 % from cycle 2), on a tiny
   Qwen3-style model (native path) and on the bundled model (legacy path).
3. Process start to ModelReady and to the first answer token for ``pheron-tui run``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pheron_tui.core.bus import EventBus  # noqa: E402
from pheron_tui.core.messages import CompletionRequest, Message  # noqa: E402
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator  # noqa: E402
from pheron_tui.providers.mlx import MLXProvider  # noqa: E402
from pheron_tui.tools.builtin import default_registry  # noqa: E402

QUESTION = "Write three sentences about the sea."


def raw_decode_rate(provider: MLXProvider, tokens: int) -> float:
    """Runs on the MLX thread: plain stream_generate, no cache reuse, greedy."""
    from mlx_lm import stream_generate
    from mlx_lm.sample_utils import make_sampler

    prompt = provider.tokenizer.apply_chat_template(
        [{"role": "user", "content": QUESTION}], add_generation_prompt=True
    )
    stamps = []
    for _ in stream_generate(
        provider._model,
        provider.tokenizer,
        prompt,
        max_tokens=tokens,
        sampler=make_sampler(temp=0.0),
    ):
        stamps.append(time.perf_counter())
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


async def our_decode_rate(provider: MLXProvider, tokens: int) -> float:
    request = CompletionRequest(
        messages=[Message(role="user", content=QUESTION)], max_tokens=tokens, purpose="chat"
    )
    stamps = []
    async for chunk in provider.stream(request):
        if chunk.kind == "text":
            stamps.append(time.perf_counter())
    # A token can carry no text (a partial UTF-8 sequence): count tokens from the usage report.
    produced = provider.last_usage.completion_tokens if provider.last_usage else len(stamps)
    return (produced - 1) / (stamps[-1] - stamps[0])


async def speed(rounds: int, tokens: int) -> None:
    provider = MLXProvider("bundled")
    await provider.load()
    await provider._on_thread(raw_decode_rate, provider, 8)  # warm up both paths
    await our_decode_rate(provider, 8)
    raw, ours = [], []
    for _ in range(rounds):
        raw.append(await provider._on_thread(raw_decode_rate, provider, tokens))
        ours.append(await our_decode_rate(provider, tokens))
    r, o = statistics.median(raw), statistics.median(ours)
    print(f"bundled model, {tokens} tokens, median of {rounds}, alternating:")
    print(
        f"  raw mlx_lm.stream_generate  {r:6.1f} tok/s   (runs: {', '.join(f'{x:.1f}' for x in raw)})"
    )
    print(
        f"  pheron-tui MLXProvider      {o:6.1f} tok/s   (runs: {', '.join(f'{x:.1f}' for x in ours)})"
    )
    print(f"  ratio ours / raw            {o / r:6.3f}   (goal >= 0.97)")
    await provider.aclose()


async def reuse(provider: MLXProvider, plans: list[str], label: str, workspace: Path) -> None:
    from tests.mlx.tiny_models import ForcedReplies

    await provider.load()
    provider.logits_processors = ForcedReplies(provider.tokenizer, plan=plans, critic=["ok"])

    async def task_first(request, options):
        return {o: (0.0 if o in ("task", "PASS") else -1.0) for o in options}

    provider.score_choices = task_first  # type: ignore[method-assign]
    bus = EventBus("bench")
    events = bus.add_subscriber(maxsize=1_000_000)
    agent = Orchestrator(
        provider, default_registry(), bus, AgentSettings(workspace=workspace, policy="all")
    )
    await agent.submit("What is in this folder?")
    usages = [e for e in events.drain() if type(e).__name__ == "Usage" and e.purpose == "plan"]
    print(f"{label}:")
    for cycle, usage in enumerate(usages, 1):
        share = usage.cached_tokens / usage.prompt_tokens
        print(
            f"  cycle {cycle}: prompt {usage.prompt_tokens:5d}  cached {usage.cached_tokens:5d}  "
            f"new {usage.prompt_tokens - usage.cached_tokens:4d}  from cache {share:6.1%}"
            f"  ttft {usage.ttft_ms:7.0f} ms"
        )
    await provider.aclose()


async def reuse_all(workspace: Path) -> None:
    from tests.mlx.tiny_models import build_qwen3_style

    call = '<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
    read = '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.md"}}\n</tool_call>'
    find = '<tool_call>\n{"name": "search_files", "arguments": {"pattern": "milk"}}\n</tool_call>'
    native = [f"<think>\nStep {i}.\n</think>\n\n{c}" for i, c in enumerate([call, read, find], 1)]
    native.append("<think>\nDone.\n</think>\n\nmain.py and notes.md; the notes say buy milk.")
    folder = build_qwen3_style(Path(tempfile.mkdtemp()) / "qwen3-tiny")
    await reuse(
        MLXProvider(str(folder)), native, "tiny Qwen3-style model, native tool path", workspace
    )
    legacy = [
        'CALL(list_dir) WITH {"path": "."}',
        'CALL(read_file) WITH {"path": "notes.md"}',
        'CALL(search_files) WITH {"pattern": "milk"}',
        "<final>main.py and notes.md; the notes say buy milk.</final>",
    ]
    await reuse(MLXProvider("bundled"), legacy, "bundled SmolLM2, legacy tool path", workspace)


def startup(workspace: Path, runs: int = 3) -> None:
    ready, first = [], []
    for _ in range(runs):
        started = time.perf_counter()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pheron_tui",
                "run",
                "--json",
                "--workspace",
                str(workspace),
                "hi",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        got_ready = got_first = None
        for line in process.stdout:  # type: ignore[union-attr]
            kind = json.loads(line)["type"]
            now = time.perf_counter() - started
            if kind == "ModelReady" and got_ready is None:
                got_ready = now
            if kind == "AnswerDelta" and got_first is None:
                got_first = now
        process.wait()
        ready.append(got_ready or float("nan"))
        first.append(got_first or float("nan"))
    print(f"process start (pheron-tui run 'hi', bundled model, median of {runs}):")
    print(f"  to ModelReady        {statistics.median(ready):5.2f} s")
    print(
        f"  to first answer text {statistics.median(first):5.2f} s (classify + chat prompt + first token)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=48)
    args = parser.parse_args()
    workspace = Path(tempfile.mkdtemp())
    (workspace / "notes.md").write_text("# Notes\nbuy milk\n")
    (workspace / "main.py").write_text("print('hello')\n")
    asyncio.run(speed(args.rounds, args.tokens))
    asyncio.run(reuse_all(workspace))
    startup(workspace)


if __name__ == "__main__":
    main()
