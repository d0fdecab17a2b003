"""The task registry: background work (shell commands, agents) that outlives one tool call.

A :class:`Task` is generic: background Bash commands (``local_bash``) and
background agents (``local_agent``) share it. Each task writes its output to
``<project>/.catui/tasks/<id>.output`` as it arrives, so TaskOutput (and a
user with ``tail -f``) can read it while it runs. The registry is in memory;
persistence is layered on top by whoever needs it.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from catui.paths import project_runtime_dir

TaskType = Literal["local_bash", "local_agent"]
TaskStatus = Literal["running", "completed", "failed", "stopped", "killed"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})

ID_PREFIXES: dict[str, str] = {"local_bash": "bash_", "local_agent": "a"}


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

    @property
    def is_running(self) -> bool:
        return self.status == "running"

    def finish(self, status: TaskStatus, result: str | None = None, *, exit_code: int | None = None) -> None:
        """Record the end of the task; a second call (e.g. the runner ending after a stop) changes nothing."""
        if self.done.is_set():
            return
        self.status = status
        self.ended_at = time.time()
        if result is not None:
            self.result = result
        if exit_code is not None:
            self.exit_code = exit_code
        self.done.set()

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
        }


class TaskRegistry:
    """The background tasks of one project (in memory)."""

    def __init__(self, project_root: Path) -> None:
        self.project_root = project_root
        self._tasks: dict[str, Task] = {}

    def output_path(self, task_id: str) -> Path:
        """``<project>/.catui/tasks/<id>.output`` (its folder is created)."""
        folder = project_runtime_dir(self.project_root) / "tasks"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{task_id}.output"

    def add(self, task: Task) -> Task:
        if task.id in self._tasks:
            raise ValueError(f"a task with id {task.id!r} is already registered")
        self._tasks[task.id] = task
        return task

    def get(self, task_id: str) -> Task | None:
        return self._tasks.get(task_id)

    def list(self) -> list[Task]:
        """All tasks, oldest first."""
        return sorted(self._tasks.values(), key=lambda t: t.started_at)

    async def wait(self, task_id: str, timeout_s: float) -> Task:
        """Wait up to ``timeout_s`` seconds for the task to end; returns it either way.

        Raises KeyError for an unknown id.
        """
        task = self._require(task_id)
        if not task.done.is_set() and timeout_s > 0:
            try:
                await asyncio.wait_for(task.done.wait(), timeout_s)
            except TimeoutError:
                pass
        return task

    async def stop(self, task_id: str) -> Task:
        """Stop a running task (its stop callback, else cancel its runner) and mark it ``stopped``.

        Raises KeyError for an unknown id; a task that already ended is returned unchanged.
        """
        task = self._require(task_id)
        if task.done.is_set():
            return task
        if task.stop_callback is not None:
            outcome = task.stop_callback()
            if inspect.isawaitable(outcome):
                await outcome
        elif task.runner is not None and not task.runner.done():
            task.runner.cancel()
            try:
                await task.runner
            except BaseException:  # the runner's own CancelledError or failure is expected here
                pass
        task.finish("stopped", task.result or "Stopped by request.")
        return task

    async def stop_all(self) -> builtins.list[Task]:
        """Stop every running task (when the session that owns them ends); returns the ones stopped."""
        running = [t for t in self._tasks.values() if t.is_running]
        for task in running:
            await self.stop(task.id)
        return running

    def _require(self, task_id: str) -> Task:
        task = self._tasks.get(task_id)
        if task is None:
            raise KeyError(task_id)
        return task
