"""The bridge: bus events → one Textual message per frame.

A single worker drains the app's subscription, merges adjacent text deltas, and posts the batch
at most ``FRAME_RATE`` times a second, so a model streaming thousands of tokens a second costs
the widgets about thirty updates a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message

from pheron_tui.core.bus import EventBus, coalesce
from pheron_tui.core.events import Event

FRAME_RATE = 30


@dataclass
class BusEvents(Message):
    """Everything the core published since the last frame, oldest first."""

    events: list[Event]


async def pump_events(
    bus: EventBus, post: Callable[[Message], object], frame_s: float = 1 / FRAME_RATE
) -> None:
    """Forward the bus to ``post`` in per-frame batches until the bus closes."""
    async with bus.subscribe(maxsize=4096) as subscription:
        async for first in subscription:
            batch = coalesce([first, *subscription.drain()])
            post(BusEvents(batch))
            await asyncio.sleep(frame_s)
