"""Which tools a child agent gets (spec 9, observed section 2).

Start from the parent's tools that the child's permission context allows
(no tool a rule denies outright; only read-only tools in plan mode), drop the
tools no child may have, then apply the definition's allow-list (``*`` = all)
and its deny-list. MCP entries match by server: ``mcp__server`` and
``mcp__server__*`` select every tool of that server.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from catui.agents.definition import AgentDefinition
from catui.errors import CatuiError
from catui.permissions.context import PermissionContext
from catui.tools.base import Tool

TOOLS_NEVER_GIVEN_TO_CHILDREN: frozenset[str] = frozenset(
    {"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop", "SendMessage",
     "WorktreeMerge", "Workflow"}
)
"""Observed in Claude Code 2.1.92: sub-agents cannot nest, ask the user, switch plan mode or manage tasks
(nor message other agents: SendMessage is the coordinator's; teammates get it added, catui.subagents.teams).
WorktreeMerge, catui's own, is the main agent's: what comes back into the user's checkout is the parent's
decision. Workflow is the main agent's too (observed-cc-now.md §7)."""


class NoToolsLeftError(CatuiError):
    """A definition's allow-list names no tool the child could actually have."""


def tool_spec_name(entry: str) -> str:
    """The tool name of an allow/deny entry: ``Bash(git:*)`` → ``Bash``; ``Task`` is Agent's old name."""
    name = entry.split("(", 1)[0].strip()
    return "Agent" if name == "Task" else name


def matches_tool_spec(tool_name: str, entry: str) -> bool:
    """Whether an allow/deny entry selects ``tool_name`` (exact name, or an MCP server / server pattern)."""
    name = tool_spec_name(entry)
    if name == tool_name:
        return True
    if name.startswith("mcp__") and tool_name.startswith("mcp__"):
        if name.endswith("__*"):
            return tool_name.startswith(name[:-1])
        if name.count("__") == 1:  # mcp__server: every tool of that server
            return tool_name.startswith(name + "__")
        if name.endswith("*"):
            return tool_name.startswith(name[:-1])
    return False


def _selected(tool: Tool, entries: Iterable[str]) -> bool:
    names = (tool.name, *tool.aliases)
    return any(matches_tool_spec(n, e) for e in entries for n in names)


def tools_allowed_by_context(tools: Sequence[Tool], permissions: PermissionContext) -> list[Tool]:
    """The tools a permission context lets an agent have at all (spec 9.3)."""
    denied_outright = {
        rule.tool_name for rule in permissions.rules if rule.behavior == "deny" and rule.content is None
    }
    out: list[Tool] = []
    for tool in tools:
        if any(n in denied_outright for n in (tool.name, *tool.aliases)):
            continue
        if permissions.mode == "plan" and not tool.read_only:
            continue
        out.append(tool)
    return out


def filter_tools_for_agent(
    definition: AgentDefinition,
    parent_tools: Sequence[Tool],
    permissions: PermissionContext,
    *,
    never: frozenset[str] = TOOLS_NEVER_GIVEN_TO_CHILDREN,
) -> list[Tool]:
    """The child's tools, in the parent's order (spec 9.1).

    Raises :class:`NoToolsLeftError` when the definition has an allow-list and
    nothing of it survives: a tool-less agent would only pretend to work.
    """
    base = [t for t in tools_allowed_by_context(parent_tools, permissions) if t.name not in never]
    allow = definition.tools
    if allow is not None and "*" not in allow:
        base = [t for t in base if _selected(t, allow)]
        if not base:
            listed = ", ".join(allow) if allow else "(an empty list)"
            raise NoToolsLeftError(
                f"Agent type '{definition.agent_type}' has no tools to work with: its tools list {listed} "
                "names no tool available to sub-agents here. Fix the 'tools' field of its definition"
                + (f" ({definition.filename})" if definition.filename else "")
                + "."
            )
    if definition.disallowed_tools:
        base = [t for t in base if not _selected(t, definition.disallowed_tools)]
    return base


class ToolFilterMemo:
    """``filter_tools_for_agent`` remembered per (definition, tool pool, permission rules and mode, never-set).

    A fan-out of one agent type asks the same question for every child (0.2-0.5 ms each); the answer
    depends only on those inputs, which are immutable or compared by identity here (a reloaded definition or a
    pool with a newly connected MCP tool is a new key). Each call returns a list of its own.
    """

    MAX_ENTRIES = 128

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], tuple[AgentDefinition, tuple[Tool, ...], list[Tool]]] = {}

    def filter(
        self, definition: AgentDefinition, parent_tools: Sequence[Tool], permissions: PermissionContext,
        *, never: frozenset[str] = TOOLS_NEVER_GIVEN_TO_CHILDREN,
    ) -> list[Tool]:
        """What ``filter_tools_for_agent`` answers (raising as it does), computed once per distinct question."""
        pool = tuple(parent_tools)
        key = (id(definition), tuple(id(t) for t in pool), permissions.mode, permissions.rules, never)
        entry = self._entries.get(key)
        # The entry holds its definition and tools, so their ids cannot be reused while it lives.
        if entry is not None and entry[0] is definition and entry[1] == pool:
            return list(entry[2])
        tools = filter_tools_for_agent(definition, pool, permissions, never=never)
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (definition, pool, tools)
        return list(tools)


def tool_summary(definition: AgentDefinition) -> str:
    """How the Agent tool's description states an agent's tools: ``*``, a list, or ``All tools except …``."""
    deny = list(definition.disallowed_tools or [])
    allow = definition.tools
    if allow is not None and "*" not in allow:
        names = [t for t in allow if not any(matches_tool_spec(tool_spec_name(t), d) for d in deny)]
        return ", ".join(names) if names else "None"
    if deny:
        return "All tools except " + ", ".join(deny)
    return "*"
