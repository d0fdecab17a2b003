"""What a :class:`catui.CatuiClient` can do to its session besides prompting: interrupt, change the mode
or model, stop or background tasks, apply permission updates, report on the session and its MCP servers.

A mixin of CatuiClient (same object, split out to keep sdk.py about the conversation itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import Any, cast

from catui.app.status import (
    context_usage,
    mcp_status,
    reconnect_mcp_server,
    server_info,
    toggle_mcp_server,
)
from catui.errors import CatuiError, ConfigurationError
from catui.sdk.permissions import apply_sdk_permission_updates
from catui.sdk.shapes import ContextUsageResponse, McpStatusResponse


def wrap_error(exc: BaseException) -> CatuiError:
    """``exc`` as a CatuiError (itself when it is one)."""
    if isinstance(exc, CatuiError):
        return exc
    error = CatuiError(f"internal error: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


class ClientControls:
    """The control methods of CatuiClient (claude-agent-sdk's ClaudeSDKClient names)."""

    _running: bool
    _interrupt_pending: bool
    _inbox: asyncio.Queue[Any]
    _main_usage: dict[str, Any] | None
    _app: Any

    def _require_app(self) -> Any:
        raise NotImplementedError

    # -- control --------------------------------------------------------------------------------

    async def interrupt(self) -> None:
        """Stop the current run (sub-agents included); it ends with an error_during_execution ResultMessage."""
        app = self._require_app()
        if self._running or not self._inbox.empty():
            self._interrupt_pending = True
            app.session.abort()

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls (default, acceptEdits, plan, …)."""
        app = self._require_app()
        from catui.app.controls import switch_permission_mode

        switch_permission_mode(app, mode)

    async def set_model(self, model: str | None = None) -> None:
        """Switch the main agent's model (an alias, an id or provider:model); None means the default."""
        app = self._require_app()
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ConfigurationError(f"set_model() needs a model name string or None, not {model!r}")
        from catui.app.model_switch import switch_model

        try:
            switch_model(app, model)
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc

    def team(self) -> list[dict[str, Any]]:
        """The members of the team this client's agent leads (name, agentId, color, busy, active,
        lastMessage); empty when it leads none."""
        app = self._require_app()
        teams = getattr(app.services.subagents, "teams", None)
        return teams.team.snapshot() if teams is not None and teams.team is not None else []

    async def stop_task(self, task_id: str) -> None:
        """Stop a task by id: a background agent or shell command, or a sub-agent running in the foreground.

        A background task's notification follows. A foreground agent stops at once: its parent's Agent
        call returns an error result saying it was stopped, a ``TaskNotificationMessage`` with status
        ``stopped`` follows, and the parent (and the agent's siblings) carry on.
        """
        app = self._require_app()
        # Imported here: the control module loads the app, which creating a client does not need.
        from catui.app.controls import stop_task

        try:
            await stop_task(app, task_id)
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc

    async def rewind_files(self, user_message_id: str) -> None:
        """Put the files the agents changed since a prompt back as they were before it.

        ``user_message_id`` is the ``uuid`` of a :class:`UserMessage` this client received for one of
        its prompts. Needs ``enable_file_checkpointing=True``; changes made by shell commands are not
        tracked. Raises :class:`CatuiError` for an unknown id or with checkpointing off.
        """
        app = self._require_app()
        from catui.app.controls import rewind_files

        rewind_files(app, user_message_id)

    async def background_tasks(self) -> list[str]:
        """Move the running foreground sub-agents to the background (Claude Code's Ctrl-B).

        The parent's Agent calls return at once with "launched in the background"
        results; the agents keep running and report with task messages. Returns
        the task ids of the agents moved.
        """
        app = self._require_app()
        runtime = app.session.ctx.services.subagents
        mover = runtime.background_all_foreground if runtime is not None else None
        if mover is None:
            raise CatuiError("background agents are not available in this catui build (no sub-agent runtime)")
        try:
            outcome = mover()
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc
        if isinstance(outcome, dict):
            return [str(t) for t in outcome]
        if isinstance(outcome, list | tuple | set):
            return [str(getattr(t, "id", t)) for t in outcome]
        return []

    def _apply_to_main(self, updates: list[Any]) -> None:
        """Permission updates a sub-agent's answer carried also hold for the main agent (the session's rules)."""
        app = self._app
        if app is None:
            return
        ctx = app.session.ctx
        with contextlib.suppress(ValueError):  # already checked when the asking agent applied them
            ctx.permissions = apply_sdk_permission_updates(ctx.permissions, updates)

    # -- what the session is (claude-agent-sdk's control requests) --------------------------------

    async def get_server_info(self) -> dict[str, Any]:
        """Commands (skills), agents, output styles and the model of this session."""
        return server_info(self._require_app())

    async def get_mcp_status(self) -> McpStatusResponse:
        """``{"mcpServers": [{"name", "status", "tools", "error"?}]}`` for configured and in-process servers."""
        return cast(McpStatusResponse, mcp_status(self._require_app()))

    async def get_context_usage(self) -> ContextUsageResponse:
        """How full the main agent's context window is after its last model request."""
        return cast(ContextUsageResponse, context_usage(self._require_app(), self._main_usage))

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Disconnect an MCP server and connect it again; its tools are offered again if it connects."""
        await reconnect_mcp_server(self._require_app(), server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Turn an MCP server off (disconnected, its tools gone) or on again for this session."""
        await toggle_mcp_server(self._require_app(), server_name, enabled)
