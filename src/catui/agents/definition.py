"""AgentDefinition: everything that describes one kind of sub-agent (spec section 4).

Attribute names are snake_case; the camelCase names of Claude Code's files and
of claude-agent-sdk (``disallowedTools``, ``permissionMode``, ``maxTurns`` …)
are accepted wherever a definition is built. Instances are immutable.
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

from catui.agents.checked_fields import fields_are_checked
from catui.agents.field_values import AgentSource, PermissionModeName, agent_name_problem, normalize_model
from catui.agents.limit_fields import load_output_schema, parse_duration
from catui.errors import ConfigurationError


class SystemPromptContext(BaseModel):
    """What ``get_system_prompt`` may look at (the guide agent lists the user's own agents)."""

    # Built on first validation, not at import: most runs never validate one.
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    active_agents: list[Any] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


# The leading fields of claude-agent-sdk's AgentDefinition dataclass, the ones its callers pass by position.
_POSITIONAL_FIELDS: tuple[str, ...] = ("description", "prompt", "tools")


class AgentDefinition(BaseModel):
    """One agent type. ``prompt`` is the system prompt of custom agents; built-ins compute theirs.

    ``tools`` None means every tool; ``[]`` means none; ``["*"]`` is the same as None.
    ``model`` is an alias (sonnet / opus / haiku), a full id, ``inherit`` or None (inherit).
    """

    model_config = ConfigDict(
        frozen=True,
        populate_by_name=True,
        alias_generator=to_camel,
        arbitrary_types_allowed=True,
        extra="forbid",
        # The validator is built on first use: built-ins and files go through from_checked_fields.
        defer_build=True,
    )

    agent_type: str = ""
    description: str = ""
    when_to_use: str | Callable[[], str] | None = None
    prompt: str = ""
    system_prompt_builder: Callable[[SystemPromptContext], str] | None = Field(default=None, exclude=True)
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

    def __init__(self, *args: Any, **data: Any) -> None:
        if args:
            # claude-agent-sdk's AgentDefinition is a dataclass: AgentDefinition("desc", "prompt", ["Read"]).
            if len(args) > len(_POSITIONAL_FIELDS):
                raise ConfigurationError(
                    f"AgentDefinition takes at most {len(_POSITIONAL_FIELDS)} positional arguments "
                    f"({', '.join(_POSITIONAL_FIELDS)}); pass the other fields by name"
                )
            for field_name, value in zip(_POSITIONAL_FIELDS, args, strict=False):
                if field_name in data:
                    raise ConfigurationError(f"AgentDefinition got {field_name!r} both by position and by name")
                data[field_name] = value
        try:
            super().__init__(**data)
        except ValidationError as exc:
            name = data.get("agent_type") or data.get("agentType") or "<unnamed>"
            problems = "; ".join(_describe_errors(exc.errors()))
            raise ConfigurationError(f"invalid agent definition '{name}': {problems}") from None

    @classmethod
    def from_checked_fields(cls, **fields: Any) -> AgentDefinition:
        """Build from snake_case values a loader has already checked and normalised, skipping pydantic.

        The loaders check every field as Claude Code reads it, so pydantic's validation would
        only repeat that work (it is most of the cost of building a definition). A cheap type check
        still runs; anything it does not accept goes through full validation, so a mistake still
        raises ConfigurationError naming the field.
        """
        return cls.from_checked_dict(fields)

    @classmethod
    def from_checked_dict(cls, fields: dict[str, Any]) -> AgentDefinition:
        """``from_checked_fields`` for a dict the caller built (saves copying it into keyword arguments)."""
        if cls is AgentDefinition and fields_are_checked(fields):
            return construct_checked(fields)
        return cls(**fields)

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
    def _check_tool_names(self) -> AgentDefinition:
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

    @property
    def is_built_in(self) -> bool:
        """True for the agents catui ships (general-purpose, Explore, Plan, …)."""
        return self.source == "built-in"

    @property
    def allows_all_tools(self) -> bool:
        """True when the agent may use every tool its parent has (``tools`` absent or containing ``*``)."""
        return self.tools is None or "*" in self.tools

    @property
    def model_display(self) -> str:
        """The model as ``catui agents`` shows it: the alias or id, or ``inherit``."""
        return self.model or "inherit"

    @property
    def names(self) -> tuple[str, ...]:
        """The agent type followed by its aliases."""
        return (self.agent_type, *self.aliases)

    def get_when_to_use(self) -> str:
        """The when-to-use text (computed for agents whose when_to_use is a function, like Explore)."""
        value = self.when_to_use
        if callable(value):
            return value()
        return value or self.description

    def get_system_prompt(self, context: SystemPromptContext | None = None) -> str:
        """The agent's own system prompt (before catui adds notes, environment and git status)."""
        if self.system_prompt_builder is not None:
            return self.system_prompt_builder(context or SystemPromptContext())
        return self.prompt


_object_setattr = object.__setattr__
_object_new = object.__new__
# (constant defaults, fields with a default factory) of AgentDefinition, computed on first use.
_defaults_cache: tuple[dict[str, Any], list[tuple[str, Callable[[], Any]]]] | None = None


def construct_checked(fields: dict[str, Any]) -> AgentDefinition:
    """What ``model_construct`` does, minus its per-field bookkeeping (it costs as much as validating).

    Only for snake_case ``fields`` that ``fields_are_checked`` accepts (or that were built to pass it).
    """
    global _defaults_cache
    if _defaults_cache is None:
        constants: dict[str, Any] = {}
        factories: list[tuple[str, Callable[[], Any]]] = []
        for name, info in AgentDefinition.model_fields.items():
            if info.default_factory is not None:
                factories.append((name, info.default_factory))  # type: ignore[arg-type]
            else:
                constants[name] = info.default
        _defaults_cache = (constants, factories)
    constants, factories = _defaults_cache
    values = constants.copy()
    for name, factory in factories:
        if name not in fields:
            values[name] = factory()
    values.update(fields)
    agent = AgentDefinition.__new__(AgentDefinition)
    _object_setattr(agent, "__dict__", values)
    _object_setattr(agent, "__pydantic_fields_set__", set(fields))
    _object_setattr(agent, "__pydantic_extra__", None)
    _object_setattr(agent, "__pydantic_private__", None)
    return agent


# The keys a Markdown loader always sets besides coerce_fields' output (their fields-set entries).
_LOADED_FILE_KEYS: frozenset[str] = frozenset(
    {"agent_type", "description", "prompt", "source", "base_dir", "filename", "plugin_name", "extra_fields"}
)


def construct_loaded_file(
    fields: dict[str, Any],
    agent_type: str,
    description: str,
    prompt: str,
    source: str,
    base_dir: str,
    filename: str,
    extra_fields: dict[str, Any],
) -> AgentDefinition:
    """``construct_checked`` for a Markdown file's agent, without building an intermediate dict of its fields.

    The caller guarantees what ``fields_are_checked`` would: ``fields`` passed it, ``agent_type`` has no
    ``agent_name_problem``, the strings are ``str``, ``source`` is one of AGENT_SOURCES and
    ``extra_fields`` has only ``str`` keys. The result equals ``construct_checked`` of the same values
    with ``plugin_name=None``.
    """
    if _defaults_cache is None:
        construct_checked({})  # fills the defaults cache
    constants, factories = _defaults_cache  # type: ignore[misc]
    values = constants.copy()
    for name, factory in factories:
        if name not in fields and name != "extra_fields":  # extra_fields is set below
            values[name] = factory()
    values.update(fields)
    values["agent_type"] = agent_type
    values["description"] = description
    values["prompt"] = prompt
    values["source"] = source
    values["base_dir"] = base_dir
    values["filename"] = filename
    values["extra_fields"] = extra_fields
    agent = _object_new(AgentDefinition)  # BaseModel has no __new__ of its own: object's, without the lookup
    _object_setattr(agent, "__dict__", values)
    fields_set = set(_LOADED_FILE_KEYS)  # a mutable set, as pydantic's copies expect
    fields_set.update(fields)
    _object_setattr(agent, "__pydantic_fields_set__", fields_set)
    _object_setattr(agent, "__pydantic_extra__", None)
    _object_setattr(agent, "__pydantic_private__", None)
    return agent


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
