"""The main agent's own Bash commands in the current contract (observed-cc-now.md §9).

Claude Code 2.1.332 in print mode, run against catui's loopback server, reports a shell the main agent
starts with ``run_in_background``: ``background_tasks_changed`` (the shell listed: ``task_id, run_id,
task_type: "local_bash", description``), then ``task_started`` (``task_id, run_id, tool_use_id,
description, is_backgrounded: true, task_type: "local_bash"``), both before the tool result. When the
shell ends: ``task_updated`` (its patch ``status`` completed / failed / killed and ``end_time``),
``task_notification`` (``task_id, run_id, tool_use_id, status, output_file, summary``) and
``background_tasks_changed`` without it; the agent gets a ``<task-notification>`` (at its next tool
round, or as a new turn once it is idle: print mode waits for it, and that turn's result has ``origin``
with the shell's ``run_id``). A sub-agent's shells are reported by ``catui.subagents.child_shells``; this
object gives them only their launch text.

A foreground command still running after 3 s (2.1.332: after 3.3 s, not after 2.8 s) is announced too:
``task_started`` with ``is_backgrounded: false`` (a sub-agent's with ``owned_by_subagent`` and
``parent_task_id``), and when it ends ``task_notification`` with ``status`` completed or failed (a non-zero
exit, its timeout), an empty ``output_file`` and its description as ``summary`` — no ``task_updated``, no
``background_tasks_changed``, both before the tool result. The 2.1.92 profile has none of this (no reporter
is installed).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from catui.session.events import SystemEvent
from catui.subagents.ids import new_run_id
from catui.tasks.model import NOTIFIES_PARENT_KEY, Task, new_task_id
from catui.tasks.notifications import TaskNotification
from catui.tasks.registry import TaskRegistry
from catui.tasks.shell_events import listing_entry, notification_data, shell_ids, started_data, updated_data
from catui.tasks.shell_texts import (
    end_summary,
    launch_text,
    notified_status,
    shell_notification,
    updated_status,
)
from catui.tools.base import ToolContext

FOREGROUND_ANNOUNCE_S = 3.0
"""How long a foreground command runs before it is announced (2.1.332: between 2.8 and 3.3 s)."""


class _ForegroundShell:
    """A foreground command: announced once it has run FOREGROUND_ANNOUNCE_S, its end reported if it was."""

    def __init__(self, ctx: ToolContext, description: str) -> None:
        self.emit = ctx.emit
        self.fields = shell_ids(new_task_id("local_bash"), new_run_id(), ctx.tool_use_id, ctx.agent_id)
        self.description = description
        self.parent = ctx.agent_id
        self.announced = False
        # Only a tool call is announced (a command's `!` line runs Bash outside any call).
        self._timer = (asyncio.get_running_loop().call_later(FOREGROUND_ANNOUNCE_S, self._announce)
                       if ctx.tool_use_id is not None else None)

    def _announce(self) -> None:
        self.announced = True
        self._emit("task_started", started_data(self.fields, self.description, backgrounded=False,
                                                parent_task_id=self.parent))

    def ended(self, status: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.announced:
            self._emit("task_notification", notification_data(self.fields, status, "", self.description))

    def _emit(self, subtype: str, data: dict[str, Any]) -> None:
        if self.emit is not None:
            self.emit(SystemEvent(subtype=subtype, data=data))


@dataclass
class _Shell:
    task: Task
    tool_use_id: str | None
    run_id: str
    emit: Callable[[Any], None] | None


class MainShellReports:
    """``ShellReports``: announces the main agent's background shells and reports and notifies their ends; gives
    a sub-agent's its launch text; announces any agent's long foreground command."""

    def __init__(self, tasks: TaskRegistry) -> None:
        self.tasks = tasks
        self._live: dict[str, _Shell] = {}
        self._watchers: set[asyncio.Task[None]] = set()

    def launched(self, task: Task, ctx: ToolContext) -> str:
        """Report ``task`` (started by the agent of ``ctx``); the Bash call's result text."""
        if ctx.agent_id is not None:  # a sub-agent's shell: its executor reports it (catui.subagents.child_shells)
            return launch_text(task.id, str(task.output_file), in_subagent=True)
        shell = _Shell(task, ctx.tool_use_id, new_run_id(), ctx.emit)
        self._live[task.id] = shell
        task.metadata[NOTIFIES_PARENT_KEY] = True  # print mode waits for its notification
        self._emit(shell, "background_tasks_changed", {"tasks": self._listing()})
        self._emit(shell, "task_started", started_data(shell_ids(task.id, shell.run_id, shell.tool_use_id, None),
                                                       task.description, backgrounded=True, parent_task_id=None))
        watcher = asyncio.ensure_future(self._watch(shell))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return launch_text(task.id, str(task.output_file), in_subagent=False)

    def foreground(self, ctx: ToolContext, description: str) -> _ForegroundShell:
        """Report a foreground command of the agent of ``ctx`` (any agent) if it runs long."""
        return _ForegroundShell(ctx, description)

    async def _watch(self, shell: _Shell) -> None:
        task = shell.task
        await task.done.wait()
        self._live.pop(task.id, None)
        self._emit(shell, "task_updated", updated_data(task.id, shell.run_id, updated_status(task),
                                                       task.ended_at or time.time()))
        self._emit(shell, "task_notification", notification_data(
            shell_ids(task.id, shell.run_id, shell.tool_use_id, None),
            notified_status(task), str(task.output_file), end_summary(task)))
        self._emit(shell, "background_tasks_changed", {"tasks": self._listing()})
        self.tasks.post_notification(TaskNotification(
            task_id=task.id, text=shell_notification(task, shell.tool_use_id), data={"run_id": shell.run_id}))

    def _listing(self) -> list[dict[str, Any]]:
        return [listing_entry(s.task, s.run_id, None) for s in self._live.values()]

    @staticmethod
    def _emit(shell: _Shell, subtype: str, data: dict[str, Any]) -> None:
        if shell.emit is not None:
            shell.emit(SystemEvent(subtype=subtype, data=data))
