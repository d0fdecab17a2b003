"""The ``system/task_*`` events a sub-agent's parent sees (stream-json, the SDK, live lines), built in one place."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from catui.session.events import SystemEvent

if TYPE_CHECKING:  # the run's module loads with the sub-agent runtime (catui.lazy)
    from catui.subagents.run import SubagentRun


def _event(run: SubagentRun, subtype: str, data: dict[str, Any]) -> SystemEvent:
    return SystemEvent(subtype=subtype, data=data, agent_id=run.parent_ctx.agent_id)


# task_notification's status → task_updated's (a stopped task is "killed" there, as in Claude Code).
_UPDATED_STATUS = {"completed": "completed", "failed": "failed", "stopped": "killed"}


def emit(run: SubagentRun, event: SystemEvent) -> None:
    """Push ``event`` into the parent's stream (when it has one), with the ``task_updated`` it implies."""
    if run.parent_ctx.emit is None:
        return
    for each in with_status_update(run, event):
        run.parent_ctx.emit(each)


def with_status_update(run: SubagentRun, event: SystemEvent) -> list[SystemEvent]:
    """``event`` and, when it changes the task's status, the ``system/task_updated`` that follows it.

    A queued agent starting to run (``task_progress`` with ``status: running``) and an agent ending
    (``task_notification``) change the status; claude-agent-sdk reads the ``task_updated`` as
    TaskUpdatedMessage and uses it to know which agents are still in flight.
    """
    status = event.data.get("status")
    if event.subtype == "task_notification" and isinstance(status, str):
        return [event, task_updated(run, _UPDATED_STATUS.get(status, status))]
    if event.subtype == "task_progress" and status == "running":
        return [event, task_updated(run, "running")]
    return [event]


def task_updated(run: SubagentRun, status: str) -> SystemEvent:
    """``system/task_updated``: the task's status changed (``running``, ``completed``, ``failed``, ``killed``).

    The current contract's patch of an ended task adds ``end_time`` (milliseconds since the epoch).
    """
    patch: dict[str, Any] = {"status": status}
    if run.current_contract and status in ("completed", "failed", "killed"):
        patch["end_time"] = int(time.time() * 1000)
    return _event(run, "task_updated", {"task_id": run.agent_id, "patch": patch})


def background_tasks_changed(runs: list[SubagentRun], origin: SubagentRun) -> SystemEvent:
    """``system/background_tasks_changed`` (current contract): the background agents running now."""
    tasks = [{"task_id": r.agent_id, "task_type": "local_agent", "subagent_type": r.agent_type,
              "description": r.description} for r in runs]
    return _event(origin, "background_tasks_changed", {"tasks": tasks})


def task_started(run: SubagentRun, *, status: str | None = None, task_type: str = "local_agent") -> SystemEvent:
    """``system/task_started``: a child began (foreground or background).

    ``status`` is set (``queued``) only for a background agent that waits for a free place; Claude
    Code's event has no such field, so it is left out otherwise. A teammate's ``task_type`` is
    ``in_process_teammate``.
    """
    data: dict[str, Any] = {
        "task_id": run.agent_id,
        "tool_use_id": run.request.tool_use_id,
        "description": run.description,
        "task_type": task_type,
        "prompt": run.request.prompt,
    }
    if status is not None:
        data["status"] = status
    if run.current_contract:
        data.update({"subagent_type": run.agent_type, "is_backgrounded": run.is_async, "spawn_depth": run.depth})
        if run.parent_ctx.agent_id is not None:
            data["parent_task_id"] = run.parent_ctx.agent_id
    return _event(run, "task_started", data)


def task_progress(run: SubagentRun, summary: str | None = None, *, status: str | None = None) -> SystemEvent:
    """``system/task_progress``: the run's counters so far, a background agent's progress summary, and
    ``status`` ``running`` when a queued one starts."""
    data: dict[str, Any] = {
        "task_id": run.agent_id,
        "tool_use_id": run.request.tool_use_id,
        "description": run.description,
        "last_tool_name": run.last_tool_name,
        "usage": run.progress_usage(),
    }
    if summary is not None:
        data["summary"] = summary
    if status is not None:
        data["status"] = status
    return _event(run, "task_progress", data)


def task_notification(run: SubagentRun, *, status: str, output_file: str, summary: str) -> SystemEvent:
    """``system/task_notification``: the run ended (completed, failed or stopped)."""
    data: dict[str, Any] = {
        "task_id": run.agent_id,
        "tool_use_id": run.request.tool_use_id,
        "status": status,
        "output_file": output_file,
        "summary": summary,
        "usage": run.progress_usage(),
    }
    hit = run.limit_hit
    if hit is not None and status == hit.status:
        # catui's own keys: which limit stopped the child and what it had spent (cost None: unknown price).
        data["limit"] = {"field": hit.field, "value": hit.limit}
        data["spent"] = {"total_tokens": hit.tokens, "cost_usd": hit.cost_usd}
    return _event(run, "task_notification", data)


def foreground_finished(run: SubagentRun, status: str) -> SystemEvent:
    """The ``task_notification`` of a foreground child: its output file is its transcript."""
    output = str(run.transcript_path) if run.transcript_path else ""
    return task_notification(run, status=status, output_file=output, summary=f'Agent "{run.description}" {status}')
