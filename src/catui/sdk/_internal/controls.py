"""What a :class:`catui.CatuiClient` can do to its session besides prompting: interrupt, change the mode
or model, stop or background tasks, report on the session and its MCP servers (claude-agent-sdk's
control requests). Each is a short call into the application (:class:`catui.app.services.AgentApp`) that
the client's :class:`~catui.sdk._internal.driver.ClientDriver` connected.
"""

from __future__ import annotations

from typing import Any, cast

from catui.errors import CatuiError, ConfigurationError
from catui.sdk._internal.client_info import server_info
from catui.sdk._internal.driver import ClientDriver, wrap_error
from catui.sdk.shapes import ContextUsageResponse, McpStatusResponse


class ClientControls:
    """The control methods of CatuiClient (claude-agent-sdk's ClaudeSDKClient names), over its driver."""

    def __init__(self, driver: ClientDriver) -> None:
        self.driver = driver

    async def interrupt(self) -> None:
        """Stop the current run (sub-agents included); it ends with an error_during_execution ResultMessage."""
        self.driver.interrupt()

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls (default, acceptEdits, plan, …)."""
        self.driver.require_app().set_permission_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """Switch the main agent's model (an alias, an id or provider:model); None means the default."""
        app = self.driver.require_app()
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ConfigurationError(f"set_model() needs a model name string or None, not {model!r}")
        try:
            app.switch_model(model)
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc

    def team(self) -> list[dict[str, Any]]:
        """The members of the team this client's agent leads (name, agentId, color, busy, active,
        lastMessage); empty when it leads none."""
        return self.driver.require_app().team_members()

    async def stop_task(self, task_id: str) -> None:
        """Stop a background task or shell command, or a sub-agent running in the foreground, by id."""
        app = self.driver.require_app()
        try:
            await app.stop_task(task_id)
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc

    async def rewind_files(self, user_message_id: str) -> None:
        """Put the files the agents changed since a prompt back as they were before it."""
        self.driver.require_app().rewind_files(user_message_id)

    async def background_tasks(self) -> list[str]:
        """Move the running foreground sub-agents to the background; the task ids of the agents moved."""
        app = self.driver.require_app()
        if app.subagent_runtime is None:
            raise CatuiError("background agents are not available in this catui build (no sub-agent runtime)")
        try:
            return await app.background_foreground_agents()
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc

    async def get_server_info(self) -> dict[str, Any]:
        """claude-agent-sdk's ``get_server_info()``: commands, agents, output styles, the model."""
        return server_info(self.driver.require_app())

    async def get_mcp_status(self) -> McpStatusResponse:
        """The MCP servers, their state and tools."""
        return cast(McpStatusResponse, self.driver.require_app().mcp_status())

    async def get_context_usage(self) -> ContextUsageResponse:
        """How full the main agent's context window is (after its last model request)."""
        return cast(ContextUsageResponse, self.driver.require_app().context_usage(self.driver.main_usage))

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Reconnect a configured MCP server."""
        await self.driver.require_app().reconnect_mcp_server(server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Turn a configured MCP server off or on again."""
        await self.driver.require_app().toggle_mcp_server(server_name, enabled)
