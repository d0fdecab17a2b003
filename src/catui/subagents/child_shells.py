"""A sub-agent's background Bash commands in the current contract (observed-cc-now.md §9; catui.config.compat).

Claude Code 2.1.332 tells the main stream about a shell a sub-agent started with ``run_in_background``:
``background_tasks_changed`` (the shell listed with ``task_type: "local_bash"`` and its ``parent_task_id``),
then ``task_started`` (``owned_by_subagent: true``, ``is_backgrounded: true``, ``parent_task_id``,
``task_type: "local_bash"``), both before the child's tool result. When the shell ends, ``task_updated``
(``completed``, ``failed`` or ``killed``), ``task_notification`` (``owned_by_subagent``; the summary
``Background command "<description>" completed (exit code 0)``, ``… failed with exit code N``, or the
description when stopped) and ``background_tasks_changed`` follow. The shells still running when the child
ends are stopped then, before the child's own end is reported; one that ends while the child still works
is notified to the child at its next tool round (its launch text says so: catui.tasks.shell_texts). The
2.1.92 profile has none of this: its children's shells run until the session ends, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catui.session.events import SystemEvent, UserMessageEvent
from catui.subagents.ids import new_run_id
from catui.tasks.shell_events import listing_entry, notification_data, shell_ids, started_data, updated_data
from catui.tasks.shell_texts import end_summary, notified_status, shell_notification, updated_status

if TYPE_CHECKING:
    from catui.session.events import Event
    from catui.subagents.run import SubagentRun
    from catui.tasks.model import Task


@dataclass
class _Shell:
    task: Task
    tool_use_id: str
    run_id: str


class ChildShells:
    """The background shells of one sub-agent run: announced as they start, stopped when the run ends."""

    def __init__(self, run: SubagentRun) -> None:
        self.run = run
        self._live: dict[str, _Shell] = {}
        self._watchers: list[asyncio.Task[None]] = []
        self._notices: list[str] = []
        self._ending = False
        run.session.add_pending_messages(self._notices_for_round)

    def _notices_for_round(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def observe(self, event: Event) -> None:
        """Announce the shells a tool result of the child's own says it started (call before the event is
        passed on, so the announcements come first, as observed)."""
        if not isinstance(event, UserMessageEvent) or event.agent_id != self.run.agent_id:
            return
        registry = self.run.parent_ctx.services.tasks
        if registry is None:
            return
        for tool_use_id, data in event.tool_use_results.items():
            task_id = data.get("background_task_id") if isinstance(data, dict) else None
            task = registry.get(task_id) if isinstance(task_id, str) else None
            if task is None or task.type != "local_bash" or task_id in self._live:
                continue
            shell = _Shell(task, tool_use_id, new_run_id())
            self._live[task.id] = shell
            self._emit("background_tasks_changed", {"tasks": self._listing()})
            self._emit("task_started", started_data(shell_ids(task.id, shell.run_id, tool_use_id, self.run.agent_id),
                                                    task.description, backgrounded=True,
                                                    parent_task_id=self.run.agent_id))
            self._watchers.append(asyncio.ensure_future(self._watch(shell)))

    async def stop(self) -> None:
        """The child ended: stop its shells still running and report every shell's end."""
        self._ending = True  # the child gives its final response: no notification can reach it now
        registry = self.run.parent_ctx.services.tasks
        for shell in list(self._live.values()):
            if registry is not None and not shell.task.done.is_set():
                with contextlib.suppress(Exception):  # a shell that cannot be stopped must not fail the child
                    await registry.stop(shell.task.id)
        if self._watchers:
            await asyncio.gather(*self._watchers, return_exceptions=True)

    async def _watch(self, shell: _Shell) -> None:
        await shell.task.done.wait()
        task = shell.task
        self._live.pop(task.id, None)
        self._emit("task_updated", updated_data(task.id, shell.run_id, updated_status(task), time.time()))
        self._emit("task_notification", notification_data(
            shell_ids(task.id, shell.run_id, shell.tool_use_id, self.run.agent_id),
            notified_status(task), str(task.output_file), end_summary(task)))
        self._emit("background_tasks_changed", {"tasks": self._listing()})
        if not self._ending:
            self._notices.append(shell_notification(task, shell.tool_use_id))

    def _listing(self) -> list[dict[str, Any]]:
        return [listing_entry(s.task, s.run_id, self.run.agent_id) for s in self._live.values()]

    def _emit(self, subtype: str, data: dict[str, Any]) -> None:
        emit = self.run.parent_ctx.emit
        if emit is not None:
            emit(SystemEvent(subtype=subtype, data=data, agent_id=self.run.parent_ctx.agent_id))
