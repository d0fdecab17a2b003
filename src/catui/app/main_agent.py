"""``--agent NAME``: the main session runs as one of the agent definitions (observed §13).

What the definition changes for the main session: its body becomes the whole
system prompt (or is appended to catui's own with ``appendSystemPrompt:
true``); its ``initialPrompt`` goes before the user's first prompt; its
``model``, ``permissionMode`` and ``effort`` apply unless the command line or
SDK gives one; its ``tools`` / ``disallowedTools`` are honoured (Claude Code
2.1.92 ignores them here; see docs/decisions.md); its ``hooks`` join the
settings' hooks (``Stop`` stays ``Stop``: this is the main agent) and its
inline ``mcpServers`` join the configured servers. Built by :func:`catui.app.build.build_app`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.agents.registry import AgentRegistry
from catui.errors import ConfigurationError
from catui.hooks.config import HooksConfig, parse_hooks
from catui.messages import Block
from catui.permissions.context import PermissionContext
from catui.subagents.prompt import load_agent_memory, memory_dir
from catui.subagents.tool_filter import matches_tool_spec
from catui.tools.base import Tool


def find_main_agent(registry: AgentRegistry, name: str, where: str = "--agent") -> AgentDefinition:
    """The active definition called ``name``; an unknown name is a ConfigurationError listing the known ones."""
    definition = registry.get(name.strip())
    if definition is None:
        available = ", ".join(sorted(registry.names())) or "(none)"
        raise ConfigurationError(
            f"{where}: no agent named {name!r}; available agents: {available}. "
            "Define it in .claude/agents/<name>.md or pass one of those names"
        )
    return definition


def agent_model(definition: AgentDefinition) -> str | None:
    """The definition's model, or None when it inherits the session's (absent or ``inherit``)."""
    model = (definition.model or "").strip()
    return None if not model or model.lower() == "inherit" else model


def appends_to_main_prompt(definition: AgentDefinition) -> bool:
    """``appendSystemPrompt: true`` (a YAML boolean, or the string ``true`` from a JSON or SDK definition)."""
    flag = definition.append_system_prompt
    return flag is True or (isinstance(flag, str) and flag.strip().lower() == "true")


def main_agent_system_prompt(
    definition: AgentDefinition,
    default_prompt: Sequence[Block],
    *,
    cli_append: str | None,
    active_agents: Sequence[AgentDefinition],
    tool_names: Sequence[str],
    memory: str | None = None,
) -> list[Block]:
    """The main session's system prompt when it runs as ``definition``; ``--append-system-prompt`` comes last.

    ``default_prompt`` is catui's own main prompt without the command line's appendix; ``memory`` is the
    agent's memory section (its ``memory`` field), after its body as for a sub-agent.
    """
    body = definition.get_system_prompt(
        SystemPromptContext(active_agents=list(active_agents), tool_names=list(tool_names))
    ).strip()
    blocks: list[Block] = list(default_prompt) if appends_to_main_prompt(definition) else []
    if body:
        blocks.append({"type": "text", "text": body})
    if memory:
        blocks.append({"type": "text", "text": memory})
    if cli_append:
        blocks.append({"type": "text", "text": cli_append})
    return blocks


def with_agent_memory(
    definition: AgentDefinition, tools: Sequence[Tool], pool: Sequence[Tool], permissions: PermissionContext,
    project_root: Path,
) -> tuple[list[Tool], PermissionContext, str | None]:
    """A ``memory`` agent's session: the Read/Write/Edit it lacks (from ``pool``, confined to its memory folder),
    the permission context that confines them, and its memory section for the system prompt (observed §15)."""
    from catui.subagents.memory_tools import grant_memory_tools  # lazy (catui.lazy): memory agents only

    folder = memory_dir(definition, project_root)
    granted, permissions = grant_memory_tools(definition, tools, pool, permissions, folder)
    return granted, permissions, load_agent_memory(definition, project_root)


def with_initial_prompt(initial_prompt: str | None, prompt: str) -> str:
    """``<initialPrompt>\\n\\n<prompt>`` as observed; the prompt alone when there is no initial prompt."""
    initial = (initial_prompt or "").strip()
    if not initial:
        return prompt
    return f"{initial}\n\n{prompt}" if prompt else initial


def _selected(tool: Tool, entries: Sequence[str]) -> bool:
    return any(matches_tool_spec(name, entry) for entry in entries for name in (tool.name, *tool.aliases))


def restrict_tools(definition: AgentDefinition, tools: Sequence[Tool]) -> list[Tool]:
    """The tools the definition's allow-list (``*`` = all) and deny-list leave, in the given order."""
    allowed = definition.tools
    kept = list(tools)
    if allowed is not None and "*" not in allowed:
        kept = [t for t in kept if _selected(t, allowed)]
    if definition.disallowed_tools:
        kept = [t for t in kept if not _selected(t, definition.disallowed_tools)]
    return kept


def keep_agent_tools(definition: AgentDefinition, tools: Sequence[Tool]) -> list[Tool]:
    """:func:`restrict_tools`, keeping a memory agent's granted Read/Write/Edit (confined by its permissions)."""
    kept = restrict_tools(definition, tools)
    if definition.memory:
        from catui.subagents.memory_tools import MEMORY_TOOL_NAMES  # lazy (catui.lazy): memory agents only

        names = {t.name for t in kept}
        denied = definition.disallowed_tools or []
        extra = {id(t) for t in tools if t.name in MEMORY_TOOL_NAMES and t.name not in names
                 and not any(matches_tool_spec(t.name, d) for d in denied)}
        kept = [t for t in tools if id(t) in extra or t.name in names]  # the given order
    return kept


def check_tools_left(definition: AgentDefinition, tools: Sequence[Tool]) -> None:
    """A ConfigurationError when the allow-list names no tool the session has (MCP tools may still come)."""
    allowed = definition.tools
    if allowed is None or "*" in allowed or restrict_tools(definition, tools):
        return
    if any(entry.startswith("mcp__") for entry in allowed):
        return  # MCP tools join once their servers connect
    listed = ", ".join(allowed) if allowed else "(an empty list)"
    where = f" ({definition.filename})" if definition.filename else ""
    raise ConfigurationError(
        f"--agent {definition.agent_type}: its tools list {listed} names no tool this session has{where}; "
        "fix the 'tools' field of the definition"
    )


def main_agent_hooks(definition: AgentDefinition) -> HooksConfig:
    """The definition's hooks as the main agent's: event names as written (``Stop`` is this session's Stop)."""
    if not definition.hooks:
        return HooksConfig()
    where = definition.filename or definition.agent_type
    return parse_hooks(definition.hooks, source=f"agent '{definition.agent_type}' ({where})")


def inline_mcp_servers(definition: AgentDefinition) -> dict[str, Any]:
    """The definition's inline ``mcpServers`` entries (``{name: config}``); names alone refer to configured servers."""
    servers: dict[str, Any] = {}
    for entry in definition.mcp_servers or []:
        if isinstance(entry, dict):
            servers.update({str(name): config for name, config in entry.items()})
    return servers
