"""Run the real ``mlx_lm.server`` with one addition: each request's reply is forced.

A tiny model with random weights says nothing useful, so, as in the in-process MLX tests, a
logits processor makes it say scripted text token by token. Everything else is mlx_lm's own:
HTTP, SSE, the chat template with tools, its tool-call parser, logprobs, usage. The replies
are read one per request, in order, from a JSON file the tests write (a list of strings).

    python forced_mlx_server.py REPLIES_FILE --model FOLDER --port N
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path


def main() -> None:
    replies_path = Path(sys.argv.pop(1))
    import mlx.core as mx
    import mlx_lm.server as server
    from mlx_lm.utils import load_tokenizer

    model_folder = Path(sys.argv[sys.argv.index("--model") + 1])
    tokenizer = load_tokenizer(model_folder)
    eos = sorted(tokenizer.eos_token_ids)[0]
    lock = threading.Lock()
    original = server._make_logits_processors

    def next_reply() -> list[int]:
        with lock:
            replies = json.loads(replies_path.read_text())
            text = replies.pop(0) if replies else "(no scripted reply left)"
            replies_path.write_text(json.dumps(replies))
        return [*tokenizer.encode(text, add_special_tokens=False), eos]

    def forced(args):
        target = next_reply()
        position = {"i": 0}

        def force(_tokens, logits):
            token = target[min(position["i"], len(target) - 1)]
            position["i"] += 1
            choice = mx.arange(logits.shape[-1]) == token
            return mx.where(choice, mx.zeros_like(logits), mx.full(logits.shape, -mx.inf))

        return [*original(args), force]

    server._make_logits_processors = forced
    server.main()


if __name__ == "__main__":
    main()
