"""What the init message and server info list about commands, skills and plugins."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catui.skills.registry import SkillRegistry

BUILTIN_PROMPT_COMMANDS = frozenset({"compact"})
"""catui's own commands that print mode and the SDKs handle themselves (catui.session.compact_prompt)."""
BUILTIN_COMMAND_ENTRIES = {
    "compact": {"description": "Summarise the conversation so far to free context",
                "argumentHint": "[instructions for the summary]"},
}
"""How the SDKs' server info describes each of :data:`BUILTIN_PROMPT_COMMANDS`."""


def slash_command_names(skills: SkillRegistry | None) -> list[str]:
    """The init message's ``slash_commands``: every command and skill a user may run, then catui's own."""
    names = list(skills.names()) if skills is not None else []
    return [*names, *sorted(BUILTIN_PROMPT_COMMANDS - set(names))]


def init_skill_names(skills: SkillRegistry | None) -> list[str]:
    """The init message's ``skills`` (``SkillRegistry.skills_listed_in_init``)."""
    return skills.skills_listed_in_init() if skills is not None else []


def session_plugin_dirs(given: Sequence[str], settings: Mapping[str, Any]) -> list[str]:
    """The session's plugin folders: the ``given`` ones (``--plugin-dir`` / the SDK's ``plugins``), then the
    merged ``settings``' ``plugins``."""
    if not settings.get("plugins"):  # the plugin loader (and YAML) loads only when the settings name plugins
        return list(dict.fromkeys(given))
    from catui.agents.plugins import plugin_paths  # lazy (catui.lazy): plugins

    return list(dict.fromkeys([*given, *plugin_paths(settings)]))


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


def skill_entries(skills: SkillRegistry | None) -> list[dict[str, Any]]:
    """``[{name, description, argumentHint}]`` of the session's skills and custom commands, by name (the SDKs'
    SlashCommand; ``reloadSkills`` answers these)."""
    entries: list[dict[str, Any]] = []
    for name in skills.names() if skills is not None else []:
        skill = skills.get(name) if skills is not None else None
        entries.append({"name": name, "description": skill.description if skill is not None else "",
                        "argumentHint": (skill.argument_hint or "") if skill is not None else ""})
    return entries


def command_entries(skills: SkillRegistry | None) -> list[dict[str, Any]]:
    """``[{name, description, argumentHint}]`` of the commands and skills a user may run (the SDKs' server info),
    then catui's own that the init message lists too, marked ``builtin`` as Claude Code marks its own."""
    entries = skill_entries(skills)
    names = [entry["name"] for entry in entries]
    for name in sorted(BUILTIN_PROMPT_COMMANDS - set(names)):
        entries.append({"name": name, **BUILTIN_COMMAND_ENTRIES[name], "builtin": True})
    return entries
