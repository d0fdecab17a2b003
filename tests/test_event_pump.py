"""EventPump: one task reads a child's events; its reader can be woken, changed or cancelled without loss."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from catui.session.events import Event, TextDelta
from catui.subagents.event_pump import INTERRUPTED, EventPump


def text(n: int) -> Event:
    return TextDelta(text=str(n), agent_id=None, parent_tool_use_id=None)


async def gated_stream(gate: asyncio.Event, before: int, after: int, log: list[str]) -> AsyncIterator[Event]:
    try:
        for n in range(before):
            yield text(n)
        await gate.wait()
        for n in range(before, before + after):
            yield text(n)
    except asyncio.CancelledError:
        log.append("cancelled")
        raise
    finally:
        log.append("closed")


def texts(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


async def test_an_interrupt_wakes_the_reader_and_a_second_reader_gets_every_other_event() -> None:
    gate, log = asyncio.Event(), list[str]()
    pump = EventPump(gated_stream(gate, 3, 2, log))
    first = [await pump.next() for _ in range(3)]
    waiting = asyncio.ensure_future(pump.next())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the stream is held at the gate
    pump.interrupt()
    assert await waiting is INTERRUPTED
    gate.set()
    rest = [event async for event in pump]  # the new reader (the background driver's view)
    assert texts(first) + texts(rest) == ["0", "1", "2", "3", "4"]
    assert log == ["closed"]


async def test_events_buffered_before_an_interrupt_come_first() -> None:
    gate, log = asyncio.Event(), list[str]()
    gate.set()
    pump = EventPump(gated_stream(gate, 2, 0, log))
    await asyncio.wait({pump.task})  # the pump has read both events and the end
    pump.interrupt()
    assert texts([await pump.next(), await pump.next()]) == ["0", "1"]
    with pytest.raises(StopAsyncIteration):  # after the end an interrupt changes nothing
        await pump.next()


async def test_a_cancelled_wait_leaves_the_stream_running() -> None:
    gate, log = asyncio.Event(), list[str]()
    pump = EventPump(gated_stream(gate, 0, 1, log))
    waiting = asyncio.ensure_future(pump.next())
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not pump.task.done()
    gate.set()
    assert texts([await pump.next()]) == ["0"]
    assert log == ["closed"]


async def test_cancelling_an_iterating_reader_cancels_the_stream() -> None:
    gate, log = asyncio.Event(), list[str]()
    pump = EventPump(gated_stream(gate, 1, 1, log))

    async def read_all() -> list[Event]:
        return [event async for event in pump]

    reader = asyncio.ensure_future(read_all())
    await asyncio.sleep(0.01)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert pump.task.done()
    assert log == ["cancelled", "closed"]


async def test_the_stream_failure_reaches_the_reader_after_its_events() -> None:
    async def failing() -> AsyncIterator[Event]:
        yield text(0)
        raise RuntimeError("child broke")

    pump = EventPump(failing())
    assert texts([await pump.next()]) == ["0"]
    with pytest.raises(RuntimeError, match="child broke"):
        await pump.next()
