"""Intent classification accuracy on the labelled set in tests/data/intents.jsonl.

Run: python bench/intent_accuracy.py [--provider rule|mlx] [--model bundled]
Prints accuracy and time per message for each method asked for. The rule needs no model; the
mlx provider scores the two labels (one forward pass) where it can.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from pheron_tui.core.intent import classify, rule_intent

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "intents.jsonl"


def load() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    return [(row["text"], row["intent"]) for row in rows]


def report(name: str, rows: list[tuple[str, str]], predicted: list[str], seconds: float) -> None:
    right = sum(p == want for p, (_, want) in zip(predicted, rows, strict=True))
    wrong = [text for p, (text, want) in zip(predicted, rows, strict=True) if p != want]
    print(
        f"{name:<28} {right}/{len(rows)} right ({right / len(rows):.0%}), "
        f"{seconds / len(rows) * 1000:.1f} ms per message"
    )
    for text in wrong:
        print(f"    wrong: {text}")


async def with_provider(provider_name: str, model: str, rows: list[tuple[str, str]]) -> None:
    from pheron_tui.config import Settings
    from pheron_tui.runtime.select import create_provider

    provider = create_provider(Settings(provider=provider_name, model=model))
    await provider.load()

    async def never(_request):  # scoring providers do not generate here
        raise RuntimeError("generation fallback used")

    started = time.perf_counter()
    predicted = [(await classify(provider, text, never)).intent for text, _ in rows]
    report(f"{provider_name}:{model} (scored)", rows, predicted, time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", action="append", choices=["rule", "mlx", "llamacpp"])
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    rows = load()
    print(f"{len(rows)} labelled messages from {DATA.name}")
    for name in args.provider or ["rule"]:
        if name == "rule":
            started = time.perf_counter()
            predicted = [rule_intent(text) for text, _ in rows]
            report("fallback rule", rows, predicted, time.perf_counter() - started)
        else:
            asyncio.run(with_provider(name, args.model, rows))


if __name__ == "__main__":
    main()
