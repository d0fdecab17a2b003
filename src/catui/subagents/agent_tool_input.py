"""The input models of :mod:`catui.subagents.agent_tool`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput

# typing caches ``X | None`` by equality and compares Literals as sets, so a ``Literal[same values in another
# order] | None`` made first in the process (claude_agent_sdk's ``PermissionMode | None``, on import) would be
# the type pydantic gets here, and its order would reach the schema and the error messages. The marker makes
# this type equal to no other one.
AgentMode = Annotated[Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"], "Agent.mode"]
"""The Agent tool's ``mode`` values, in the observed (alphabetical) order."""


class AgentInput(ToolInput):
    """The Agent tool's arguments, in the observed property order (``cwd`` is internal, never sent)."""

    description: str = Field(description="A short (3-5 word) summary of the task")
    prompt: str = Field(description="The complete task for the agent to carry out")
    subagent_type: str | None = Field(default=None, description="Which kind of agent to start")
    model: Literal["sonnet", "opus", "haiku"] | None = Field(
        default=None,
        description="Model for this agent. Used when the agent type does not name its own model; "
        "without it the agent runs on your model.",
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Run the agent in the background and carry on; you are told when it has finished.",
    )
    name: str | None = Field(
        default=None, description="A name for the agent; while it runs, SendMessage({to: name}) reaches it."
    )
    team_name: str | None = Field(
        default=None, description="The team to start the agent in; the current team when left out."
    )
    mode: AgentMode | None = Field(
        default=None, description='Permission mode for the new teammate (e.g. "plan" to require plan approval).'
    )
    isolation: Literal["worktree"] | None = Field(
        default=None,
        description='"worktree" runs the agent in its own temporary git worktree, a separate copy of the '
        "repository on a new branch.",
    )
    cwd: str | None = Field(
        default=None,
        description="Absolute folder the agent works in (every file and shell operation). Cannot be combined "
        'with isolation: "worktree".',
    )


class CurrentAgentInput(ToolInput):
    """The Agent tool's arguments in the current contract (catui.config.compat), in 2.1.332's order.

    ``name``, ``team_name`` and ``mode`` are accepted even when the schema sent leaves them out, as observed;
    ``team_name`` and ``mode`` are ignored (no teams in this contract).
    """

    description: str = Field(description="A short (3-5 word) summary of the task")
    prompt: str = Field(description="The complete task for the agent to carry out")
    subagent_type: str | None = Field(default=None, description="Which kind of agent to start")
    model: Literal["sonnet", "opus", "haiku", "fable"] | None = Field(
        default=None,
        description="Model for this agent. Used when the agent type does not name its own model; "
        "without it the agent runs on your model.",
    )
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="How hard the agent thinks; without it, its type's effort or the default."
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Whether the agent runs in the background (you are told when it has finished). Leave it "
        "out to run it in the background; set false to wait for its answer.",
    )
    name: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
        description="A name for the agent; SendMessage({to: name}) reaches it.",
    )
    team_name: str | None = Field(default=None, description="Deprecated; ignored.")
    mode: AgentMode | None = Field(
        default=None, description="Deprecated; ignored."
    )
    isolation: Literal["worktree", "remote"] | None = Field(
        default=None,
        description='"worktree" runs the agent in its own git worktree (a copy of the repository on a new '
        'branch); "remote" runs it on the distributed executor, or locally in the background in a worktree.',
    )
    cwd: str | None = Field(
        default=None,
        description="Absolute folder the agent works in (every file and shell operation). Cannot be combined "
        'with isolation: "worktree".',
    )
