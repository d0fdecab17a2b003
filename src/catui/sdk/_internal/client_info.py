"""The SDK's reports about a connected client's session: the ``system``/``init`` message's data and
``get_server_info()``. claude-agent-sdk's shapes, catui's values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catui.commands.listing import (
    command_entries,
    init_skill_names,
    plugin_entries,
    session_plugin_dirs,
    slash_command_names,
)

if TYPE_CHECKING:  # creating a client loads no more than this module's own code (bench_sdk)
    from catui.app.services import AgentApp


def skill_names(app: AgentApp) -> list[str]:
    skills = app.skills
    return list(skills.names()) if skills is not None else []


def init_data(app: AgentApp) -> dict[str, Any]:
    """The data of the ``system``/``init`` message each prompt starts with."""
    session = app.session
    data = {
        "type": "system",
        "subtype": "init",
        "cwd": str(session.ctx.cwd),
        "session_id": session.session_id,
        "tools": [t.name for t in session.tools],
        "mcp_servers": app.mcp_server_statuses(),
        "model": session.config.model,
        "permissionMode": session.ctx.permissions.mode,
        # Custom commands and skills (each runs as /name), then catui's own print-mode commands.
        "slash_commands": slash_command_names(app.skills),
        "skills": init_skill_names(app.skills),
        "plugins": plugin_entries(session_plugin_dirs(app.options.plugin_dirs, app.settings.merged)),
        "agents": [a.agent_type for a in app.registry.active],
        "output_style": app.reported_style()[0],
        # catui's own key: the Claude Code contract this session follows (catui.config.compat).
        "compat": app.compat.name,
        # Settings problems, odd agent definitions (an unknown field) and start-up trouble are
        # reported here, never fatal (the CLI prints them).
        "warnings": [
            str(w)
            for w in [
                *app.settings.warnings,
                *app.registry.warnings,
                *app.startup_warnings,
            ]
        ],
    }
    return data


def server_info(app: AgentApp) -> dict[str, Any]:
    """claude-agent-sdk's ``get_server_info()``: commands, agents, output styles, the model."""
    return {
        "commands": command_entries(app.skills),
        "agents": [
            {"name": a.agent_type, "description": a.when_to_use, "model": a.model}
            for a in app.registry.active
        ],
        "output_style": app.reported_style()[0],
        "available_output_styles": app.reported_style()[1],
        "model": app.session.config.model,
        "models": [{"value": app.session.config.model, "displayName": app.model_display}],
    }
