"""Core pipeline throughput: think guard + markup hold + parser + bus on a long scripted stream.

Run: python bench/core_pipeline.py [--chunks N]
Measures ``stream_reply``, the path every model reply takes (provider chunks → think guard →
markup hold → delta batching → bus), then the reply parser, with an in-memory provider so the
model's own cost is out of the picture. Once with a subscriber that keeps up and once with one
whose queue is full (delta merging). Goal: >= 500,000 chunks/s.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import CompletionRequest, DoneChunk, TextChunk
from pheron_tui.core.parsing import parse_reply
from pheron_tui.core.streaming import stream_reply


def make_chunks(n: int, seed: int = 7) -> list[str]:
    """A realistic token-sized stream: a think block, prose, and a tool call at the end."""
    rng = random.Random(seed)
    words = ["the", " file", " list", " of", " tokens", " and", " a", " <b>", " x", "\n", " is"]
    chunks = ["<thi", "nk>"]
    think_len = n // 2
    chunks += [rng.choice(words) for _ in range(think_len)]
    chunks += ["</th", "ink>", "\n\n"]
    chunks += [rng.choice(words) for _ in range(n - len(chunks) - 6)]
    chunks += ["<tool", "_call>", '{"name": "list_dir", ', '"arguments": {}}', "</tool_call>", ""]
    return chunks


class _MemoryProvider:
    name = "memory"
    model = "memory"
    native_tools = True

    def __init__(self, chunks: list[str]) -> None:
        self.items = [TextChunk(text=c) for c in chunks]

    async def stream(self, request: CompletionRequest):
        for item in self.items:
            yield item
        yield DoneChunk(finish_reason="stop")


async def pipeline(chunks: list[str], reader_maxsize: int) -> tuple[float, int, int]:
    """stream_reply as the orchestrator runs it; returns chunks/s, events queued, merged."""
    bus = EventBus("bench")
    subscriber = bus.add_subscriber(maxsize=reader_maxsize)  # nobody reads during the run
    provider = _MemoryProvider(chunks)
    request = CompletionRequest(messages=[], purpose="plan")
    started = time.perf_counter()
    reply = await stream_reply(provider, bus, 1, request, hold_markup=True)  # type: ignore[arg-type]
    parsed = parse_reply(reply.answer)
    elapsed = time.perf_counter() - started
    assert parsed.kind == "tool_calls", parsed
    return len(chunks) / elapsed, len(subscriber.drain()), subscriber.merged


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    chunks = make_chunks(args.chunks)
    print(f"chunks per run: {len(chunks):,} (think block, prose, one tool call)")
    for maxsize, label in ((1_000_000, "fast reader"), (64, "slow reader")):
        runs = [asyncio.run(pipeline(chunks, maxsize)) for _ in range(args.rounds)]
        rate, queued, merged = max(runs)
        print(
            f"{label:<12} provider → guard → hold → bus → parser: {rate:>10,.0f} chunks/s "
            f"(goal >= 500,000); {queued:,} events queued, {merged:,} merged"
        )


if __name__ == "__main__":
    main()
