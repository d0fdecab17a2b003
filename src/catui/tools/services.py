"""What higher layers hand down to tools, typed (``ToolContext.services``).

Tools sit below sessions, sub-agents, hooks and MCP in the dependency order,
so they must not import those layers. What a tool calls on them is declared
here as a small protocol (:class:`SubagentSpawner`); what a tool only carries
down to the next agent (the owning session, the hook runner, the MCP manager)
is typed for the checker alone (``TYPE_CHECKING``), never imported at run time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition
    from catui.hooks.runner import HookRunner
    from catui.mcp.manager import McpManager
    from catui.sandbox.policy import BashSandbox
    from catui.session.file_history import FileHistory
    from catui.session.session import Session
    from catui.subagents.messaging import AgentMessaging
    from catui.subagents.teams.coordinator import TeamCoordinator
    from catui.tasks.registry import TaskRegistry
    from catui.tasks.schedule import CronSchedule
    from catui.tools.base import ToolContext, ToolResult


class AgentCatalogue(Protocol):
    """The agent definitions an Agent call chooses from (``catui.agents.registry.AgentRegistry``)."""

    version: int
    """Bumped at every reload, so that derived texts (the Agent tool's description) know to rebuild."""
    active: list[AgentDefinition]

    def get(self, name: str) -> AgentDefinition | None:
        """The active agent called ``name`` (or one of its aliases)."""
        ...

    def reload_if_changed(self) -> bool:
        """Reload when a definition file changed since the last look; True if it did."""
        ...


class SubagentSpawner(Protocol):
    """The sub-agent runtime as tools see it (the Agent tool, TaskStop, front ends)."""

    async def spawn(self, request: Any, parent_ctx: ToolContext) -> ToolResult:
        """Run one Agent call to its tool_result (``request`` is a ``catui.subagents.plan.SpawnRequest``)."""
        ...

    def running_in_foreground(self, agent_id: str) -> bool:
        """Whether a sub-agent with this id runs in the foreground now (its parent waits for it)."""
        ...

    def foreground_ids(self) -> list[str]:
        """The ids of the sub-agents running in the foreground now."""
        ...

    async def stop_foreground(self, agent_id: str) -> Any:
        """Stop a foreground sub-agent; returns its run (with ``description``), or None when none runs."""
        ...

    async def background_all_foreground(self) -> list[str]:
        """Move every foreground sub-agent to the background (Ctrl-B); returns the ids moved."""
        ...


class OutputReviewer(Protocol):
    """The deferred handoff review of background agents' output (``catui.subagents.deferred_review``)."""

    async def review_task(self, task_id: str, ctx: ToolContext) -> str | None:
        """Review a finished agent read through TaskOutput if due; its warning, or None."""
        ...

    async def review_file(self, path: Path, ctx: ToolContext) -> str | None:
        """The same for a Read of ``path`` when it is an agent's output file; its warning, or None."""
        ...


@dataclass(frozen=True)
class TeamMembership:
    """Set on a teammate's context: the team it belongs to (spec 12.3's rules read it)."""

    team_name: str
    in_process: bool = True
    member_name: str = ""
    """The teammate's name on the team (its inbox; its agent id is ``<member_name>@<team_name>``)."""


@dataclass
class ToolServices:
    """The objects an agent's tools may use, handed down by the layers above them.

    ``env`` holds the variables of the settings' ``env`` block and the SDK's
    ``env`` option (Bash commands see them). ``session`` is the session that owns
    the context; a child's services are its parent's with its own session
    (:meth:`for_child`).
    """

    env: Mapping[str, str] = field(default_factory=dict)
    tasks: TaskRegistry | None = None
    session: Session | None = None
    subagents: SubagentSpawner | None = None
    messaging: AgentMessaging | None = None
    """The agents SendMessage can reach (None when background agents are off)."""
    hooks: HookRunner | None = None
    """The main session's settings hooks; each sub-agent's own runner is derived from it."""
    mcp: McpManager | None = None
    team: TeamMembership | None = None
    """Set on a teammate's context only: the team it belongs to."""
    teams: TeamCoordinator | None = None
    """The team this session leads or belongs to (None when the teams feature is off)."""
    output_review: OutputReviewer | None = None
    """Reviews a background agent's output when it is read in auto mode (None when background agents are off)."""
    sandbox: BashSandbox | None = None
    """Where Bash commands run when the ``sandbox`` setting is on (shared by every agent); None when off."""
    schedule: CronSchedule | None = None
    """The session's scheduled prompts (CronCreate / CronDelete / CronList), shared with its sub-agents."""
    file_history: FileHistory | None = None
    """File checkpoints for rewind_files (None unless checkpointing is on); sub-agents' edits go in it too."""

    def for_child(self, session: Session | None = None) -> ToolServices:
        """A copy for a child agent's context, owned by ``session``."""
        return dataclasses.replace(self, session=session)
