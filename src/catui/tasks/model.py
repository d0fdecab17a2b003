"""A background task as the registry and the state database see it: :class:`Task`, its types and ids.

Kept apart from :mod:`catui.tasks.registry` so that :mod:`catui.tasks.store`
(which turns a task into a state.db row) and the registry (which uses the
store) both import it without importing each other.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

TaskType = Literal["local_bash", "local_agent", "local_workflow"]
# budget_exceeded, timed_out and stalled: a sub-agent stopped at one of its definition's limits (catui's own).
TaskStatus = Literal["queued", "running", "completed", "failed", "stopped", "killed", "interrupted",
                     "budget_exceeded", "timed_out", "stalled"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed", "interrupted",
                                            "budget_exceeded", "timed_out", "stalled"})
LIVE_STATUSES: frozenset[str] = frozenset({"queued", "running"})
"""Not finished: waiting for a free place (``queued``, background agents past the session's cap) or running."""

NOTIFIES_PARENT_KEY = "notifies_parent"
"""``Task.metadata`` key of a background shell whose end its agent is told of (the current contract's main
agent's shells: catui.app.shell_reports); front ends wait for its notification as for a background agent's."""

ID_PREFIXES: dict[str, str] = {"local_bash": "bash_", "local_agent": "a", "local_workflow": "w"}


def new_task_id(task_type: TaskType) -> str:
    """A fresh id: ``bash_`` + 12 hex digits for shells, ``a`` + 16 hex digits for agents."""
    if task_type == "local_agent":
        return "a" + secrets.token_hex(8)
    return "bash_" + secrets.token_hex(6)


@dataclass
class Task:
    """One background task.

    ``runner`` is the asyncio task doing the work (cancelled by :meth:`TaskRegistry.stop`
    when there is no ``stop_callback``); ``stop_callback`` is how a task with an
    outside resource (a process group) is stopped. ``done`` is set exactly once,
    by :meth:`finish`.
    """

    id: str
    type: TaskType
    description: str
    output_file: Path
    status: TaskStatus = "running"
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    result: str | None = None
    exit_code: int | None = None
    runner: asyncio.Task[Any] | None = None
    stop_callback: Callable[[], Awaitable[None] | None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    agent_type: str | None = None
    total_tokens: int = 0
    tool_uses: int = 0
    last_tool: str | None = None
    error: str | None = None
    worktree_path: str | None = None
    on_change: Callable[[Task], None] | None = field(default=None, repr=False)

    @property
    def is_running(self) -> bool:
        """Whether the task is working now (a queued one is not yet)."""
        return self.status == "running"

    @property
    def is_live(self) -> bool:
        """Whether the task has not finished: running, or queued to run."""
        return self.status in LIVE_STATUSES

    def finish(
        self,
        status: TaskStatus,
        result: str | None = None,
        *,
        exit_code: int | None = None,
        error: str | None = None,
    ) -> None:
        """Record the end of the task; a second call (e.g. the runner ending after a stop) changes nothing."""
        if self.done.is_set():
            return
        self.status = status
        self.ended_at = time.time()
        if result is not None:
            self.result = result
        if exit_code is not None:
            self.exit_code = exit_code
        if error is not None:
            self.error = error
        self.done.set()
        self.changed()

    def changed(self) -> None:
        """Tell the registry that the task's fields changed (it persists them)."""
        if self.on_change is not None:
            self.on_change(self)

    def read_output(self, max_chars: int | None = None) -> str:
        """The output written so far (the tail when ``max_chars`` is given)."""
        try:
            text = self.output_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        if max_chars is not None and len(text) > max_chars:
            return text[-max_chars:]
        return text

    def summary(self) -> dict[str, Any]:
        """A JSON-able description (for TaskOutput's ``data`` and listings)."""
        return {
            "task_id": self.id,
            "task_type": self.type,
            "status": self.status,
            "description": self.description,
            "output_file": str(self.output_file),
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "exit_code": self.exit_code,
            "result": self.result,
            "error": self.error,
            "total_tokens": self.total_tokens,
            "tool_uses": self.tool_uses,
            "last_tool": self.last_tool,
        }
