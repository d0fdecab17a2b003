"""The default executor: the child's session loop runs as asyncio work in this process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from catui.session.events import Event
from catui.subagents.run import SubagentRun


class InProcessExecutor:
    """Runs a child's :class:`~catui.session.session.Session` on this event loop."""

    async def execute(self, run: SubagentRun) -> AsyncIterator[Event]:
        """Run the child to its end, yielding its events.

        A stop (the parent's abort, the run's own stop event or stop request) aborts the child at
        once, even in the middle of a model request: its run is closed, which cancels its work.
        """
        first_index, tools_before = len(run.session.messages), run.tool_use_count
        run.start_limits()
        stream = run.session.run(run.first_message)
        stop = asyncio.ensure_future(_first_set(run.stop_signal(), run.stop_request))
        # The child's own loop runs ahead of this consumer, so abort it the moment a stop comes,
        # not when this loop next looks: otherwise a child whose tool just finished starts another turn.
        stop.add_done_callback(lambda f: None if f.cancelled() else run.session.abort())
        try:
            while True:
                step = asyncio.ensure_future(anext(stream))
                await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
                if stop.done():
                    run.session.abort()
                    if not step.done():
                        step.cancel()
                    with contextlib.suppress(BaseException):
                        await step
                    run.aborted = True
                    # Tool calls of messages not read yet still count (the stopped agent's result reports them).
                    run.catch_up_tool_calls(first_index, tools_before)
                    return
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                run.observe(event)
                yield event
        finally:
            run.stop_limits()
            stop.cancel()
            closer = getattr(stream, "aclose", None)  # Session.run is an async generator
            if closer is not None:
                with contextlib.suppress(BaseException):
                    await closer()
            if run.mcp_servers is not None:
                with contextlib.suppress(Exception):
                    await run.mcp_servers.aclose()
    def moved_to_background(self, run: SubagentRun) -> None:
        """A moved child keeps running here: background children run in this process too."""

    async def aclose(self) -> None:
        """Nothing outlives a run here."""


async def _first_set(*events: asyncio.Event) -> None:
    """Return as soon as one of ``events`` is set."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
