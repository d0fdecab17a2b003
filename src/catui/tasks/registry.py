"""The task registry: background work (shell commands, agents) that outlives one tool call.

A :class:`Task` is generic: background Bash commands (``local_bash``) and
background agents (``local_agent``) share it. Each task writes its output to
``<project>/.catui/tasks/<id>.output`` as it arrives, so TaskOutput (and a
user with ``tail -f``) can read it while it runs.

The registry keeps tasks in memory and mirrors every change into
``<project>/.catui/state.db`` (see :mod:`catui.tasks.store`), so that ``catui
tasks`` in another terminal sees them, and polls that database for stop
requests from other processes. Finished background agents leave a
notification for the parent in :attr:`TaskRegistry.notifications`.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import inspect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError
from catui.paths import project_runtime_dir
from catui.tasks.model import (
    FINAL_STATUSES,
    ID_PREFIXES,
    NOTIFIES_PARENT_KEY,
    Task,
    TaskStatus,
    TaskType,
    new_task_id,
)
from catui.tasks.notifications import NotificationBox, TaskNotification
from catui.tasks.store import STOP_POLL_S, open_state, stop_requested_ids, task_row

if TYPE_CHECKING:
    from catui.state.db import StateDB

# Task and its types moved to catui.tasks.model; importers of catui.tasks.registry keep finding them here.
__all__ = ["FINAL_STATUSES", "ID_PREFIXES", "Task", "TaskRegistry", "TaskStatus", "TaskType", "new_task_id"]

log = logging.getLogger(__name__)


class TaskRegistry:
    """The background tasks of one project: in memory, mirrored into the project's state.db.

    ``persist=False`` keeps everything in memory (no state.db). ``state`` is a
    :class:`~catui.state.db.StateDB` to use instead of the project's own;
    ``session_id`` is recorded as each task's parent session.
    """

    def __init__(
        self,
        project_root: Path,
        *,
        state: Any = None,
        persist: bool = True,
        session_id: str | None = None,
    ) -> None:
        self.project_root = project_root
        self.session_id = session_id
        self.persist_enabled = persist
        self.persist_error: str | None = None
        self._state = state
        self._tasks: dict[str, Task] = {}
        self._poller: asyncio.Task[None] | None = None
        self.notifications = NotificationBox(self.has_running_agents)

    # -- persistence ----------------------------------------------------------------------------

    @property
    def state(self) -> StateDB | None:
        """The state database (opened on first use), or ``None`` when persistence is off or broken."""
        if not self.persist_enabled:
            return None
        if self._state is None:
            try:
                self._state = open_state(self.project_root)
            except CatuiError as exc:
                self._persist_failed(exc)
                return None
        return self._state

    def persist(self, task: Task) -> None:
        """Write the task's row; a database problem is remembered (``persist_error``), never raised."""
        state = self.state
        if state is None:
            return
        try:
            state.upsert_task(task.id, **task_row(task, session_id=self.session_id))
        except CatuiError as exc:
            self._persist_failed(exc)

    def _persist_failed(self, exc: Exception) -> None:
        if self.persist_error is None:
            log.warning("background tasks are not recorded in state.db: %s", exc)
        self.persist_error = str(exc)

    def _on_change(self, task: Task) -> None:
        if self._tasks.get(task.id) is task:
            self.persist(task)
            self.notifications.wake()

    def output_path(self, task_id: str) -> Path:
        """``<project>/.catui/tasks/<id>.output`` (its folder is created)."""
        folder = project_runtime_dir(self.project_root) / "tasks"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{task_id}.output"

    def add(self, task: Task) -> Task:
        """Register a new task (persisted at once). Raises ValueError for an id already in use."""
        if task.id in self._tasks:
            raise ValueError(f"a task with id {task.id!r} is already registered")
        return self._register(task)

    def replace(self, task: Task) -> Task:
        """Register ``task`` in place of a finished one with the same id (a resumed agent)."""
        old = self._tasks.get(task.id)
        if old is not None and not old.done.is_set():
            raise ValueError(f"task {task.id!r} is still running; it cannot be replaced")
        return self._register(task)

    def restore(self, task: Task) -> Task:
        """Show a finished task of an earlier process (a resumed session's history): not persisted again."""
        if task.is_live:
            raise ValueError(f"task {task.id!r} is not finished; only finished tasks are restored as history")
        self._tasks.setdefault(task.id, task)
        return self._tasks[task.id]

    def _register(self, task: Task) -> Task:
        self._tasks[task.id] = task
        task.on_change = self._on_change
        self.persist(task)
        self.notifications.wake()
        if task.is_live:
            self._ensure_poller()
        return task

    def has_running_agents(self) -> bool:
        """Whether a background agent or workflow (or a shell whose end will be notified) is still running or
        queued (so a notification may yet come)."""
        return any(t.is_live and (t.type in ("local_agent", "local_workflow") or t.metadata.get(NOTIFIES_PARENT_KEY))
                   for t in self._tasks.values())

    # -- notifications --------------------------------------------------------------------------

    def post_notification(self, notification: TaskNotification) -> None:
        """Queue a finished task's notification for the parent (exactly one per finished run)."""
        self.notifications.post(notification)

    def drain_notifications(self) -> builtins.list[TaskNotification]:
        """Every notification waiting now; each is handed out once."""
        return self.notifications.drain()

    async def next_notification(self) -> builtins.list[dict[str, Any]] | None:
        """The next background agent's notification as user-message content, waiting while agents run.

        ``None`` when no background agent is running and none is waiting to
        be told. Front ends (print mode, the SDK, the interactive UI) start a
        new parent turn with the content.
        """
        notification = await self.notifications.next()
        return None if notification is None else notification.content()

    # -- stop requests from other processes -----------------------------------------------------

    def _ensure_poller(self) -> None:
        if self.state is None or (self._poller is not None and not self._poller.done()):
            return
        try:
            self._poller = asyncio.get_running_loop().create_task(self._poll_stop_requests())
        except RuntimeError:  # no event loop (a synchronous caller): nobody to stop tasks anyway
            self._poller = None

    async def _poll_stop_requests(self) -> None:
        while any(t.is_live for t in self._tasks.values()):
            await asyncio.sleep(STOP_POLL_S)
            state = self.state
            if state is None:
                return
            try:
                wanted = stop_requested_ids(state)
            except CatuiError as exc:
                self._persist_failed(exc)
                continue
            for task_id in wanted:
                task = self._tasks.get(task_id)
                if task is not None and task.is_live:
                    await self.stop(task_id)

    async def shutdown(self) -> builtins.list[Task]:
        """Stop every running task, record them as stopped, and stop polling (the owning app is closing)."""
        stopped = await self.stop_all()
        if self._poller is not None and not self._poller.done():
            self._poller.cancel()
            with contextlib.suppress(BaseException):
                await self._poller
        self.notifications.wake()
        return stopped

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
        self.notifications.wake()
        return task

    async def stop_all(self) -> builtins.list[Task]:
        """Stop every running or queued task (when the session that owns them ends); returns the ones stopped."""
        running = [t for t in self._tasks.values() if t.is_live]
        for task in running:
            await self.stop(task.id)
        return running

    def _require(self, task_id: str) -> Task:
        task = self._tasks.get(task_id)
        if task is None:
            raise KeyError(task_id)
        return task
