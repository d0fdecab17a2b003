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
    """``event`` and, when it changes the task's status, the ``system/task_updated`` that goes with it.

    A queued agent starting to run (``task_progress`` with ``status: running``) and an agent ending
    (``task_notification``) change the status; claude-agent-sdk reads the ``task_updated`` as
    TaskUpdatedMessage and uses it to know which agents are still in flight. The current contract sends
    an ended task's ``task_updated`` first, with the error of a failed one (its notification's summary).
    """
    status = event.data.get("status")
    if event.subtype == "task_notification" and isinstance(status, str):
        shown = _UPDATED_STATUS.get(status, status)
        if run.current_contract:
            error = event.data.get("summary") if shown == "failed" else None
            return [task_updated(run, shown, error=error if isinstance(error, str) else None), event]
        return [event, task_updated(run, shown)]
    if event.subtype == "task_progress" and status == "running":
        return [event, task_updated(run, "running")]
    return [event]


def task_updated(run: SubagentRun, status: str, *, error: str | None = None) -> SystemEvent:
    """``system/task_updated``: the task's status changed (``running``, ``completed``, ``failed``, ``killed``).

    The current contract adds the run's ``run_id``, and its patch of an ended task ``end_time``
    (milliseconds since the epoch) and, for a failed one, the ``error``.
    """
    patch: dict[str, Any] = {"status": status}
    if run.current_contract and status in ("completed", "failed", "killed"):
        patch["end_time"] = int(time.time() * 1000)
        if error is not None:
            patch["error"] = error
    return _event(run, "task_updated", {**_ids(run), "patch": patch})


def _ids(run: SubagentRun) -> dict[str, Any]:
    """``task_id``, and in the current contract the ``run_id`` that follows it in every task event."""
    return {"task_id": run.agent_id, "run_id": run.run_id} if run.current_contract else {"task_id": run.agent_id}


def background_tasks_changed(runs: list[SubagentRun], origin: SubagentRun) -> SystemEvent:
    """``system/background_tasks_changed`` (current contract): the background agents running now."""
    tasks = [{"task_id": r.agent_id, "run_id": r.run_id, "task_type": "local_agent", "subagent_type": r.agent_type,
              "description": r.description} for r in runs]
    return _event(origin, "background_tasks_changed", {"tasks": tasks})


def task_started(run: SubagentRun, *, status: str | None = None, task_type: str = "local_agent") -> SystemEvent:
    """``system/task_started``: a child began (foreground or background).

    ``status`` is set (``queued``) only for a background agent that waits for a free place; Claude
    Code's event has no such field, so it is left out otherwise. A teammate's ``task_type`` is
    ``in_process_teammate``.
    """
    data: dict[str, Any] = {**_ids(run), "tool_use_id": run.request.tool_use_id, "description": run.description}
    if run.current_contract:
        data.update({"subagent_type": run.agent_type, "is_backgrounded": run.is_async, "spawn_depth": run.depth})
        if run.parent_ctx.agent_id is not None:
            data["parent_task_id"] = run.parent_ctx.agent_id
    data.update({"task_type": task_type, "prompt": run.request.prompt})
    if status is not None:
        data["status"] = status
    return _event(run, "task_started", data)


def task_progress(run: SubagentRun, summary: str | None = None, *, status: str | None = None) -> SystemEvent:
    """``system/task_progress``: the run's counters so far, a background agent's progress summary, and
    ``status`` ``running`` when a queued one starts.

    The current contract's ``description`` says what the child is doing: ``Running <description>`` of its
    latest tool call that has one (a Bash command's, a nested spawn's), else the task's; and it adds
    ``subagent_type``.
    """
    if run.current_contract:
        doing = run.last_call_description
        data: dict[str, Any] = {**_ids(run), "tool_use_id": run.request.tool_use_id,
                                "description": f"Running {doing}" if doing else run.description,
                                "subagent_type": run.agent_type, "usage": run.progress_usage(),
                                "last_tool_name": run.last_tool_name}
    else:
        data = {
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


def task_notification(run: SubagentRun, *, status: str, output_file: str, summary: str,
                      summary_is_report: bool = False) -> SystemEvent:
    """``system/task_notification``: the run ended (completed, failed or stopped).

    In the current contract the ``summary`` is the report (``summary_is_report`` for a background agent's),
    the error, or the description of a stopped agent; only a completed run reports ``usage``.
    """
    data: dict[str, Any] = {
        **_ids(run),
        "tool_use_id": run.request.tool_use_id,
        "status": status,
        "output_file": output_file,
        "summary": summary,
    }
    if summary_is_report:
        data["summary_is_report"] = True
    if not run.current_contract or status == "completed":
        data["usage"] = run.progress_usage()
    hit = run.limit_hit
    if hit is not None and status == hit.status:
        # catui's own keys: which limit stopped the child and what it had spent (cost None: unknown price).
        data["limit"] = {"field": hit.field, "value": hit.limit}
        data["spent"] = {"total_tokens": hit.tokens, "cost_usd": hit.cost_usd}
    return _event(run, "task_notification", data)


def foreground_finished(run: SubagentRun, status: str, answer: str | None = None) -> SystemEvent:
    """The ``task_notification`` of a foreground child: its output file is its transcript.

    ``answer`` is its report, or its error when it failed: the current contract's summary (the
    description when there is none)."""
    output = str(run.transcript_path) if run.transcript_path else ""
    if run.current_contract:
        summary = answer if answer and status in ("completed", "failed") else run.description
        return task_notification(run, status=status, output_file=output, summary=summary)
    return task_notification(run, status=status, output_file=output, summary=f'Agent "{run.description}" {status}')
