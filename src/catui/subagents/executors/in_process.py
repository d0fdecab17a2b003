"""The default executor: the child's session loop runs as asyncio work in this process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from catui.session.events import Event
from catui.subagents.child_shells import ChildShells
from catui.subagents.run import SubagentRun


class InProcessExecutor:
    """Runs a child's :class:`~catui.session.session.Session` on this event loop."""

    async def execute(self, run: SubagentRun) -> AsyncIterator[Event]:
        """Run the child to its end, yielding its events.

        A stop (the parent's abort, the run's own stop event or stop request) aborts the child at
        once, even in the middle of a model request: the session ends its stream and cancels its work.
        """
        first_index, tools_before = len(run.session.messages), run.tool_use_count
        # The current contract announces the child's background shells and stops them when it ends.
        shells = ChildShells(run) if run.current_contract else None
        run.start_limits()
        stream = run.session.run(run.first_message)
        # One waiter per run, not one per event: the session's stream ends the moment a stop comes
        # (stop_now), so the loop below reads events without racing each one against the stop.
        stop = asyncio.ensure_future(run.wait_for_stop())
        stop.add_done_callback(lambda f: None if f.cancelled() else run.session.stop_now())
        try:
            try:
                async for event in stream:
                    run.observe(event)
                    if shells is not None:
                        shells.observe(event)
                    yield event
                    if stop.done():
                        break
            except asyncio.CancelledError:
                # The session's stream has already aborted and cancelled the child's work on its way out.
                run.aborted = True
                run.catch_up_tool_calls(first_index, tools_before)
                raise
            if stop.done():
                run.aborted = True
                # Tool calls of messages not read yet still count (the stopped agent's result reports them).
                run.catch_up_tool_calls(first_index, tools_before)
        finally:
            run.stop_limits()
            stop.cancel()
            closer = getattr(stream, "aclose", None)  # Session.run is an async generator
            if closer is not None:
                with contextlib.suppress(BaseException):
                    await closer()
            if shells is not None:
                with contextlib.suppress(Exception):
                    await shells.stop()
            if run.mcp_servers is not None:
                with contextlib.suppress(Exception):
                    await run.mcp_servers.aclose()

    def moved_to_background(self, run: SubagentRun) -> None:
        """A moved child keeps running here: background children run in this process too."""

    async def aclose(self) -> None:
        """Nothing outlives a run here."""

