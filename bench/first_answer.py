"""How long a user waits: the first answer token of a chat message, and a two-step task.

Run: python bench/first_answer.py [--model NAME] [--provider llamacpp|mlx] [--rounds N]

The model is loaded once (load time printed apart), then each round, in a fresh conversation
on a fresh copy of the tasks fixture (bench/tasks.py):

* chat: a short question ("What is the capital of France?") from submit to the first answer
  token (classification included, as a user sees it) and to the end of the answer;
* a two-step task: "How many TODO items are in notes.md?" and the like (read a file, then
  answer) from submit to the answer's first token and to the end of the turn, the critic
  included.

Each round asks different messages. Printed: each round, then the median of the rounds after
the first. The first round is a cold start (nothing cached); later ones reuse the system
prompts from the cache, as a user's later messages do.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tasks import FIXTURE  # noqa: E402

from pheron_tui.config import load_settings  # noqa: E402
from pheron_tui.core import events as ev  # noqa: E402
from pheron_tui.runtime import Runtime  # noqa: E402

CHATS = (
    "What is the capital of France?",
    "What is the capital of Japan?",
    "Name the largest planet of the solar system.",
)
TASKS = (
    "How many TODO items are in notes.md?",
    "How many data rows (not counting the header) does data.csv have?",
    "What is the project's name, according to README.md?",
)


async def first_token_times(runtime: Runtime, prompt: str) -> dict[str, float | int | str]:
    """Seconds from submit to the first answer token and to the end of the turn."""
    subscription = runtime.bus.add_subscriber(maxsize=1_000_000)
    first: list[float] = []
    calls = 0
    answer: list[str] = []

    async def watch() -> None:
        nonlocal calls
        async for event in subscription:
            if isinstance(event, ev.AnswerDelta):
                if not first:
                    first.append(time.perf_counter())
                answer.append(event.text)
            elif isinstance(event, ev.ToolCallFinished):
                calls += 1

    watcher = asyncio.create_task(watch())
    started = time.perf_counter()
    result = await runtime.orchestrator.submit(prompt)
    ended = time.perf_counter()
    await asyncio.sleep(0.05)  # the last events reach the watcher
    watcher.cancel()
    runtime.bus.remove_subscriber(subscription)
    return {
        "first": first[0] - started if first else float("nan"),
        "total": ended - started,
        "calls": calls,
        "status": result.status,
        "answer": "".join(answer).strip().replace("\n", " ")[:50],
    }


async def run(args: argparse.Namespace) -> None:
    rows: dict[str, list[dict[str, float | int | str]]] = {"chat": [], "task": []}
    with tempfile.TemporaryDirectory(prefix="pheron-first-") as tmp:
        settings = load_settings(
            {
                "provider": args.provider,
                "model": args.model,
                "approve": "all",
                "record_sessions": False,
                "workspace": tmp,
            }
        )
        runtime = Runtime.create(settings, default_policy="all", can_ask=False)
        started = time.perf_counter()
        if not await runtime.load_model():
            sys.exit("the model did not load")
        print(f"first answer · {args.provider} · {args.model} · {args.rounds} rounds")
        print(f"model load: {time.perf_counter() - started:.1f} s")
        print(f"{'round':>5} {'kind':>5} {'first':>7} {'total':>7} {'calls':>5}  answer")
        try:
            for number in range(1, args.rounds + 1):
                for kind, prompts in (("chat", CHATS), ("task", TASKS)):
                    prompt = prompts[(number - 1) % len(prompts)]
                    await runtime.new_session()
                    for name, text in FIXTURE.items():
                        (Path(tmp) / name).write_text(text)
                    row = await first_token_times(runtime, prompt)
                    rows[kind].append(row)
                    print(
                        f"{number:>5} {kind:>5} {row['first']:>6.2f}s {row['total']:>6.2f}s "
                        f"{row['calls']:>5}  {row['answer']}",
                        flush=True,
                    )
        finally:
            await runtime.aclose()
    for kind in ("chat", "task"):
        cold, warm = rows[kind][0], rows[kind][1:] or rows[kind]
        firsts = [float(r["first"]) for r in warm]
        totals = [float(r["total"]) for r in warm]
        print(
            f"{kind}: cold {float(cold['first']):.2f} s to the first answer token, "
            f"{float(cold['total']):.2f} s in all; later rounds (median) "
            f"{statistics.median(firsts):.2f} s, {statistics.median(totals):.2f} s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="llamacpp")
    parser.add_argument("--model", default="default")
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(run(parser.parse_args()))
