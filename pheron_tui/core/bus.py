"""EventBus: publish / subscribe with a bounded queue per subscriber.

Publishing never blocks and never waits for a subscriber. When a subscriber falls behind, its
queue merges consecutive text deltas of the same kind instead of growing; control events are
never merged or dropped, so a queue holds at most ``maxsize`` items plus its control events.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from pheron_tui.core.events import DELTA_TYPES, Event, ThinkDelta, ToolOutputDelta

E = TypeVar("E", bound=Event)


def _mergeable(tail: Event, event: Event) -> bool:
    if type(tail) is not type(event) or tail.turn_id != event.turn_id:
        return False
    if isinstance(event, ThinkDelta):  # one think block per phase and planning cycle
        return tail.phase == event.phase and tail.step == event.step  # type: ignore[attr-defined]
    if isinstance(event, ToolOutputDelta):
        return tail.call_id == event.call_id  # type: ignore[attr-defined]
    return True


class Subscription:
    """One subscriber's queue. Iterate it with ``async for``; it ends when the bus closes."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.merged = 0
        """How many deltas were folded into earlier ones because this subscriber lagged."""
        self._items: deque[Event] = deque()
        self._extra: list[Event] = []
        """Deltas merged into the tail but not yet folded into it."""
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, event: Event) -> None:
        items = self._items
        if self._extra:
            if isinstance(event, DELTA_TYPES) and _mergeable(items[-1], event):
                self._extra.append(event)
                self.merged += 1
                return
            self._seal()
        if (
            len(items) >= self.maxsize
            and isinstance(event, DELTA_TYPES)
            and _mergeable(items[-1], event)
        ):
            self._extra.append(event)
            self.merged += 1
            return
        items.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _seal(self) -> None:
        """Fold the deltas waiting behind the tail into it (done once, not once per delta)."""
        tail, extra = self._items[-1], self._extra
        text = tail.text + "".join(e.text for e in extra)  # type: ignore[attr-defined]
        self._items[-1] = tail.model_copy(
            update={"text": text, "seq": extra[-1].seq, "ts": extra[-1].ts}
        )
        self._extra = []

    def _ready(self) -> None:
        if self._extra and len(self._items) == 1:
            self._seal()

    def close(self) -> None:
        self._closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def get_nowait(self) -> Event | None:
        self._ready()
        return self._items.popleft() if self._items else None

    def drain(self) -> list[Event]:
        """Everything queued now, oldest first."""
        if self._extra:
            self._seal()
        items = list(self._items)
        self._items.clear()
        return items

    def __len__(self) -> int:
        return len(self._items)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        self._ready()
        return self._items.popleft()


class EventBus:
    """Typed fan-out of events to every subscriber, with the session's monotonic ``seq``."""

    def __init__(self, session_id: str, first_seq: int = 1) -> None:
        self.session_id = session_id
        self._subscribers: list[Subscription] = []
        self._seq = itertools.count(first_seq)

    def emit(self, event_type: type[E], turn_id: int, **fields: Any) -> E:
        """Build an event with this session's id, the next seq and the time, and publish it."""
        event = event_type(
            session_id=self.session_id,
            turn_id=turn_id,
            seq=next(self._seq),
            ts=time.time(),
            **fields,
        )
        self.publish(event)
        return event

    def publish(self, event: Event) -> None:
        for subscription in self._subscribers:
            subscription.put(event)

    def add_subscriber(self, maxsize: int = 1024) -> Subscription:
        subscription = Subscription(maxsize)
        self._subscribers.append(subscription)
        return subscription

    def remove_subscriber(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
        subscription.close()

    @asynccontextmanager
    async def subscribe(self, maxsize: int = 1024) -> AsyncIterator[Subscription]:
        subscription = self.add_subscriber(maxsize)
        try:
            yield subscription
        finally:
            self.remove_subscriber(subscription)

    def close(self) -> None:
        """End every subscriber's iteration once its queue is drained."""
        for subscription in self._subscribers:
            subscription.close()


def coalesce(events: list[Event]) -> list[Event]:
    """Merge runs of adjacent deltas of the same block into one event each (order kept)."""
    out: list[Event] = []
    pending: list[Event] = []

    def seal() -> None:
        if len(pending) == 1:
            out.append(pending[0])
        elif pending:
            first, last = pending[0], pending[-1]
            text = "".join(e.text for e in pending)  # type: ignore[attr-defined]
            out.append(first.model_copy(update={"text": text, "seq": last.seq, "ts": last.ts}))
        pending.clear()

    for event in events:
        if isinstance(event, DELTA_TYPES):
            if pending and not _mergeable(pending[-1], event):
                seal()
            pending.append(event)
        else:
            seal()
            out.append(event)
    seal()
    return out
