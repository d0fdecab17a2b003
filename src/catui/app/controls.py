"""Changing a running application from outside the conversation: permission mode, model, stopping a task,
rewinding files.

What claude-agent-sdk's ``set_permission_mode``, ``set_model``,
``stop_task`` and ``rewind_files`` do, for any driver: the CLI's control protocol
(``catui.cli.stream.control_requests``) calls these.
"""

from __future__ import annotations

from typing import Any

from catui.app import model_switch
from catui.app.build import AgentApp
from catui.errors import ConfigurationError
from catui.permissions.context import PERMISSION_MODES
from catui.session.file_history import RewindError, RewindOutcome


def switch_permission_mode(app: AgentApp, mode: Any) -> None:
    """Use ``mode`` for the main agent's following tool calls. Raises ConfigurationError for an unknown mode."""
    if mode not in PERMISSION_MODES:
        raise ConfigurationError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
    ctx = app.session.ctx
    if mode == "plan" and ctx.permissions.mode != "plan":
        ctx.plan.mode_before_plan = ctx.permissions.mode  # approving the plan returns to it
    ctx.permissions = ctx.permissions.with_mode(mode)


def switch_model(app: AgentApp, model: Any) -> str:
    """Move the main agent to ``model`` (alias, id or provider:model; None = the default); returns the model id.

    Sub-agents whose model is ``inherit`` follow. Raises ConfigurationError for an unknown model.
    """
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigurationError(f"the model must be a model name string or null, not {model!r}")
    return model_switch.switch_model(app, model).model_id


async def stop_task(app: AgentApp, task_id: Any) -> None:
    """Stop a background task, or a sub-agent running in the foreground, by id. Raises CatuiError if unknown."""
    if not isinstance(task_id, str) or not task_id:
        raise ConfigurationError(f"task_id must be a task id string, not {task_id!r}")
    try:
        await app.tasks.stop(task_id)
        return
    except KeyError:
        pass
    runtime = app.session.ctx.services.subagents
    if runtime is not None and await runtime.stop_foreground(task_id):
        return
    running = runtime.foreground_ids() if runtime is not None else []
    known = ", ".join([t.id for t in app.tasks.list()] + running) or "none"
    raise ConfigurationError(
        f"no background task with id {task_id!r} and no sub-agent running with that id (known: {known})")


def rewind_files(app: AgentApp, user_message_id: Any) -> RewindOutcome:
    """Put the files the agents changed since ``user_message_id`` (a prompt's uuid) back as they were before it.

    Raises RewindError when checkpointing is off, the id is not a prompt of this session, or a file
    could not be restored (all others are restored, and the error names those that were not).
    """
    history = app.session.config.file_history
    if history is None:
        raise RewindError(
            "file checkpointing is off, so there is nothing to rewind: start catui with "
            "CATUI_FILE_CHECKPOINTING=1 (claude-agent-sdk: enable_file_checkpointing=True)")
    if not isinstance(user_message_id, str) or not user_message_id:
        raise RewindError(f"rewind_files needs the uuid of a user message, not {user_message_id!r}")
    return history.rewind(user_message_id)
