"""Changing a running application from outside the conversation: permission mode, stopping a task,
rewinding files.

What claude-agent-sdk's ``set_permission_mode``, ``stop_task`` and ``rewind_files`` do, for any front end.
Each function takes the parts it changes; front ends call them through :class:`catui.app.services.AgentApp`
(``app.set_permission_mode(…)``, ``app.stop_task(…)``, ``app.rewind_files(…)``).
"""

from __future__ import annotations

from typing import Any

from catui.errors import ConfigurationError
from catui.permissions.context import PERMISSION_MODES
from catui.session.file_history import FileHistory, RewindError, RewindOutcome
from catui.tasks.registry import TaskRegistry
from catui.tools.base import SubagentSpawner, ToolContext


def set_permission_mode(ctx: ToolContext, mode: Any) -> None:
    """Use ``mode`` for the following tool calls of ``ctx``'s agent. Raises ConfigurationError for an unknown mode."""
    if mode not in PERMISSION_MODES:
        raise ConfigurationError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
    if mode == "plan" and ctx.permissions.mode != "plan":
        ctx.plan.mode_before_plan = ctx.permissions.mode  # approving the plan returns to it
    ctx.permissions = ctx.permissions.with_mode(mode)


async def stop_task(tasks: TaskRegistry | None, runtime: SubagentSpawner | None, task_id: Any) -> None:
    """Stop a background task, or a sub-agent running in the foreground, by id. Raises CatuiError if unknown."""
    if not isinstance(task_id, str) or not task_id:
        raise ConfigurationError(f"task_id must be a task id string, not {task_id!r}")
    if tasks is not None:
        try:
            await tasks.stop(task_id)
            return
        except KeyError:
            pass
    if runtime is not None and await runtime.stop_foreground(task_id):
        return
    running = runtime.foreground_ids() if runtime is not None else []
    known = ", ".join([t.id for t in (tasks.list() if tasks is not None else [])] + running) or "none"
    raise ConfigurationError(
        f"no background task with id {task_id!r} and no sub-agent running with that id (known: {known})")


def rewind_files(history: FileHistory | None, user_message_id: Any, *, dry_run: bool = False) -> RewindOutcome:
    """Put the files the agents changed since ``user_message_id`` (a prompt's uuid) back as they were before it.

    ``dry_run`` changes nothing and says what the rewind would change. Raises RewindError when checkpointing
    is off, the id is not a prompt of this session, or a file could not be restored (all others are restored,
    and the error names those that were not).
    """
    if history is None:
        raise RewindError(
            "file checkpointing is off, so there is nothing to rewind: start catui with "
            "CATUI_FILE_CHECKPOINTING=1 (claude-agent-sdk: enable_file_checkpointing=True)")
    if not isinstance(user_message_id, str) or not user_message_id:
        raise RewindError(f"rewind_files needs the uuid of a user message, not {user_message_id!r}")
    return history.rewind(user_message_id, dry_run=dry_run)
