"""AgentDefinition: everything that describes one kind of sub-agent (spec section 4).

Attribute names are snake_case; the camelCase names of Claude Code's files and
of claude-agent-sdk (``disallowedTools``, ``permissionMode``, ``maxTurns`` …)
are accepted wherever a definition is built. Instances are immutable.

AgentDefinition is a plain class with the parts of pydantic's model API its callers use (``model_copy``,
``model_dump``, ``model_fields_set``, ``model_validate``), not a pydantic model: the built-in agents and
agent files, whose loaders check every field, are built without importing pydantic, and a definition
built by keyword is validated by :mod:`catui.agents.definition_fields`, imported then (:mod:`catui.lazy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from catui.agents.checked_fields import fields_are_checked
from catui.agents.field_values import AgentSource, PermissionModeName
from catui.errors import ConfigurationError


@dataclass
class SystemPromptContext:
    """What ``get_system_prompt`` may look at (the guide agent lists the user's own agents)."""

    active_agents: list[Any] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# The leading fields of claude-agent-sdk's AgentDefinition dataclass, the ones its callers pass by position.
_POSITIONAL_FIELDS: tuple[str, ...] = ("description", "prompt", "tools")

# Each field's default (definition_fields.AgentDefinitionFields has the same; a test checks they agree),
# and the fields whose default is a new empty dict each time.
FIELD_DEFAULTS: dict[str, Any] = {
    "agent_type": "",
    "description": "",
    "when_to_use": None,
    "prompt": "",
    "system_prompt_builder": None,
    "tools": None,
    "disallowed_tools": None,
    "model": None,
    "effort": None,
    "permission_mode": None,
    "isolation": None,
    "background": None,
    "forks_parent_context": None,
    "required_mcp_servers": None,
    "mcp_servers": None,
    "source": "sdk",
    "base_dir": "",
    "color": None,
    "max_turns": None,
    "skills": None,
    "initial_prompt": None,
    "memory": None,
    "omit_claude_md": False,
    "append_system_prompt": None,
    "hooks": None,
    "filename": None,
    "cwd": None,
    "plugin_name": None,
    "max_budget_usd": None,
    "max_tokens": None,
    "timeout": None,
    "stall_timeout": None,
    "output_schema": None,
    "aliases": (),
}
FIELD_FACTORIES: tuple[str, ...] = ("extra_fields",)


class AgentDefinition:
    """One agent type. ``prompt`` is the system prompt of custom agents; built-ins compute theirs.

    ``tools`` None means every tool; ``[]`` means none; ``["*"]`` is the same as None.
    ``model`` is an alias (sonnet / opus / haiku), a full id, ``inherit`` or None (inherit).
    """

    __slots__ = ("__dict__", "_fields_set")

    agent_type: str
    description: str
    when_to_use: str | Callable[[], str] | None
    prompt: str
    system_prompt_builder: Callable[[SystemPromptContext], str] | None
    tools: list[str] | None
    disallowed_tools: list[str] | None
    model: str | None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | int | None
    permission_mode: PermissionModeName | None
    isolation: Literal["worktree"] | None
    background: bool | None
    forks_parent_context: Literal[True, "turn"] | None
    required_mcp_servers: list[str] | None
    mcp_servers: list[Any] | None
    source: AgentSource
    base_dir: str
    color: str | None
    max_turns: int | None
    skills: list[str] | None
    initial_prompt: str | None
    memory: Literal["user", "project", "local"] | None
    omit_claude_md: bool
    append_system_prompt: bool | str | None
    hooks: dict[str, Any] | None
    filename: str | None
    cwd: str | None
    plugin_name: str | None
    # catui's per-agent limits (docs/subagents.md): the child stops cleanly when one is reached.
    max_budget_usd: float | None
    max_tokens: int | None
    timeout: float | None
    """Wall-clock limit in seconds (files and the SDK also accept ``10m``, ``90s``, ``1h``)."""
    stall_timeout: float | None
    """Seconds without model output or tool progress after which the child is stopped."""
    output_schema: dict[str, Any] | None
    """A JSON Schema: the child finishes by calling ``StructuredOutput`` with a matching object."""
    # Other names the registry resolves to this agent (``claude-code-guide`` for ``catui-guide``).
    aliases: tuple[str, ...]
    # Frontmatter keys catui does not use; kept so ``catui agents show`` can display them.
    extra_fields: dict[str, Any]

    _fields_set: set[str]

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
        # lazy (catui.lazy): pydantic validates what no loader checked (SDK callers, JSON agents)
        from catui.agents.definition_fields import validated_fields

        values, fields_set = validated_fields(data)
        _object_setattr(self, "__dict__", values)
        _object_setattr(self, "_fields_set", fields_set)

    @classmethod
    def from_checked_fields(cls, **fields: Any) -> AgentDefinition:
        """Build from snake_case values a loader has already checked and normalised, skipping validation.

        The loaders check every field as Claude Code reads it, so pydantic's validation would
        only repeat that work (it is most of the cost of building a definition, and importing pydantic
        costs a run more). A cheap type check still runs; anything it does not accept goes through full
        validation, so a mistake still raises ConfigurationError naming the field.
        """
        return cls.from_checked_dict(fields)

    @classmethod
    def from_checked_dict(cls, fields: dict[str, Any]) -> AgentDefinition:
        """``from_checked_fields`` for a dict the caller built (saves copying it into keyword arguments)."""
        if cls is AgentDefinition and fields_are_checked(fields):
            return construct_checked(fields)
        return cls(**fields)

    @classmethod
    def model_validate(cls, data: Any) -> AgentDefinition:
        """A definition from a mapping of its fields (snake_case or camelCase), validated; a definition as it is."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ConfigurationError(f"an agent definition must be a mapping of its fields, got {type(data).__name__}")
        return cls(**data)

    @property
    def model_fields_set(self) -> set[str]:
        """The fields given when the definition was built (the others have their defaults)."""
        return self._fields_set

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> AgentDefinition:
        """A copy with ``update``'s fields replaced, not validated (as pydantic's ``model_copy``)."""
        import copy

        values = copy.deepcopy(self.__dict__) if deep else dict(self.__dict__)
        fields_set = set(self._fields_set)
        if update:
            values.update(update)
            fields_set.update(update)
        agent = _object_new(type(self))
        _object_setattr(agent, "__dict__", values)
        _object_setattr(agent, "_fields_set", fields_set)
        return agent

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The fields as a dict, with pydantic's ``model_dump`` options (``exclude``, ``exclude_unset``, ``by_alias`` …)."""
        from catui.agents.definition_fields import dumped_fields  # lazy (catui.lazy)

        return dumped_fields(self.__dict__, self._fields_set, options)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"AgentDefinition is frozen: use model_copy(update={{{name!r}: ...}}) for a changed copy")

    def __delattr__(self, name: str) -> None:
        raise TypeError("AgentDefinition is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items() if name != "system_prompt_builder")
        return f"{type(self).__name__}({shown})"

    def __getstate__(self) -> dict[str, Any]:
        return {"values": self.__dict__, "fields_set": self._fields_set}

    def __setstate__(self, state: dict[str, Any]) -> None:
        _object_setattr(self, "__dict__", state["values"])
        _object_setattr(self, "_fields_set", state["fields_set"])

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


def construct_checked(fields: dict[str, Any]) -> AgentDefinition:
    """A definition of checked fields, not validated (validating costs as much as importing pydantic).

    Only for snake_case ``fields`` that ``fields_are_checked`` accepts (or that were built to pass it).
    """
    values = FIELD_DEFAULTS.copy()
    for name in FIELD_FACTORIES:
        if name not in fields:
            values[name] = {}
    values.update(fields)
    agent = AgentDefinition.__new__(AgentDefinition)
    _object_setattr(agent, "__dict__", values)
    _object_setattr(agent, "_fields_set", set(fields))
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
    values = FIELD_DEFAULTS.copy()
    for name in FIELD_FACTORIES:
        if name not in fields and name != "extra_fields":  # extra_fields is set below
            values[name] = {}
    values.update(fields)
    values["agent_type"] = agent_type
    values["description"] = description
    values["prompt"] = prompt
    values["source"] = source
    values["base_dir"] = base_dir
    values["filename"] = filename
    values["extra_fields"] = extra_fields
    agent = _object_new(AgentDefinition)  # object's __new__, without the lookup
    _object_setattr(agent, "__dict__", values)
    fields_set = set(_LOADED_FILE_KEYS)  # a mutable set, as model_copy expects
    fields_set.update(fields)
    _object_setattr(agent, "_fields_set", fields_set)
    return agent
