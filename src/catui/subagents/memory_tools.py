"""The file tools an agent with ``memory`` needs for its notes (observed section 15).

Claude Code adds whichever of Read, Write and Edit a memory agent's tools lack, so that it can read
and update its memory file. catui adds them too, but confines each added tool to the agent's memory
folder (a ``ToolConfinement`` in its permission context): an agent listed as read-only stays
read-only everywhere else. The tools it already had keep their reach, and allow rules for the memory
folder let them reach it without a prompt even when it lies outside the working directories (user
scope). Tools the definition's ``disallowedTools`` names are never added back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from catui.agents.definition import AgentDefinition
from catui.permissions.context import PermissionContext, PermissionRule, ToolConfinement
from catui.subagents.tool_filter import matches_tool_spec, tools_allowed_by_context
from catui.tools.base import Tool

MEMORY_TOOL_NAMES: tuple[str, ...] = ("Read", "Write", "Edit")


def memory_folder_rules(folder: Path) -> tuple[PermissionRule, ...]:
    """Allow rules for reading and changing files under ``folder`` (``Edit`` rules cover Write too)."""
    pattern = "//" + str(folder).lstrip("/") + "/**"
    origin = "the agent's memory folder"
    return (
        PermissionRule("Read", pattern, "allow", "session", origin=origin),
        PermissionRule("Edit", pattern, "allow", "session", origin=origin),
    )


def grant_memory_tools(
    definition: AgentDefinition,
    tools: Sequence[Tool],
    pool: Sequence[Tool],
    permissions: PermissionContext,
    folder: Path | None,
) -> tuple[list[Tool], PermissionContext]:
    """``tools`` plus the memory tools they lack (from ``pool``), and permissions confining the added ones."""
    if definition.memory is None or folder is None:
        return list(tools), permissions
    present = {t.name for t in tools}
    denied = definition.disallowed_tools or []
    available = {t.name: t for t in tools_allowed_by_context(pool, permissions)}
    added = [
        available[name]
        for name in MEMORY_TOOL_NAMES
        if name not in present and name in available and not any(matches_tool_spec(name, d) for d in denied)
    ]
    why = f"for its memory ({definition.memory} scope) only"
    permissions = permissions.with_rules(*memory_folder_rules(folder)).with_confinements(
        *(ToolConfinement(tool.name, folder, why) for tool in added)
    )
    return [*tools, *added], permissions
