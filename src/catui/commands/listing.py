"""What the init message and server info list about commands, skills and plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BUILTIN_PROMPT_COMMANDS = frozenset({"compact"})
"""catui's own commands that print mode and the SDKs handle themselves (catui.session.compact_prompt)."""


def slash_command_names(app: Any) -> list[str]:
    """The init message's ``slash_commands``: every command and skill a user may run, then catui's own."""
    skills = app.services.skills
    names = list(skills.names()) if skills is not None else []
    return [*names, *sorted(BUILTIN_PROMPT_COMMANDS - set(names))]


def init_skill_names(app: Any) -> list[str]:
    """The init message's ``skills`` (``SkillRegistry.skills_listed_in_init``)."""
    skills = app.services.skills
    return skills.skills_listed_in_init() if skills is not None else []


def session_plugin_dirs(app: Any) -> list[str]:
    """The session's plugin folders: ``--plugin-dir`` / the SDK's ``plugins``, then the settings' ``plugins``."""
    merged = getattr(app.settings, "merged", {}) or {}
    if not merged.get("plugins"):  # the plugin loader (and YAML) loads only when the settings name plugins
        return list(dict.fromkeys(app.options.plugin_dirs))
    from catui.agents.plugins import plugin_paths  # lazy (catui.lazy): plugins

    return list(dict.fromkeys([*app.options.plugin_dirs, *plugin_paths(merged)]))


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


def command_entries(app: Any) -> list[dict[str, str]]:
    """``[{name, description, argumentHint}]`` of the commands and skills a user may run (the SDKs' server info)."""
    skills = app.services.skills
    entries = []
    for name in skills.names() if skills is not None else []:
        skill = skills.get(name)
        entries.append({"name": name, "description": skill.description if skill is not None else "",
                        "argumentHint": (skill.argument_hint or "") if skill is not None else ""})
    return entries
