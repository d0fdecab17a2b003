"""Where a sub-agent's run executes (the executor seam).

The spawn logic plans a child and builds its run; an :class:`AgentExecutor`
then runs it to its end and streams its events back to the driver that waits
in this process (the foreground driver, or a background task's driver). Today
the one implementation is :class:`~catui.subagents.executors.in_process.InProcessExecutor`
(an asyncio task in this process, as in Claude Code); a remote executor (Ray)
implements the same protocol without touching planning, driving or concluding.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from catui.session.events import Event

if TYPE_CHECKING:  # the run's module loads with the sub-agent runtime (catui.lazy)
    from catui.subagents.run import SubagentRun


class AgentExecutor(Protocol):
    """Runs a prepared child to its end, yielding its events (the child's and its own children's).

    The contract every implementation keeps:
    - ``run.observe(event)`` is called for each event before it is yielded, so the run's counters,
      usage and ``result_event`` are current when the driver sees the event;
    - when ``run.stop_signal()`` or ``run.stop_request`` is set, the child stops at once (mid-request
      included), ``run.aborted`` becomes True and the stream ends;
    - ``run.start_limits()`` is called when the child starts and ``run.stop_limits()`` when it ends
      (the per-agent wall-clock and stall timers; a limit reached stops the run through ``request_stop``);
    - closing the stream early (``aclose``) stops the child and releases what the run holds
      (its own MCP connections).
    """

    def execute(self, run: SubagentRun) -> AsyncIterator[Event]:
        """Start (or continue) ``run`` with its ``first_message`` and stream its events."""
        ...

    def moved_to_background(self, run: SubagentRun) -> None:
        """``run``, started in the foreground, now belongs to a background task (auto-background, Ctrl-B).

        An executor that runs background children elsewhere may move it there at its next clean point;
        the stream ``execute`` returned keeps yielding its events either way.
        """
        ...

    async def aclose(self) -> None:
        """Release what the executor holds beyond single runs (a remote one's worker processes)."""
        ...
