"""llama.cpp engine: raw xllamacpp vs pheron-tui's llamacpp provider (vs the MLX provider).

Run: python bench/llamacpp_provider.py [--rounds 7] [--tokens 128] [--mlx] [--model PATH.gguf]

The same chat request, greedy, from a cold prompt cache every round (``cache_prompt`` off, so
prompt speed is real prefill, not reuse), alternating raw → ours in one process on one loaded
model. Raw is xllamacpp's in-process ``handle_chat_completions`` with a Python callback; ours
is the provider (the in-process server's loopback HTTP, SSE, pheron-tui's chunk decoding).
Both are timed the same way, on the client side: prompt tok/s is prompt tokens over the time
to the first token, generated tok/s is the tokens after the first over the time after it.
Medians of the rounds, and ours/raw as the median of each round's own ratio (this shared VM
drifts by 20 % within a run). Goal: ours >= 0.97 x raw on both.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pheron_tui.core.messages import CompletionRequest, Message  # noqa: E402
from pheron_tui.providers.llamacpp import LlamaCppProvider  # noqa: E402

QUESTION = (
    "You are a careful assistant. Here is some context about the sea: it covers most of the "
    "planet, it is salty, and it shapes the weather. Write a long story about the sea."
)


def request(tokens: int) -> CompletionRequest:
    return CompletionRequest(
        messages=[Message(role="user", content=QUESTION)], max_tokens=tokens, purpose="chat"
    )


def rates(
    prompt: int, generated: int, start: float, first: float, last: float
) -> tuple[float, float]:
    prompt_rate = prompt / (first - start)
    gen_rate = (generated - 1) / (last - first) if last > first else 0.0
    return prompt_rate, gen_rate


def raw_round(provider: LlamaCppProvider, tokens: int) -> tuple[float, float]:
    payload = provider._payload(request(tokens))
    payload.update(cache_prompt=False, temperature=0.0)
    times: list[float] = []
    usage: dict = {}
    start = time.perf_counter()

    def callback(event: dict) -> bool:
        for choice in event.get("choices") or []:
            if (choice.get("delta") or {}).get("content"):
                times.append(time.perf_counter())
        if event.get("usage"):
            usage.update(event["usage"])
        return False

    done = threading.Event()

    def run() -> None:
        provider._server.handle_chat_completions(payload, callback)
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return rates(usage["prompt_tokens"], usage["completion_tokens"], start, times[0], times[-1])


async def ours_round(provider: LlamaCppProvider, tokens: int) -> tuple[float, float]:
    provider.extra_payload = lambda _request: {"cache_prompt": False}
    times: list[float] = []
    usage = None
    start = time.perf_counter()
    async for chunk in provider.stream(request(tokens)):
        if chunk.kind == "text":
            times.append(time.perf_counter())
        elif chunk.kind == "usage":
            usage = chunk.usage
    assert usage is not None
    return rates(usage.prompt_tokens, usage.completion_tokens, start, times[0], times[-1])


async def main(rounds: int, tokens: int, model: str, mlx: bool) -> None:
    provider = LlamaCppProvider(model)
    await provider.load()
    await ours_round(provider, 8)  # warm up both paths
    await asyncio.to_thread(raw_round, provider, 8)
    raw, ours = [], []
    for _ in range(rounds):
        raw.append(await asyncio.to_thread(raw_round, provider, tokens))
        ours.append(await ours_round(provider, tokens))
    await provider.aclose()
    for name, rows in (("raw xllamacpp", raw), ("pheron llamacpp", ours)):
        prompt = statistics.median(r[0] for r in rows)
        gen = statistics.median(r[1] for r in rows)
        print(f"{name:<16} prompt {prompt:7.1f} tok/s   generated {gen:7.1f} tok/s")
    prompt_ratio = statistics.median(o[0] / r[0] for o, r in zip(ours, raw, strict=True))
    gen_ratio = statistics.median(o[1] / r[1] for o, r in zip(ours, raw, strict=True))
    print(
        f"ours/raw (median of paired rounds): prompt {prompt_ratio:.3f}, "
        f"generated {gen_ratio:.3f}   (goal >= 0.97)"
    )
    if mlx:
        from pheron_tui.providers.mlx import MLXProvider

        engine = MLXProvider("bundled")
        await engine.load()
        start = time.perf_counter()
        usage = None
        async for chunk in engine.stream(request(tokens)):
            if chunk.kind == "usage":
                usage = chunk.usage
        await engine.aclose()
        assert usage is not None
        print(
            f"{'mlx':<16} prompt {usage.prompt_tokens / (usage.ttft_ms / 1000):7.1f} tok/s   "
            f"generated {usage.tokens_per_s:7.1f} tok/s   ({time.perf_counter() - start:.1f} s)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--mlx", action="store_true", help="also time the MLX provider")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.tokens, args.model, args.mlx))
