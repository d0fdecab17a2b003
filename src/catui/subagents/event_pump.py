"""One task that reads a child's event stream, so its reader can change hands without losing an event.

A foreground child may move to the background in the middle of its run (spec 8.1): the parent stops
waiting for it and a background driver reads on from the same point. Reading through a pump makes
that move a matter of who calls :meth:`EventPump.next`, and lets the foreground reader stop waiting
at once without interrupting the child, at the cost of one task per child rather than one per event.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from catui.session.events import Event

INTERRUPTED: Any = object()
"""What :meth:`EventPump.next` returns when :meth:`EventPump.interrupt` woke its reader."""


class EventPump:
    """Reads ``stream`` in its own task and buffers its events for one reader at a time.

    The stream's end is :class:`StopAsyncIteration` from :meth:`next`; its failure is raised there.
    As an async iterator (the background driver's view) a cancelled reader cancels the stream too.
    """

    def __init__(self, stream: AsyncIterator[Event]) -> None:
        self._buffer: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._interrupted = False
        self._failure: BaseException | None = None
        self._ended = False
        self.task: asyncio.Task[None] = asyncio.get_running_loop().create_task(self._pump(stream))

    async def _pump(self, stream: AsyncIterator[Event]) -> None:
        try:
            async for event in stream:
                self._buffer.append(event)
                self._wake()
        except BaseException as exc:
            self._failure = exc
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._ended = True
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def interrupt(self) -> None:
        """Make the current (or next) wait in :meth:`next` return :data:`INTERRUPTED`; no event is lost."""
        self._interrupted = True
        self._wake()

    async def next(self) -> Event:
        """The next event, :data:`INTERRUPTED` after :meth:`interrupt`; a cancelled wait leaves the stream running."""
        while True:
            if self._buffer:
                return self._buffer.popleft()
            if self._ended:  # an interrupt that comes after the end changes nothing
                if self._failure is not None and not isinstance(self._failure, asyncio.CancelledError):
                    raise self._failure
                raise StopAsyncIteration
            if self._interrupted:
                self._interrupted = False
                return INTERRUPTED
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def __aiter__(self) -> EventPump:
        return self

    async def __anext__(self) -> Event:
        try:
            while True:
                event = await self.next()
                if event is not INTERRUPTED:
                    return event
        except asyncio.CancelledError:
            await self.cancel()
            raise

    async def cancel(self) -> None:
        """Stop reading: cancels the stream (and so the child's work) and waits for it to end."""
        self.task.cancel()
        await asyncio.wait({self.task})
