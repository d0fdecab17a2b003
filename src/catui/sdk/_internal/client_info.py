"""The SDK's reports about a connected client's session: the ``system``/``init`` message's data and
``get_server_info()``. claude-agent-sdk's shapes, catui's values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # creating a client loads no more than this module's own code (bench_sdk)
    from catui.app.services import AgentApp

OUTPUT_STYLE = "default"
"""catui has one output style; the init message and server info name it as Claude Code does."""


def plugin_entries(plugin_dirs: list[str]) -> list[dict[str, str]]:
    """``[{"name", "path"}]`` of the session's plugin folders (the name from the manifest, else the folder)."""
    entries = []
    for raw in plugin_dirs:
        folder = Path(raw).expanduser()
        name = folder.name
        try:
            manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
            if isinstance(manifest, dict) and isinstance(manifest.get("name"), str):
                name = manifest["name"]
        except (OSError, ValueError):
            pass  # a folder without a readable manifest is named after itself, as the agent loader does
        entries.append({"name": name, "path": str(folder)})
    return entries


def skill_names(app: AgentApp) -> list[str]:
    skills = app.services.skills
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
        "mcp_servers": app.services.mcp.server_statuses() if app.services.mcp is not None else [],
        "model": session.config.model,
        "permissionMode": session.ctx.permissions.mode,
        # catui's slash commands are its skills (user-invocable with /name in the terminal).
        "slash_commands": skill_names(app),
        "skills": skill_names(app),
        "plugins": plugin_entries(list(app.options.plugin_dirs)),
        "agents": [a.agent_type for a in app.registry.active],
        "output_style": OUTPUT_STYLE,
        # Settings problems, odd agent definitions (an unknown field) and start-up trouble are
        # reported here, never fatal (the CLI prints them).
        "warnings": [
            str(w)
            for w in [
                *app.settings.warnings,
                *app.registry.warnings,
                *app.services.startup_warnings,
            ]
        ],
    }
    return data


def server_info(app: AgentApp) -> dict[str, Any]:
    """claude-agent-sdk's ``get_server_info()``: commands, agents, output styles, the model."""
    skills = app.services.skills
    commands = []
    if skills is not None:
        for name in skills.names():
            skill = skills.get(name)
            commands.append({
                "name": name,
                "description": skill.description if skill is not None else "",
                "argumentHint": (skill.argument_hint or "") if skill is not None else "",
            })
    return {
        "commands": commands,
        "agents": [
            {"name": a.agent_type, "description": a.when_to_use, "model": a.model}
            for a in app.registry.active
        ],
        "output_style": OUTPUT_STYLE,
        "available_output_styles": [OUTPUT_STYLE],
        "model": app.session.config.model,
        "models": [{"value": app.session.config.model, "displayName": app.model_display}],
    }
