"""Greedy tokens of a catalogue model: MLX (from pheron-tui's GGUF import) against llama.cpp.

Run: python bench/gguf_greedy.py [--model qwen2.5-coder-1.5b] [--tokens 48] 2>/dev/null

Imports the model's GGUF into MLX (cached like the app does) and decodes the same prompts
greedily on both engines, then prints how many tokens agree before the first difference and
llama.cpp's log-probabilities of its two likeliest tokens there: a near tie explains a split,
a clear winner on one side means the import computes something else. Slow on x86 (MLX runs ~10 tokens/s there).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pheron_tui.providers.models import gguf_file, local_model_path  # noqa: E402

PROMPTS = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    "Write a Python function that returns the average of a list.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<|im_start|>user\nWhat does `git rebase` do? Answer in two sentences.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "The history of the printing press begins",
]


@functools.cache
def _server(gguf: Path) -> Any:  # xllamacpp.Server; it ships no types
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 1024
    return xllamacpp.Server(params)


@functools.cache
def _mlx(folder: str) -> Any:
    from mlx_lm import load

    return load(folder)[:2]


def llamacpp_tokens(gguf: Path, prompt: str, count: int) -> tuple[list[int], list[list]]:
    reply = _server(gguf).handle_completions(
        {
            "prompt": prompt,
            "n_predict": count,
            "temperature": 0,
            "logprobs": 2,
            "cache_prompt": False,
        }
    )
    steps = reply["choices"][0]["logprobs"]["content"]
    return [step["id"] for step in steps], [step["top_logprobs"] for step in steps]


def mlx_tokens(folder: str, prompt: str, count: int) -> list[int]:
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    model, tokenizer = _mlx(folder)
    ids = mx.array(tokenizer.encode(prompt, add_special_tokens=False))
    out: list[int] = []
    for token, _ in generate_step(ids, model, max_tokens=count):
        out.append(int(token))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--tokens", type=int, default=48)
    args = parser.parse_args()
    gguf = gguf_file(args.model, "llamacpp")
    started = time.perf_counter()
    folder = local_model_path(args.model)
    print(f"{args.model}: MLX folder ready in {time.perf_counter() - started:.1f} s ({folder})")
    for number, prompt in enumerate(PROMPTS, 1):
        want, tops = llamacpp_tokens(gguf, prompt, args.tokens)
        got = mlx_tokens(folder, prompt, len(want))
        same = next(
            (i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), len(want)
        )
        line = f"prompt {number}: {same}/{len(want)} greedy tokens agree"
        if same < len(want):
            top = {t["id"]: t["logprob"] for t in tops[same]}
            line += f"; at token {same} llama.cpp's top two logprobs: " + ", ".join(
                f"{token}={logprob:.2f}" for token, logprob in top.items()
            )
        print(line)


if __name__ == "__main__":
    main()
