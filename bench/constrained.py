"""Cost of constrained decoding: mask time per token against the model's own time per token.

Run: python bench/constrained.py [--rounds 3] [--engines llamacpp,mlx]

The bundled model, the first planning step of "list the files here" (legacy format,
tool_choice required: every generated token is masked), and the same step unconstrained for
the model's own speed. Goal: mask time under 10 % of the model's time per token.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pheron_tui.core.bus import EventBus  # noqa: E402
from pheron_tui.core.messages import Message  # noqa: E402
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator  # noqa: E402
from pheron_tui.tools.builtin import default_registry  # noqa: E402


async def measure(engine: str, rounds: int) -> None:
    from pheron_tui.providers.llamacpp import LlamaCppProvider
    from pheron_tui.providers.mlx import MLXProvider

    provider = {"llamacpp": LlamaCppProvider, "mlx": MLXProvider}[engine]("bundled")
    await provider.load()
    workspace = Path(tempfile.mkdtemp())
    (workspace / "notes.md").write_text("notes\n")
    orchestrator = Orchestrator(
        provider, default_registry(), EventBus("bench"), AgentSettings(workspace=workspace)
    )
    orchestrator.history = [Message(role="user", content="list the files here")]
    request = orchestrator._planning_request(legacy=not provider.native_tools, step=1)
    request = request.model_copy(update={"max_tokens": 48})  # unconstrained replies run on
    masks, model = [], []
    for _ in range(rounds):
        per_token = {}
        for constrained in (True, False):
            provider.constrained = constrained
            usage = None
            async for chunk in provider.stream(request):
                if chunk.kind == "usage":
                    usage = chunk.usage
            assert usage is not None
            per_token[constrained] = 1000 / usage.tokens_per_s
            if constrained and usage.mask_ms_per_token:
                masks.append(usage.mask_ms_per_token)
        model.append(per_token[False])
        if engine == "llamacpp":
            # llama.cpp applies the grammar inside its sampler and reports no mask time: the
            # cost is the difference per token between the constrained and the free reply.
            masks.append(max(per_token[True] - per_token[False], 0.0))
    mask, per_token = statistics.median(masks), statistics.median(model)
    print(
        f"{engine:<10} mask {mask:6.3f} ms/token   model {per_token:7.2f} ms/token   "
        f"ratio {mask / per_token:6.1%}   (goal < 10 %)"
    )
    await provider.aclose()


async def main(rounds: int, engines: list[str]) -> None:
    for engine in engines:
        await measure(engine, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default="llamacpp,mlx")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.engines.split(",")))
