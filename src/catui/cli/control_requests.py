"""Answering the driver's control requests (``--input-format stream-json``): interrupt, mode, model, status,
context usage, MCP reconnect and toggle, rewinding files.

``initialize`` is handled by the stream session itself, because its hooks,
agents and SDK MCP servers shape the application it builds;
:func:`initialize_response` is what catui answers it with. Every other
request goes to :class:`ControlRequestHandler`. A request catui cannot carry
out is answered with an error naming it; the session goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from catui.app import AgentApp
from catui.app_controls import rewind_files, stop_task, switch_model, switch_permission_mode
from catui.commands.listing import command_entries
from catui.errors import CatuiError
from catui.sdk_client_info import context_usage, mcp_status, reconnect_mcp_server, toggle_mcp_server
from catui.styles.active import reported_style

# Requests of claude-agent-sdk that catui has no counterpart for yet.
UNSUPPORTED: dict[str, str] = {}


def initialize_response(app: AgentApp) -> dict[str, Any]:
    """What catui answers ``initialize`` with (claude-agent-sdk's ``get_server_info()`` returns it)."""
    registry = app.registry
    return {
        "commands": command_entries(app),
        "agents": [{"name": a.agent_type, "description": a.description, "model": a.model}
                   for a in getattr(registry, "active", [])],
        "output_style": reported_style(app)[0],
        "available_output_styles": reported_style(app)[1],
        "models": [{"value": app.session.config.model, "displayName": app.model_display, "description": ""}],
        "pid": os.getpid(),
    }


class ControlRequestHandler:
    """Carries out one control request on a running application.

    ``interrupt`` stops the current turn; ``main_usage`` gives the main agent's last model usage
    (None before its first request), which ``get_context_usage`` reports against the context window.
    """

    def __init__(self, app: AgentApp, interrupt: Callable[[], None],
                 main_usage: Callable[[], dict[str, Any] | None]) -> None:
        self.app = app
        self.interrupt = interrupt
        self.main_usage = main_usage

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The success ``response`` object for ``request``; raises CatuiError with the reason otherwise."""
        subtype = request.get("subtype")
        if subtype == "interrupt":
            self.interrupt()
            return {}
        if subtype == "set_permission_mode":
            switch_permission_mode(self.app, request.get("mode"))
            return {}
        if subtype == "set_model":
            return {"model": switch_model(self.app, request.get("model"))}
        if subtype == "stop_task":
            await stop_task(self.app, request.get("task_id"))
            return {}
        if subtype == "rewind_files":
            rewind_files(self.app, request.get("user_message_id"))
            return {}
        if subtype == "mcp_status":
            return mcp_status(self.app)
        if subtype == "get_context_usage":
            return context_usage(self.app, self.main_usage())
        if subtype == "mcp_reconnect":
            await reconnect_mcp_server(self.app, request.get("serverName"))
            return {}
        if subtype == "mcp_toggle":
            await toggle_mcp_server(self.app, request.get("serverName"), request.get("enabled"))
            return {}
        if subtype == "initialize":
            raise CatuiError("catui is already initialized; send initialize once, before the first prompt")
        if isinstance(subtype, str) and subtype in UNSUPPORTED:
            raise CatuiError(UNSUPPORTED[subtype])
        raise CatuiError(f"unknown control request subtype {subtype!r}")
