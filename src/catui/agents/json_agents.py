"""Agents given as JSON objects: ``--agents '<json>'``, SDK ``agents=``, and plugin manifests (spec 15.2).

Shape: ``{"name": {"description": ..., "prompt": ..., "tools": [...], "model": ..., ...}}``.
``description`` and ``prompt`` are required. Keys may be camelCase (Claude
Code, claude-agent-sdk) or snake_case (Python callers). SDK callers may also
pass :class:`AgentDefinition` instances; the mapping key becomes their name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catui.agents.definition import AgentDefinition
from catui.agents.definition_builder import build_definition
from catui.agents.field_values import AgentSource, agent_name_problem
from catui.agents.problems import AgentWarning, FailedFile

_SNAKE_TO_CAMEL = {
    "disallowed_tools": "disallowedTools",
    "permission_mode": "permissionMode",
    "max_turns": "maxTurns",
    "initial_prompt": "initialPrompt",
    "mcp_servers": "mcpServers",
    "required_mcp_servers": "requiredMcpServers",
    "append_system_prompt": "appendSystemPrompt",
}


def agents_from_json_mapping(
    mapping: Mapping[str, Any],
    *,
    source: AgentSource,
    origin: str,
    plugin_name: str | None = None,
) -> tuple[list[AgentDefinition], list[FailedFile], list[AgentWarning]]:
    """Definitions from ``{name: object}``; each bad entry becomes a FailedFile naming ``origin`` and the agent."""
    agents: list[AgentDefinition] = []
    failed: list[FailedFile] = []
    warnings: list[AgentWarning] = []
    for raw_name, value in mapping.items():
        problem = agent_name_problem(raw_name)
        if problem:
            failed.append(FailedFile(origin, f"agent name {raw_name!r} {problem}"))
            continue
        name = f"{plugin_name}:{raw_name}" if plugin_name else raw_name
        if isinstance(value, AgentDefinition):
            update: dict[str, Any] = {"agent_type": name, "source": source}
            if plugin_name:
                update.update(plugin_name=plugin_name, permission_mode=None, hooks=None, mcp_servers=None)
            agents.append(value.model_copy(update=update))
            continue
        if not isinstance(value, Mapping):
            failed.append(
                FailedFile(origin, f"agent '{raw_name}' must be an object with description and prompt")
            )
            continue
        definition = _from_object(
            name,
            dict(value),
            source=source,
            origin=origin,
            plugin_name=plugin_name,
            failed=failed,
            warnings=warnings,
        )
        if definition is not None:
            agents.append(definition)
    return agents, failed, warnings


def _from_object(
    name: str,
    value: dict[str, Any],
    *,
    source: AgentSource,
    origin: str,
    plugin_name: str | None,
    failed: list[FailedFile],
    warnings: list[AgentWarning],
) -> AgentDefinition | None:
    data = {_SNAKE_TO_CAMEL.get(key, key): item for key, item in value.items()}
    for required in ("description", "prompt"):
        item = data.get(required)
        if not isinstance(item, str) or not item.strip():
            state = "is missing" if item is None else "must be a non-empty string"
            failed.append(FailedFile(origin, f"agent '{name}': required field '{required}' {state}"))
            return None

    def warn(message: str) -> None:
        warnings.append(AgentWarning(origin, f"agent '{name}': {message}"))

    errors: list[str] = []
    definition = build_definition(
        data,
        agent_type=name,
        description=data["description"],
        prompt=data["prompt"].strip(),
        source=source,
        base_dir="",
        filename=None,
        warn=warn,
        on_error=errors.append,
        plugin_name=plugin_name,
    )
    for key in definition.extra_fields if definition is not None else ():
        warn(f"unknown field '{key}' is ignored")
    if errors:
        failed.append(FailedFile(origin, f"agent '{name}': {errors[0]}"))
    return definition
