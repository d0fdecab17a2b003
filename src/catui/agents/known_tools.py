"""Which tool names an agent definition may mention without a warning.

Claude Code 2.1.92's tool names are always known (definitions are shared
between the two programs); catui's tool registry adds its own names when a
session has already imported it. Names of MCP tools (``mcp__server__tool``) are
never flagged: servers connect later, and their tools are matched then.
"""

from __future__ import annotations

import sys

from catui.agents.tool_lists import tool_base_name

# Claude Code 2.1.92's main-agent tools (observed), in alphabetical order.
CLAUDE_CODE_MAIN_TOOL_NAMES: tuple[str, ...] = (
    "Agent",
    "AskUserQuestion",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "NotebookEdit",
    "Read",
    "Skill",
    "TaskOutput",
    "TaskStop",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
)
# The main-agent tools plus the teams-feature tools and the ``Task`` alias of Agent.
CLAUDE_CODE_TOOL_NAMES: frozenset[str] = frozenset(
    (*CLAUDE_CODE_MAIN_TOOL_NAMES, "Task", "SendMessage", "TeamCreate", "TeamDelete")
)


def known_tool_names() -> frozenset[str]:
    """catui's built-in tool names plus Claude Code's (so definitions written for it raise no noise)."""
    names = set(CLAUDE_CODE_TOOL_NAMES)
    # Only consult the tool registry when a session already imported it: importing every tool
    # module just to word a warning would make `catui agents` noticeably slower.
    registry = sys.modules.get("catui.tools.registry")
    if registry is not None:
        try:
            names.update(tool.name for tool in registry.builtin_tools())
        except Exception:  # the registry is optional here: any failure keeps the static list
            pass
    return frozenset(names)


def unknown_tool_names(entries: list[str] | None, known: frozenset[str] | None = None) -> list[str]:
    """Entries of a tools list that name no known tool (``*`` and ``mcp__…`` are always fine)."""
    if not entries:
        return []
    known = known if known is not None else known_tool_names()
    unknown: list[str] = []
    for entry in entries:
        if entry in known:  # the usual case: a bare, known tool name
            continue
        base = tool_base_name(entry)
        if base == "*" or base.startswith("mcp__") or base in known:
            continue
        unknown.append(entry)
    return unknown
