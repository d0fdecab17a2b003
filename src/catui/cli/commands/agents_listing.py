"""``catui agents list``: active agents grouped by source, shadowed definitions, failed files."""

from __future__ import annotations

from collections.abc import Sequence

from catui.agents.definition import AgentDefinition
from catui.agents.problems import FailedFile
from catui.agents.registry import FLAG_ORIGIN, SDK_ORIGIN, AgentRegistry

# Group headings, highest precedence first (the order `catui agents` prints them).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Flag agents", ("flagSettings", "sdk")),
    ("Project agents", ("projectSettings",)),
    ("User agents", ("userSettings",)),
    ("Plugin agents", ("plugin",)),
    ("Built-in agents", ("built-in",)),
)
# How `list` and `show` name each source.
SOURCE_LABELS = {
    "flagSettings": "--agents",
    "sdk": "SDK",
    "projectSettings": "project",
    "userSettings": "user",
    "plugin": "plugin",
    "built-in": "built-in",
}


def format_listing(registry: AgentRegistry, notes: Sequence[str] = ()) -> str:
    """The text of ``catui agents list``."""
    count = len(registry.active)
    lines = [f"{count} active agent{'s' if count != 1 else ''}"]
    for heading, sources in GROUPS:
        members = [a for a in registry.all if a.source in sources]
        if not members:
            continue
        lines.append("")
        lines.append(f"{heading}:")
        for agent in members:
            line = f"  {agent.agent_type} · {agent.model_display}"
            winner = registry.shadowed_by(agent)
            if winner is not None:
                line += f"  (shadowed by {describe_origin(winner, registry)})"
            lines.append(line)
    if registry.failed_files:
        lines.append("")
        lines.append(f"Failed to load ({len(registry.failed_files)}):")
        lines.extend(_failed_lines(registry.failed_files))
    if registry.warnings:
        lines.append("")
        noun = "warning" if len(registry.warnings) == 1 else "warnings"
        lines.append(f"{len(registry.warnings)} {noun}; run `catui agents validate` to see them.")
    for note in notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines)


def describe_origin(agent: AgentDefinition, registry: AgentRegistry) -> str:
    """Where an agent comes from: ``project: /path/x.md``, or just ``--agents`` when the label says it all."""
    label = SOURCE_LABELS.get(agent.source, agent.source)
    origin = registry.origin(agent)
    return label if origin in (FLAG_ORIGIN, SDK_ORIGIN, "built-in") else f"{label}: {origin}"


def _failed_lines(failed: Sequence[FailedFile]) -> list[str]:
    lines: list[str] = []
    for item in failed:
        lines.append(f"  {item.path}")
        lines.append(f"    {item.error}")
    return lines
