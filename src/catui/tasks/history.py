"""A resumed session's background tasks come back: its finished tasks, read from state.db, as history.

``catui -r`` / ``-c`` (and the SDK's ``resume=`` / ``continue_conversation=``)
register every finished task of the old session in the new process's
:class:`~catui.tasks.registry.TaskRegistry`, so ``/tasks``, TaskOutput and the
task list see them as before. They are history: nothing runs, nothing is
notified again, and their state.db rows are not rewritten. Tasks whose process
died are first marked ``interrupted`` (and resumed, or not, per
``resumeInterruptedAgents``, by :mod:`catui.app.interrupted_agents`); a task
another live process still runs is left to that process. A fork gets the
history too, and the old session's agent names (copied, so SendMessage
reaches them by name from the fork).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from catui.errors import CatuiError
from catui.tasks.model import FINAL_STATUSES, Task, TaskStatus, TaskType
from catui.tasks.registry import TaskRegistry


def task_from_row(row: dict[str, Any]) -> Task:
    """A finished :class:`Task` from its state.db row (its ``done`` event already set)."""
    task = Task(
        id=str(row["id"]),
        type=cast(TaskType, row.get("type") or "local_agent"),
        description=str(row.get("description") or ""),
        output_file=Path(str(row.get("output_file") or "")),
        status=cast(TaskStatus, row.get("status") or "completed"),
        started_at=float(row.get("created_at") or 0.0),
        ended_at=float(row["ended_at"]) if row.get("ended_at") is not None else None,
        result=row.get("result"),
        tool_use_id=row.get("tool_use_id"),
        agent_type=row.get("agent_type"),
        total_tokens=int(row.get("total_tokens") or 0),
        tool_uses=int(row.get("tool_uses") or 0),
        last_tool=row.get("last_tool"),
        error=row.get("error"),
        worktree_path=row.get("worktree_path"),
        metadata=dict(row.get("meta") or {}),
    )
    task.done.set()
    return task


def restore_session_tasks(registry: TaskRegistry, old_session_id: str, new_session_id: str) -> list[Task]:
    """Register the finished tasks of ``old_session_id`` as history; returns them (a broken state.db: none)."""
    state = registry.state
    if state is None or not state.path.is_file():
        return []
    try:
        state.mark_interrupted()  # a task of a dead process is never shown as running
        rows = state.list_tasks(parent_session_id=old_session_id)
        if new_session_id != old_session_id:
            for name, agent_id in state.names(old_session_id).items():
                state.set_name(new_session_id, name, agent_id, overwrite=False)
    except CatuiError:
        return []
    restored = []
    for row in rows:
        if row.get("status") in FINAL_STATUSES and registry.get(str(row["id"])) is None:
            restored.append(registry.restore(task_from_row(row)))
    return restored
