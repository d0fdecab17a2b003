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

from catui.app.build import AgentApp
from catui.errors import CatuiError

# Requests of claude-agent-sdk that catui has no counterpart for yet.
UNSUPPORTED: dict[str, str] = {}


def initialize_response(app: AgentApp) -> dict[str, Any]:
    """What catui answers ``initialize`` with (claude-agent-sdk's ``get_server_info()`` returns it)."""
    registry = app.registry
    skills = app.services.skills
    return {
        "commands": [{"name": name, "description": "", "argumentHint": ""}
                     for name in (skills.names() if skills is not None else [])],
        "agents": [{"name": a.agent_type, "description": a.description, "model": a.model}
                   for a in getattr(registry, "active", [])],
        "output_style": "default",
        "available_output_styles": ["default"],
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
            self.app.set_permission_mode(request.get("mode"))
            return {}
        if subtype == "set_model":
            return {"model": self.app.switch_model(request.get("model")).model_id}
        if subtype == "stop_task":
            await self.app.stop_task(request.get("task_id"))
            return {}
        if subtype == "rewind_files":
            self.app.rewind_files(request.get("user_message_id"))
            return {}
        if subtype == "mcp_status":
            return self.app.mcp_status()
        if subtype == "get_context_usage":
            return self.app.context_usage(self.main_usage())
        if subtype == "mcp_reconnect":
            await self.app.reconnect_mcp_server(request.get("serverName"))
            return {}
        if subtype == "mcp_toggle":
            await self.app.toggle_mcp_server(request.get("serverName"), request.get("enabled"))
            return {}
        if subtype == "initialize":
            raise CatuiError("catui is already initialized; send initialize once, before the first prompt")
        if isinstance(subtype, str) and subtype in UNSUPPORTED:
            raise CatuiError(UNSUPPORTED[subtype])
        raise CatuiError(f"unknown control request subtype {subtype!r}")
