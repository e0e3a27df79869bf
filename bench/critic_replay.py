"""The critic alone, replayed on logged tasks: does its verdict agree with the check?

Run: python bench/tasks.py --log DIR   (once: logs each task's events and its check)
     python bench/critic_replay.py DIR [--model NAME] [--provider llamacpp|mlx]

For every logged task the critic judged, the request, the tool calls with their results and
the final answer are read back from the events and given to today's critic; its verdict is
compared with the task's check (``taskNN.check.json``, written by bench/tasks.py). Printed per
task: the check, the logged verdict, the replayed verdict and its reason; then how often each
agreed with the check. A change to the critic is measured here in a minute or two, on the same
agent work, instead of re-running every task (whose agent varies by a task or two per run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from pheron_tui.core.bus import EventBus
from pheron_tui.core.critic import CriticAgent, Step
from pheron_tui.core.intent import asks_only_to_know
from pheron_tui.core.messages import CompletionRequest
from pheron_tui.core.request_check import check_command
from pheron_tui.core.streaming import stream_reply


def load_task(events_file: Path) -> tuple[str, list[Step], str, str] | None:
    """Request, steps, answer and the logged verdict; None when the critic did not judge."""
    events = []
    for line in events_file.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    verdicts = [e for e in events if e["type"] == "CriticVerdict" and not e.get("auto")]
    finished = [e for e in events if e["type"] == "TurnFinished"]
    if not verdicts or not finished:
        return None
    request = next(e["prompt"] for e in events if e["type"] == "TurnStarted")
    proposed = {e["call_id"]: e for e in events if e["type"] == "ToolCallProposed"}
    steps = [
        Step(
            proposed[e["call_id"]]["tool"],
            proposed[e["call_id"]]["arguments"],
            proposed[e["call_id"]]["risk"],
            e["status"],
            e["observation"],
        )
        for e in events
        if e["type"] == "ToolCallFinished" and e["call_id"] in proposed
    ]
    return request, steps, finished[-1]["answer"], verdicts[-1]["verdict"]


async def replay(folder: Path, provider_name: str, model: str) -> None:
    from pheron_tui.config import Settings
    from pheron_tui.runtime.select import create_provider

    provider = create_provider(Settings(provider=provider_name, model=model))
    await provider.load()
    bus = EventBus("critic-replay")

    async def generate(request: CompletionRequest) -> str:
        return (await stream_reply(provider, bus, 0, request, show_answer=False)).answer

    critic = CriticAgent(provider, generate)
    logged_agree = replayed_agree = judged = 0
    started = time.perf_counter()
    print(f"{'task':>6} {'check':>5} {'logged':>6} {'now':>4}  reason")
    for events_file in sorted(folder.glob("task[0-9][0-9].jsonl")):
        check_file = events_file.with_suffix(".check.json")
        task = load_task(events_file)
        if task is None or not check_file.is_file():
            continue
        right = bool(json.loads(check_file.read_text())["right"])
        request, steps, answer, logged = task
        # The fixture is gone: the check is read from the request as written.
        review = await critic.review(
            request,
            answer,
            steps,
            question_only=asks_only_to_know(request),
            check=check_command(request) or "",
        )
        judged += 1
        logged_agree += (logged == "PASS") == right
        replayed_agree += (review.verdict == "PASS") == right
        print(
            f"{events_file.stem:>6} {'✓' if right else '✗':>5} {logged:>6} {review.verdict:>4}  "
            f"{review.reason[:90]}",
            flush=True,
        )
    seconds = time.perf_counter() - started
    print(f"logged critic agrees with the check:   {logged_agree}/{judged}")
    print(f"replayed critic agrees with the check: {replayed_agree}/{judged}")
    print(f"{seconds:.0f} s, {seconds / max(judged, 1):.1f} s per verdict")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a --log folder of bench/tasks.py")
    parser.add_argument("--provider", default="llamacpp")
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    asyncio.run(replay(args.folder, args.provider, args.model))


if __name__ == "__main__":
    main()
