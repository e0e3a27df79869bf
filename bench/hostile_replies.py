"""The reply parser on hostile replies: a marker followed by thousands of spaces, one marker
written over and over, a call that loops. Before the patterns were bounded, ``CALL(`` and
20,000 spaces took minutes (nested ``\\s*`` backtracking) and froze the turn.

Run: python bench/hostile_replies.py [--size N]
Prints, for each reply shape, the time at N and 10·N characters and their ratio: ~10 is
linear, ~100 quadratic. Goal: every shape under 0.5 s at 10·N = 200,000 characters, and no
ratio far above 10.
"""

from __future__ import annotations

import argparse
import time

from pheron_tui.core.parsing import parse_reply

MARKERS = [
    "CALL(",
    "CLARIFY(",
    'CLARIFY("',
    "<tool_call>",
    "<function=",
    "<parameter=",
    "<final>",
    '{"name": "read_file", "arguments": {',
    "CALL(read_file) WITH {",
    'CALL(read_file) WITH {"a": [',
    'CALL(read_file) WITH {"a": "',
]
FILLS = [" ", "a ", "\n", " }", '"', "\\", "True,", "'", "'x', ", "'x': ", "\\d", "\t"]
TOOLS = {"read_file": {"type": "object"}}


def shapes(size: int) -> dict[str, str]:
    """Each marker followed by a long fill, written over and over, and with a word between."""
    out = {}
    for marker in MARKERS:
        for fill in FILLS:
            out[f"{marker!r} + {fill!r}·n"] = marker + fill * (size // len(fill))
            out[f"({marker!r} + {fill!r})·n"] = (marker + fill) * (size // len(marker + fill))
            out[f"{marker!r} x {fill!r}·n y"] = marker + "x" + fill * (size // len(fill)) + "y"
    for pairs in (10, 100, 1000):  # calls one after another, each read a quote at a time
        call = "CALL(read_file) WITH {" + "'x': 'y', " * pairs + "'z': None}\n"
        out[f"calls of {pairs} Python-style pairs·n"] = call * (size // len(call) + 1)
    return out


def timed(text: str) -> float:
    started = time.perf_counter()
    parse_reply(text, TOOLS)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000)
    args = parser.parse_args()
    small, large = shapes(args.size), shapes(10 * args.size)
    rows = []
    for name in small:
        a, b = timed(small[name]), timed(large[name])
        rows.append((b, b / max(a, 1e-6), a, name))
    rows.sort(reverse=True)
    print(f"{len(rows)} reply shapes, {args.size:,} and {10 * args.size:,} characters")
    print(f"{'at 10·N':>9} {'ratio':>7} {'at N':>9}  shape (the 10 slowest)")
    for b, ratio, a, name in rows[:10]:
        print(f"{b:8.3f}s {ratio:7.1f} {a:8.4f}s  {name}")
    worst = rows[0][0]
    print(f"slowest at 10·N: {worst:.3f} s (goal < 0.5 s)")


if __name__ == "__main__":
    main()
