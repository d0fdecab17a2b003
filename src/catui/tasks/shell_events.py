"""The fields of the stream events that report a shell command in the current contract (observed-cc-now.md §9),
in the order Claude Code 2.1.332 sends them: one place for the main agent's background shells and any agent's
long foreground command (catui.app.shell_reports) and a sub-agent's background shells
(catui.subagents.child_shells). A sub-agent's events also carry ``owned_by_subagent`` and ``parent_task_id``."""

from __future__ import annotations

from typing import Any

from catui.tasks.model import Task


def shell_ids(task_id: str, run_id: str, tool_use_id: str | None, parent_task_id: str | None) -> dict[str, Any]:
    """The fields that name a shell, first in ``task_started`` and ``task_notification``."""
    ids: dict[str, Any] = {"task_id": task_id, "run_id": run_id}
    if parent_task_id is not None:
        ids["owned_by_subagent"] = True
    ids["tool_use_id"] = tool_use_id
    return ids


def started_data(ids: dict[str, Any], description: str, *, backgrounded: bool,
                 parent_task_id: str | None) -> dict[str, Any]:
    """``task_started`` of a shell named by ``ids``."""
    data = {**ids, "description": description, "is_backgrounded": backgrounded}
    if parent_task_id is not None:
        data["parent_task_id"] = parent_task_id
    data["task_type"] = "local_bash"
    return data


def updated_data(task_id: str, run_id: str, status: str, end_time_s: float) -> dict[str, Any]:
    """``task_updated`` of a shell that ended with ``status`` at ``end_time_s`` (epoch seconds)."""
    return {"task_id": task_id, "run_id": run_id, "patch": {"status": status, "end_time": int(end_time_s * 1000)}}


def notification_data(ids: dict[str, Any], status: str, output_file: str, summary: str) -> dict[str, Any]:
    """``task_notification`` of a shell named by ``ids``."""
    return {**ids, "status": status, "output_file": output_file, "summary": summary}


def listing_entry(task: Task, run_id: str, parent_task_id: str | None) -> dict[str, Any]:
    """A running background shell in ``background_tasks_changed``'s list."""
    entry: dict[str, Any] = {"task_id": task.id, "run_id": run_id, "task_type": "local_bash",
                             "description": task.description}
    if parent_task_id is not None:
        entry["parent_task_id"] = parent_task_id
    return entry
