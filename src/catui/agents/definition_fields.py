"""The validation of AgentDefinition's fields, imported (with pydantic) when a definition needs it.

Built-in agents and agent files are built from fields their loaders checked already
(``AgentDefinition.from_checked_fields``), so a run that loads only those never imports pydantic
(:mod:`catui.lazy`). A definition built by keyword (SDK callers, JSON agents, invalid file fields) is
validated by :class:`AgentDefinitionFields`, whose fields and defaults are AgentDefinition's
(``tests/test_agents_definition.py`` checks that they agree), and its errors become one
``ConfigurationError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from catui.agents.field_values import AgentSource, PermissionModeName, agent_name_problem, normalize_model
from catui.agents.limit_fields import load_output_schema, parse_duration
from catui.errors import ConfigurationError


class AgentDefinitionFields(BaseModel):
    """AgentDefinition's fields as pydantic validates them (camelCase names accepted, unknown ones refused)."""

    model_config = ConfigDict(
        populate_by_name=True,
        alias_generator=to_camel,
        arbitrary_types_allowed=True,
        extra="forbid",
    )

    agent_type: str = ""
    description: str = ""
    when_to_use: str | Callable[[], str] | None = None
    prompt: str = ""
    system_prompt_builder: Callable[[Any], str] | None = Field(default=None, exclude=True)
    tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    model: str | None = None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | int | None = None
    permission_mode: PermissionModeName | None = None
    isolation: Literal["worktree"] | None = None
    background: bool | None = None
    forks_parent_context: Literal[True, "turn"] | None = None
    required_mcp_servers: list[str] | None = None
    mcp_servers: list[Any] | None = None
    source: AgentSource = "sdk"
    base_dir: str = ""
    color: str | None = None
    max_turns: int | None = Field(default=None, gt=0)
    skills: list[str] | None = None
    initial_prompt: str | None = None
    memory: Literal["user", "project", "local"] | None = None
    omit_claude_md: bool = False
    append_system_prompt: bool | str | None = None
    hooks: dict[str, Any] | None = None
    filename: str | None = None
    cwd: str | None = None
    plugin_name: str | None = None
    # catui's per-agent limits (docs/subagents.md): the child stops cleanly when one is reached.
    max_budget_usd: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    """Wall-clock limit in seconds (files and the SDK also accept ``10m``, ``90s``, ``1h``)."""
    stall_timeout: float | None = Field(default=None, gt=0)
    """Seconds without model output or tool progress after which the child is stopped."""
    output_schema: dict[str, Any] | None = None
    """A JSON Schema: the child finishes by calling ``StructuredOutput`` with a matching object."""
    # Other names the registry resolves to this agent (``claude-code-guide`` for ``catui-guide``).
    aliases: tuple[str, ...] = ()
    # Frontmatter keys catui does not use; kept so ``catui agents show`` can display them.
    extra_fields: dict[str, Any] = Field(default_factory=dict)

    @field_validator("agent_type")
    @classmethod
    def _check_agent_type(cls, value: str) -> str:
        # Empty is allowed: SDK callers give the name as the key of their ``agents`` mapping.
        if value:
            problem = agent_name_problem(value)
            if problem:
                raise ValueError(f"the agent name {problem}")
        return value

    @field_validator("timeout", "stall_timeout", mode="before")
    @classmethod
    def _parse_duration(cls, value: Any) -> Any:
        if isinstance(value, str):
            seconds = parse_duration(value)
            if seconds is None:
                raise ValueError(f"{value!r} is not a duration; write e.g. 90s, 10m or 1h")
            return seconds
        return value

    @field_validator("output_schema", mode="before")
    @classmethod
    def _load_output_schema(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        base = info.data.get("base_dir") or None
        return load_output_schema(value, base_dir=base, where="outputSchema")

    @field_validator("model", mode="before")
    @classmethod
    def _normalize_model(cls, value: Any) -> Any:
        if isinstance(value, str):
            return normalize_model(value)
        return value

    @model_validator(mode="after")
    def _check_tool_names(self) -> AgentDefinitionFields:
        for field_name in ("tools", "disallowed_tools"):
            names = getattr(self, field_name)
            if names and any(not n.strip() for n in names):
                raise ValueError(f"{field_name}: tool names must not be empty")
        return self

    @field_validator("tools", "disallowed_tools", mode="before")
    @classmethod
    def _split_tool_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            from catui.agents.tool_lists import parse_tool_list

            return parse_tool_list(value)
        return value


def validated_fields(data: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The values of every field, and the names of those ``data`` set; ConfigurationError naming each problem."""
    try:
        model = AgentDefinitionFields(**data)
    except ValidationError as exc:
        name = data.get("agent_type") or data.get("agentType") or "<unnamed>"
        problems = "; ".join(_describe_errors(exc.errors()))
        raise ConfigurationError(f"invalid agent definition '{name}': {problems}") from None
    return dict(model.__dict__), set(model.model_fields_set)


def dumped_fields(values: dict[str, Any], fields_set: set[str], options: dict[str, Any]) -> dict[str, Any]:
    """``BaseModel.model_dump(**options)`` of a definition with these values (no validation)."""
    model = AgentDefinitionFields.model_construct(_fields_set=set(fields_set), **values)
    return model.model_dump(**options)


def field_defaults() -> dict[str, Any]:
    """Each field's default, for the test that AgentDefinition's table agrees (factories called)."""
    return {name: info.get_default(call_default_factory=True) for name, info in AgentDefinitionFields.model_fields.items()}


def _describe_errors(errors: list[Any]) -> list[str]:
    """Pydantic errors as ``field: message`` lines, one per field (a union's alternatives joined by 'or')."""
    by_field: dict[str, list[str]] = {}
    for err in errors:
        loc = tuple(str(p) for p in err.get("loc", ()))
        field = loc[0] if loc else "definition"
        if err.get("type") == "extra_forbidden":
            by_field.setdefault(field, []).append("unknown field (check the spelling)")
            continue
        message = str(err.get("msg", "invalid value"))
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        if message not in by_field.setdefault(field, []):
            by_field[field].append(message)
    return [f"{field}: {' or '.join(messages)}" for field, messages in by_field.items()]
