"""The SDKs' ``reloadPlugins`` (control request ``reload_plugins``): read the plugins' and the session's agent,
skill, command and output-style files again, and answer Claude Code's SDKControlReloadPluginsResponse.

What catui reads again: the agent definitions (plugins', the user's and the project's, with the plugin
folders the settings name now), the skills and commands, and the output styles. A plugin's hooks and MCP
servers stay as the session started with them (``mcpServers`` reports the session's servers as they are).
``add_plugins`` is refused: catui loads the plugin folders named at start (``--plugin-dir``, the settings).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.commands.listing import command_entries
from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from catui.app.services import AgentApp


def reload_plugins(app: AgentApp, add_plugins: Any = None) -> dict[str, Any]:
    """Reload and answer ``{commands, agents, plugins, mcpServers, error_count}``; ``error_count`` counts the
    agent, skill and command files that failed to load."""
    if add_plugins:
        raise ConfigurationError("reload_plugins: catui cannot add plugins to a running session ('add_plugins'); "
                                 "name the folders at start (the SDK's plugins option, --plugin-dir)")
    registry = app.registry
    registry.reload()
    app.reload_skills()
    app.reload_output_styles()
    skills = app.skills
    errors = len(registry.failed_files) + (len(skills.failed_files) if skills is not None else 0)
    return {
        "commands": command_entries(skills),
        "agents": [{"name": a.agent_type, "description": a.description, "model": a.model} for a in registry.active],
        "plugins": loaded_plugins(app),
        "mcpServers": app.mcp_status()["mcpServers"],
        "error_count": errors,
    }


def loaded_plugins(app: AgentApp) -> list[dict[str, str]]:
    """``[{name, path}]`` of the session's plugin folders: the manifest's name, else the folder's."""
    from catui.app.tool_set import settings_plugin_paths

    dirs = [*app.options.plugin_dirs, *settings_plugin_paths(app.settings.merged)]
    if not dirs:
        return []
    from catui.agents.plugins import read_manifest  # lazy (catui.lazy): plugins

    plugins: list[dict[str, str]] = []
    seen: set[Path] = set()
    for raw in dirs:
        folder = Path(raw).expanduser()
        folder = (folder if folder.is_absolute() else app.options.cwd / folder).resolve()
        if folder in seen:
            continue
        seen.add(folder)
        manifest, _problem = read_manifest(folder)
        name = manifest.get("name") if manifest is not None else None
        plugins.append({"name": name if isinstance(name, str) and name else folder.name, "path": str(folder)})
    return plugins
