"""Streaming from an engine that runs on its own thread (MLX, llama.cpp).

The engine's work function runs on a single-thread executor and hands chunks over with
``emit``; it checks ``stop`` after every token, so cancelling the consumer stops generation
within one token. The consumer waits for the thread before returning, so the next request
never overlaps this one on a context that is not thread-safe.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from pheron_tui.core.messages import Chunk
from pheron_tui.core.provider import ProviderError

Emit = Callable[[Any], None]
_DONE = object()


class Cancelled(Exception):
    """Raised inside the engine thread to abandon a prefill or a generation."""


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
        stop.set()
        if not job.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(job)
