"""Streaming from an engine that runs on its own thread (MLX, llama.cpp).

The engine's work function runs on a single-thread executor and hands chunks over with
``emit``; it checks ``stop`` after every token and prefill step, so cancelling the consumer
stops generation within one token. The consumer does not wait for that: the executor has one
thread, so the next request still never overlaps this one on a context that is not
thread-safe, and closing the provider shuts the executor down after it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from pheron_tui.core.messages import Chunk
from pheron_tui.core.provider import ProviderError

Emit = Callable[[Any], None]
_DONE = object()


class Cancelled(Exception):
    """Raised inside the engine thread to abandon a prefill or a generation."""


def _retrieve(job: asyncio.Future[None]) -> None:
    """Collect a let-go job's outcome, so its failure is not reported as never retrieved."""
    if not job.cancelled():
        job.exception()


async def stream_on_thread(
    executor: concurrent.futures.Executor,
    work: Callable[[Emit, threading.Event], None],
) -> AsyncIterator[Chunk]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def emit(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        try:
            work(emit, stop)
        except Cancelled:
            pass
        except ProviderError:
            raise
        except Exception as exc:  # an engine's own failure must reach the user as a message
            raise ProviderError(f"generation failed: {type(exc).__name__}: {exc}") from None
        finally:
            emit(_DONE)

    job = loop.run_in_executor(executor, run)
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                break
            yield item
        await job  # re-raises a ProviderError from the thread
    finally:
        # Not waited for: the work stops at its next check (a token, a prefill step), and the
        # executor's single thread runs the next request only after it, so a cancel during a
        # long prefill is felt at once without two requests ever sharing the model.
        stop.set()
        if not job.done():
            job.add_done_callback(_retrieve)
