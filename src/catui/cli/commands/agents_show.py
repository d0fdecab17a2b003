"""``catui agents show``: every resolved field of one agent, its provider and its final tool list."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.agents.known_tools import CLAUDE_CODE_MAIN_TOOL_NAMES
from catui.agents.registry import AgentRegistry
from catui.agents.tool_lists import tool_base_name
from catui.cli.commands.agents_listing import SOURCE_LABELS, describe_origin
from catui.config.settings import load_settings
from catui.errors import CatuiError
from catui.models.resolve import resolve_model
from catui.subagents.models import SUBAGENT_MODEL_ENV


def main_tool_names() -> list[str]:
    """The main agent's tool names: catui's registry when it imports, else Claude Code's observed list."""
    try:
        # lazy: every built-in tool with its pydantic input model (~100 ms); only `show` needs them
        from catui.tools.registry import builtin_tools

        names = sorted({tool.name for tool in builtin_tools(interactive=True)} | {"Agent"})
        if names:
            return names
    except Exception:  # any failure of the optional registry falls back to the static list
        pass
    return list(CLAUDE_CODE_MAIN_TOOL_NAMES)


def final_tool_list(agent: AgentDefinition, available: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tools the agent would get as a sub-agent, entries of its lists that match no available tool).

    A ``memory`` agent's list ends with the Read, Write and Edit it is given at run time (confined to its
    memory folder) unless its lists already have them or its ``disallowedTools`` names them.

    Mirrors the run-time filter by name: start from the main agent's tools minus those no
    sub-agent receives (the run-time filter's own list), keep the allow-list (``*``/absent = all), then remove the deny-list.
    MCP entries are kept as written; they are matched once servers connect.
    """
    # lazy: the run-time filter's module imports the tool base classes; only `show` needs its list
    from catui.subagents.tool_filter import TOOLS_NEVER_GIVEN_TO_CHILDREN

    def base(entry: str) -> str:
        name = tool_base_name(entry)
        return "Agent" if name == "Task" else name

    pool = [name for name in available if name not in TOOLS_NEVER_GIVEN_TO_CHILDREN]
    unmatched: list[str] = []
    if agent.allows_all_tools:
        chosen = list(pool)
    else:
        chosen = []
        for entry in agent.tools or []:
            name = base(entry)
            if name.startswith("mcp__"):
                chosen.append(entry)
            elif name in pool:
                if name not in chosen:
                    chosen.append(name)
            else:
                unmatched.append(entry)
    denied = {base(entry) for entry in agent.disallowed_tools or []}
    for entry in agent.disallowed_tools or []:
        name = base(entry)
        if name not in available and not name.startswith("mcp__"):
            unmatched.append(entry)
    final = [name for name in chosen if base(name) not in denied]
    if agent.memory:
        # lazy, as above: a memory agent gets the Read/Write/Edit it lacks at run time (for its memory folder)
        from catui.subagents.memory_tools import MEMORY_TOOL_NAMES

        final.extend(name for name in MEMORY_TOOL_NAMES
                     if name in pool and name not in final and name not in denied)
    return final, unmatched


def show_settings_and_env(cwd: Path) -> tuple[Mapping[str, Any], dict[str, str]]:
    """The merged settings and the environment (settings' ``env`` over the process's) that resolve a model."""
    try:
        settings: Mapping[str, Any] = load_settings(cwd).merged
    except CatuiError:
        settings = {}  # the provider line then uses the built-in aliases; the agent is shown all the same
    extra = settings.get("env")
    env = {**os.environ, **({str(k): str(v) for k, v in extra.items()} if isinstance(extra, Mapping) else {})}
    return settings, env


PROVIDER_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL",
    "openai": "OPENAI_API_KEY; OPENAI_BASE_URL",
}


def provider_text(model: str | None, settings: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Which provider serves the agent's model, the concrete id, and the variables that configure it."""
    spec = (model or "").strip()
    if not spec or spec == "inherit":
        return "the parent's (the model is inherited)"
    if any(env.get(name, "").strip() for name in SUBAGENT_MODEL_ENV):
        override = next(name for name in SUBAGENT_MODEL_ENV if env.get(name, "").strip())
        note = f"; {override} is set and overrides it at run time"
    else:
        note = ""
    try:
        resolved = resolve_model(spec, settings, env)
    except CatuiError as exc:
        return f"none: {exc}"
    variables = PROVIDER_VARIABLES.get(resolved.provider)
    where = f"; configured by {variables}" if variables else ""
    return f"{resolved.provider} ({resolved.model_id}{where}){note}"


def format_agent(
    agent: AgentDefinition, registry: AgentRegistry, settings: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The text of ``catui agents show`` (``settings``/``env`` resolve the model's aliases and provider)."""
    rows: list[tuple[str, str]] = [
        ("Name", agent.agent_type),
        ("Source", SOURCE_LABELS.get(agent.source, agent.source) + f" ({agent.source})"),
        ("File", registry.origin(agent)),
    ]
    if agent.aliases:
        rows.append(("Aliases", ", ".join(agent.aliases)))
    if agent.plugin_name:
        rows.append(("Plugin", agent.plugin_name))
    rows.append(("Model", agent.model_display))
    rows.append(("Provider", provider_text(agent.model, settings or {}, env if env is not None else os.environ)))
    declared = "all (*)" if agent.allows_all_tools else (", ".join(agent.tools or []) or "none ([])")
    rows.append(("Tools", declared))
    if agent.disallowed_tools is not None:
        rows.append(("Disallowed tools", ", ".join(agent.disallowed_tools) or "none"))
    final, unmatched = final_tool_list(agent, main_tool_names())
    rows.append(("Final tools", ", ".join(final) if final else "none"))
    if unmatched:
        rows.append(("Unavailable", ", ".join(unmatched) + " (no such tool here; ignored)"))
    optional: list[tuple[str, Any]] = [
        ("Effort", agent.effort),
        ("Permission mode", agent.permission_mode),
        ("Isolation", agent.isolation),
        ("Background", agent.background),
        ("Max turns", agent.max_turns),
        ("Memory", agent.memory),
        ("Skills", ", ".join(agent.skills) if agent.skills else None),
        ("MCP servers", _mcp_names(agent.mcp_servers)),
        (
            "Required MCP servers",
            ", ".join(agent.required_mcp_servers) if agent.required_mcp_servers else None,
        ),
        ("Hooks", ", ".join(agent.hooks) if agent.hooks else None),
        ("Color", agent.color),
        ("Forks parent context", agent.forks_parent_context),
        ("Omit CLAUDE.md", True if agent.omit_claude_md else None),
        ("Append system prompt", agent.append_system_prompt),
        ("Initial prompt", agent.initial_prompt),
        ("Max budget", f"${agent.max_budget_usd:g} (maxBudgetUsd)" if agent.max_budget_usd is not None else None),
        ("Max tokens", agent.max_tokens),
        ("Timeout", f"{agent.timeout:g}s" if agent.timeout is not None else None),
        ("Stall timeout", f"{agent.stall_timeout:g}s" if agent.stall_timeout is not None else None),
        ("Output schema", json.dumps(agent.output_schema) if agent.output_schema is not None else None),
        ("Ignored fields", ", ".join(sorted(agent.extra_fields)) if agent.extra_fields else None),
    ]
    rows.extend((label, str(value)) for label, value in optional if value is not None)
    shadowed = [a for a in registry.all if a.agent_type == agent.agent_type and a is not agent]
    for other in shadowed:
        rows.append(("Shadows", describe_origin(other, registry)))
    width = max(len(label) for label, _ in rows) + 1
    lines = [f"{(label + ':').ljust(width)} {value}" for label, value in rows]
    lines += ["", "When to use:", _indent(agent.get_when_to_use())]
    context = SystemPromptContext(active_agents=list(registry.active))
    lines += ["", "System prompt:", _indent(agent.get_system_prompt(context) or "(empty)")]
    origin = registry.origin(agent)
    # A file defines one agent; an option or manifest defines several, named in each message.
    related = [
        w
        for w in registry.warnings
        if w.path == origin and (Path(origin).suffix == ".md" or f"'{agent.agent_type}'" in w.message)
    ]
    if related and not agent.is_built_in:
        lines += ["", "Warnings:"] + [f"  {w.message}" for w in related]
    return "\n".join(lines)


def _mcp_names(servers: list[Any] | None) -> str | None:
    if not servers:
        return None
    return ", ".join(s if isinstance(s, str) else ", ".join(map(str, s)) for s in servers)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())
