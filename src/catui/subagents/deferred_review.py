"""The deferred handoff review of a background agent's output (spec 6.1 [15], 12.1).

In auto mode a background agent is reviewed when it ends, and the review's
verdict is the last line of its output file (:mod:`.handoff_notes`; an empty
``content`` means nothing was flagged). An agent that ended *without* a review
(the parent was not in auto mode then, or it ended in an earlier process) is
reviewed when the parent reads its output in auto mode: TaskOutput on its id,
or Read of its output file. The review runs once (its line marks it done), only
for completed agents (a running agent has not handed anything over yet; a failed
or stopped one hands over no answer), and never blocks the read: the warning is
added to what the read returns, and to the file.
"""

from __future__ import annotations

from pathlib import Path

from catui.session.transcript import read_transcript
from catui.subagents.handoff_notes import record_review, review_line
from catui.subagents.outcome import RunConcluder
from catui.subagents.result import count_tool_uses
from catui.tasks.registry import TaskRegistry
from catui.tools.base import ToolContext


class DeferredReview:
    """Reviews a finished background agent's output when its parent reads it in auto mode (``ToolServices``)."""

    def __init__(self, tasks: TaskRegistry, concluder: RunConcluder) -> None:
        self.tasks = tasks
        self.concluder = concluder
        self._running: set[str] = set()

    async def review_task(self, task_id: str, ctx: ToolContext) -> str | None:
        """Review the agent ``task_id`` if it is due; returns the warning (or degraded note), else None."""
        if ctx.permissions.mode != "auto":
            return None
        task = self.tasks.get(task_id)
        if task is None or task.type != "local_agent" or task.status != "completed":
            return None
        output = Path(task.output_file)
        if task_id in self._running or review_line(output) is not None:
            return None
        self._running.add(task_id)
        try:
            messages = read_transcript(output)
            warning = await self.concluder.review_transcript(
                messages, task.agent_type or "general-purpose", count_tool_uses(messages), []
            )
            record_review(output, task_id, warning or "")
            return warning
        finally:
            self._running.discard(task_id)

    async def review_file(self, path: Path, ctx: ToolContext) -> str | None:
        """:meth:`review_task` for a Read of ``path`` when it is a background agent's output file."""
        if ctx.permissions.mode != "auto" or path.suffix != ".output":
            return None
        task = self.tasks.get(path.stem)
        if task is None or Path(task.output_file).resolve() != path.resolve():
            return None
        return await self.review_task(task.id, ctx)
