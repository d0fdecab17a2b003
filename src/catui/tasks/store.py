"""Tasks in ``<project>/.catui/state.db``, so that other catui processes see them.

A running task's row carries the owning process's pid. Another process (``catui
tasks stop ID``) cannot reach into the owner, so it asks: it sets
``meta.stop_requested`` on the row, and the owner, which polls its running
tasks' rows every :data:`STOP_POLL_S` seconds, stops the task and records
``stopped``. A row whose owner has died is marked ``interrupted`` by the next
reader (:meth:`StateDB.mark_interrupted`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.tasks.model import Task

if TYPE_CHECKING:
    from catui.state.db import StateDB

STOP_POLL_S = 0.5
STOP_REQUEST_KEY = "stop_requested"


def task_row(task: Task, *, session_id: str | None = None) -> dict[str, Any]:
    """The columns of ``task`` as :meth:`StateDB.upsert_task` takes them."""
    meta = {k: v for k, v in task.metadata.items() if isinstance(v, str | int | float | bool | type(None))}
    row: dict[str, Any] = {
        "type": task.type,
        "status": task.status,
        "description": task.description,
        "agent_type": task.agent_type,
        "tool_use_id": task.tool_use_id,
        "output_file": str(task.output_file),
        "pid": os.getpid(),
        "created_at": task.started_at,
        "ended_at": task.ended_at,
        "total_tokens": task.total_tokens,
        "tool_uses": task.tool_uses,
        "last_tool": task.last_tool,
        "result": task.result,
        "error": task.error,
        "worktree_path": task.worktree_path,
        "meta": meta,
    }
    if session_id is not None:
        row["parent_session_id"] = session_id
    return row


def request_stop(state: StateDB, task_id: str) -> dict[str, Any]:
    """Ask the process that owns a running task to stop it; returns the row as it is now."""
    row = state.get_task(task_id)
    if row is None:
        raise KeyError(task_id)
    meta = dict(row.get("meta") or {})
    meta[STOP_REQUEST_KEY] = time.time()
    return state.upsert_task(task_id, meta=meta)


def stop_requested_ids(state: StateDB, pid: int | None = None) -> list[str]:
    """Ids of this process's running (or queued) tasks that someone asked to stop."""
    owner = os.getpid() if pid is None else pid
    return [
        str(row["id"])
        for status in ("running", "queued")
        for row in state.list_tasks(status=status)
        if row.get("pid") == owner and (row.get("meta") or {}).get(STOP_REQUEST_KEY)
    ]


def open_state(project_root: Path) -> StateDB:
    """The project's state database."""
    from catui.state.db import StateDB  # lazy (catui.lazy): SQLite opens with the first recorded task

    return StateDB(project_root)
