"""EventBus: publish / subscribe with a bounded queue per subscriber.

Publishing never blocks and never waits for a subscriber. When a subscriber falls behind, its
queue merges text deltas of the same block instead of growing; control events are never
merged or dropped (see ``Subscription``).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
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


class _Entry:
    """A queued event and the deltas merged into it but not yet folded in: folding happens
    once, when the entry is read, not once per delta."""

    __slots__ = ("event", "extra")

    def __init__(self, event: Event) -> None:
        self.event = event
        self.extra: list[Event] = []

    def sealed(self) -> Event:
        """The event with the merged text. It keeps its own ``seq``: a delta may be merged
        into an entry with later ones behind it, and seqs must still read in order."""
        if not self.extra:
            return self.event
        text = self.event.text + "".join(e.text for e in self.extra)  # type: ignore[attr-defined]
        return self.event.model_copy(update={"text": text})


class Subscription:
    """One subscriber's queue. Iterate it with ``async for``; it ends when the bus closes.

    Once it holds ``maxsize`` events, a delta joins the latest queued delta of its own block
    among the deltas since the last control event (a think block, the answer, one call's
    output), so interleaved streams merge too; control events are never merged or dropped.
    The queue then holds at most ``maxsize`` events, plus control events, plus one delta per
    block open between two control events."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.merged = 0
        """How many deltas were folded into earlier ones because this subscriber lagged."""
        self._items: deque[_Entry] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, event: Event) -> None:
        items = self._items
        if len(items) >= self.maxsize and isinstance(event, DELTA_TYPES):
            for entry in reversed(items):
                if not isinstance(entry.event, DELTA_TYPES):
                    break  # never move text to before a control event
                if _mergeable(entry.event, event):
                    entry.extra.append(event)
                    self.merged += 1
                    return
        items.append(_Entry(event))
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        self._closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def drain(self) -> list[Event]:
        """Everything queued now, oldest first."""
        events = [entry.sealed() for entry in self._items]
        self._items.clear()
        return events

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
        return self._items.popleft().sealed()


class EventBus:
    """Typed fan-out of events to every subscriber, with the session's monotonic ``seq``."""

    def __init__(self, session_id: str, first_seq: int = 1) -> None:
        self.session_id = session_id
        self._subscribers: list[Subscription] = []
        self._watchers: list[Callable[[Event], None]] = []
        self._seq = itertools.count(first_seq)

    def watch(self, watcher: Callable[[Event], None]) -> None:
        """Call ``watcher`` with every event as it is published, before any reader sees it
        (bookkeeping in the core that must never lag, such as the turn records)."""
        self._watchers.append(watcher)

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
        for watcher in self._watchers:
            watcher(event)
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
