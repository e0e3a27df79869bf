"""EventBus: fan-out, monotonic seq, merging under pressure, JSON round trip."""

from __future__ import annotations

import asyncio

from pheron_tui.core import events as ev
from pheron_tui.core.bus import EventBus


async def test_every_subscriber_gets_every_event_in_order() -> None:
    bus = EventBus("s")
    a, b = bus.add_subscriber(), bus.add_subscriber()
    bus.emit(ev.TurnStarted, 1, prompt="hi")
    bus.emit(ev.AnswerDelta, 1, text="x")
    assert [e.seq for e in a.drain()] == [1, 2]
    assert [type(e).__name__ for e in b.drain()] == ["TurnStarted", "AnswerDelta"]


async def test_slow_subscriber_gets_merged_deltas_and_every_control_event() -> None:
    bus = EventBus("s")
    slow = bus.add_subscriber(maxsize=4)
    bus.emit(ev.TurnStarted, 1, prompt="p")
    for i in range(1000):
        bus.emit(ev.AnswerDelta, 1, text=str(i % 10))
        if i == 500:
            bus.emit(ev.ToolCallStarted, 1, call_id="c")
    bus.emit(ev.TurnFinished, 1, status="finished", answer="")
    events = slow.drain()
    assert len(events) <= 4 + 3
    text = "".join(e.text for e in events if isinstance(e, ev.AnswerDelta))
    assert text == "".join(str(i % 10) for i in range(1000))
    names = [type(e).__name__ for e in events]
    assert names[0] == "TurnStarted" and names[-1] == "TurnFinished"
    assert "ToolCallStarted" in names
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs)
    assert slow.merged > 900


async def test_deltas_of_different_blocks_are_not_merged() -> None:
    bus = EventBus("s")
    sub = bus.add_subscriber(maxsize=1)
    bus.emit(ev.ThinkDelta, 1, text="a", phase="plan", step=1)
    bus.emit(ev.ThinkDelta, 1, text="b", phase="plan", step=2)
    bus.emit(ev.ToolOutputDelta, 1, call_id="x", text="1")
    bus.emit(ev.ToolOutputDelta, 1, call_id="y", text="2")
    assert [getattr(e, "text", "") for e in sub.drain()] == ["a", "b", "1", "2"]


async def test_a_subscriber_nobody_reads_stays_small() -> None:
    bus = EventBus("s")
    idle = bus.add_subscriber(maxsize=2)  # nobody reads this one
    for _ in range(10_000):
        bus.emit(ev.AnswerDelta, 1, text="x")
    assert len(idle) == 2 and idle.merged == 9_998


async def test_interleaved_streams_merge_too() -> None:
    # Thinking and answer deltas alternate with a thinking model; each merge target used to be
    # only the tail, so this queue grew to 10,000 events.
    bus = EventBus("s")
    slow = bus.add_subscriber(maxsize=4)
    bus.emit(ev.TurnStarted, 1, prompt="p")
    for i in range(5_000):
        bus.emit(ev.ThinkDelta, 1, text="t", phase="plan", step=1)
        bus.emit(ev.AnswerDelta, 1, text=str(i % 10))
    bus.emit(ev.ToolCallStarted, 1, call_id="c")
    bus.emit(ev.AnswerDelta, 1, text="after")
    assert len(slow) <= 4 + 2
    events = slow.drain()
    answer = "".join(e.text for e in events if isinstance(e, ev.AnswerDelta))
    assert answer == "".join(str(i % 10) for i in range(5_000)) + "after"
    assert "".join(e.text for e in events if isinstance(e, ev.ThinkDelta)) == "t" * 5_000
    # Text never moves to before a control event.
    assert isinstance(events[-2], ev.ToolCallStarted) and events[-1].text == "after"
    assert [e.seq for e in events] == sorted(e.seq for e in events)


async def test_async_iteration_ends_when_the_bus_closes() -> None:
    bus = EventBus("s")
    got: list[ev.Event] = []

    async def reader() -> None:
        async with bus.subscribe() as sub:
            async for event in sub:
                got.append(event)

    task = asyncio.create_task(reader())
    await asyncio.sleep(0)
    bus.emit(ev.AnswerDelta, 1, text="a")
    bus.close()
    await asyncio.wait_for(task, 1)
    assert [e.text for e in got] == ["a"]


def test_events_round_trip_through_json() -> None:
    bus = EventBus("sess")
    sub = bus.add_subscriber()
    bus.emit(
        ev.ToolCallProposed,
        2,
        call_id="c1",
        tool="read_file",
        arguments={"path": "a"},
        ubid="U1",
        risk="read",
    )
    bus.emit(ev.CriticVerdict, 2, verdict="PASS", reason="ok", auto=True)
    for event in sub.drain():
        line = ev.event_to_json(event)
        assert f'"type":"{type(event).__name__}"' in line
        assert ev.event_from_json(line) == event
