"""AgentDefinition: everything that describes one kind of sub-agent (spec section 4).

Attribute names are snake_case; the camelCase names of Claude Code's files and
of claude-agent-sdk (``disallowedTools``, ``permissionMode``, ``maxTurns`` …)
are accepted wherever a definition is built. Instances are immutable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from catui.errors import ConfigurationError

AgentSource = Literal["built-in", "plugin", "flagSettings", "userSettings", "projectSettings", "sdk"]
PermissionModeName = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]


class SystemPromptContext(BaseModel):
    """What ``get_system_prompt`` may look at (the guide agent lists the user's own agents)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    active_agents: list[Any] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


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
    )

    agent_type: str = ""
    description: str = ""
    when_to_use: str | Callable[[], str] | None = None
    prompt: str = ""
    system_prompt_builder: Callable[[SystemPromptContext], str] | None = Field(default=None, exclude=True)
    tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    model: str | None = None
    effort: Literal["low", "medium", "high"] | int | None = None
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
    extra_fields: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            name = data.get("agent_type") or data.get("agentType") or "<unnamed>"
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'definition'}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigurationError(f"invalid agent definition '{name}': {problems}") from None

    @field_validator("tools", "disallowed_tools", mode="before")
    @classmethod
    def _split_tool_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            from catui.agents.tool_lists import parse_tool_list

            return parse_tool_list(value)
        return value

    @property
    def is_built_in(self) -> bool:
        return self.source == "built-in"

    @property
    def allows_all_tools(self) -> bool:
        return self.tools is None or "*" in self.tools

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
