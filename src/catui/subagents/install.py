"""Wiring the sub-agent system into an application: every collaborator built once and passed in.

``catui.app.build.build_app`` calls :func:`install_subagents` with the parts it uses
(:class:`SubagentParts`) once the main session exists. The pieces, each in its own module: the planner (:mod:`.plan`) and the
fork strategy (:mod:`.fork`), the one child builder (:mod:`.child_session`),
the executor (:mod:`.executors`), the foreground driver (:mod:`.foreground`),
background agents (:mod:`.background`), resume (:mod:`.resume`) and what
SendMessage reaches (:mod:`.messaging`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.config.concurrency import max_concurrent_subagents
from catui.config.flags import (
    agent_teams_enabled,
    auto_background_ms,
    background_tasks_disabled,
    fork_subagent_enabled,
    max_subagent_spawn_depth,
    send_message_enabled,
    team_shutdown_grace_s,
)
from catui.models.resolve import ResolvedModel
from catui.paths import catui_home, sessions_dir
from catui.session.session import Session
from catui.skills.registry import SkillRegistry
from catui.subagents.agent_tool import AgentTool
from catui.subagents.background import BackgroundAgents
from catui.subagents.background_tasks import AgentTaskRecords
from catui.subagents.child_session import ChildTranscripts
from catui.subagents.deferred_review import DeferredReview
from catui.subagents.deps import RuntimeDeps, SpawnCaches
from catui.subagents.executors import AgentExecutor
from catui.subagents.executors.choice import build_executor, executor_name
from catui.subagents.foreground import ForegroundDriver
from catui.subagents.fork import ForkPlanner
from catui.subagents.interrupted import InterruptedAgents
from catui.subagents.live import LiveAgents
from catui.subagents.messaging import AgentMessaging
from catui.subagents.names import AgentNames
from catui.subagents.outcome import RunConcluder
from catui.subagents.parent_notices import ParentNotices
from catui.subagents.plan import ChildPlanner
from catui.subagents.progress_summary import ProgressSummaries, summary_settings
from catui.subagents.resume import AgentResumer
from catui.subagents.runtime import SubagentRuntime
from catui.subagents.send_message import SendMessageTool
from catui.subagents.team_rules import TeamRules
from catui.subagents.teams.backend import InProcessTeammates
from catui.subagents.teams.coordinator import TeamCoordinator
from catui.subagents.teams.spawn import TeammatePlanner
from catui.subagents.teams.tools import TeamCreateTool, TeamDeleteTool
from catui.subagents.worktrees import WorktreeLeases
from catui.tasks.registry import TaskRegistry
from catui.telemetry.events import Telemetry
from catui.tools.base import AgentCatalogue

if TYPE_CHECKING:
    from catui.hooks.runner import HookRunner
    from catui.mcp.manager import McpManager


@dataclass
class SubagentSystem:
    """The installed parts an application (and its front ends) may reach."""

    runtime: SubagentRuntime
    live: LiveAgents
    background: BackgroundAgents | None = None
    messaging: AgentMessaging | None = None
    interrupted: InterruptedAgents | None = None
    teams: TeamCoordinator | None = None
    executor: AgentExecutor | None = None

    async def aclose(self) -> None:
        """Release the executor's own resources (after background work has stopped)."""
        if self.executor is not None:
            await self.executor.aclose()


@dataclass
class SubagentParts:
    """The application's parts the sub-agent system is built from, each built once before it."""

    session: Session
    """The main session: children inherit from it, background agents report to it."""
    registry: AgentCatalogue
    settings: Mapping[str, Any]
    """The merged settings."""
    env: Mapping[str, str]
    project_root: Path
    cwd: Path
    tasks: TaskRegistry | None
    """The background task registry (None: no background agents)."""
    load_project_memory: bool = True
    """False when the user and project setting sources are left out: no CLAUDE.md / CATUI.md is read."""
    resolved_model: ResolvedModel | None = None
    skills: SkillRegistry | None = None
    hooks: HookRunner | None = None
    """The main session's settings hooks (each sub-agent's runner derives from it)."""
    mcp: McpManager | None = None
    executor: str | None = None
    """The executor the options name (None: ``CATUI_EXECUTOR`` or the ``executor`` setting decides)."""
    remote_foreground: bool = False
    warnings: list[str] = field(default_factory=list)
    """Where start-up warnings go (the application's list)."""


def install_subagents(parts: SubagentParts, executor: AgentExecutor | None = None) -> SubagentSystem:
    """Build the sub-agent runtime over ``parts`` and give the main session the Agent tool (and SendMessage).

    ``executor`` decides where children run; by default the one the options, ``CATUI_EXECUTOR`` or the
    ``executor`` setting name (:mod:`.executors.choice`; in this process unless told). Background agents are
    built unless they are disabled or there is no task registry.
    """
    session = parts.session
    settings = parts.settings
    env = dict(parts.env)
    tasks = parts.tasks
    write_transcripts = session.config.transcript is not None
    deps = RuntimeDeps(
        registry=parts.registry,
        settings=settings,
        env=env,
        project_root=Path(parts.project_root),
        sessions_dir=sessions_dir(Path(parts.cwd).resolve()) if write_transcripts else None,
        parent_resolved=parts.resolved_model,
        telemetry=Telemetry.from_settings(settings, env),
        load_project_memory=parts.load_project_memory,
        skills=parts.skills,
        max_spawn_depth=max_subagent_spawn_depth(settings, env),
        hooks=parts.hooks,
        mcp=parts.mcp,
    )
    worktrees = WorktreeLeases(deps.project_root, settings)
    if executor is None:
        executor = build_executor(
            executor_name(parts.executor, settings, env), worktrees, settings=settings, env=env,
            parent_resolved=deps.parent_resolved, remote_foreground=parts.remote_foreground, mcp=parts.mcp,
        )
    concluder = RunConcluder(deps, worktrees)
    transcripts = ChildTranscripts(deps.sessions_dir)
    live = LiveAgents()
    with_background = not background_tasks_disabled(env) and tasks is not None
    background = messaging = None
    interrupted: InterruptedAgents | None = None
    if tasks is not None and with_background:
        tasks.session_id = tasks.session_id or session.session_id
        names = AgentNames(session.session_id, tasks.state)
        notices = ParentNotices(session, tasks)
        notices.connect()
        summaries = ProgressSummaries(summary_settings(settings, env), deps)
        cap = max_concurrent_subagents(env, settings)
        if cap.warning is not None:
            parts.warnings.append(cap.warning)
        background = BackgroundAgents(
            tasks, AgentTaskRecords(tasks, names), executor, concluder, live, notices, summaries,
            max_running=cap.value,
        )
    foreground = ForegroundDriver(
        executor, concluder, live, handover=background,
        auto_background_ms=auto_background_ms(env, settings) if with_background else 0,
    )
    planner = ChildPlanner(deps, SpawnCaches(deps), worktrees, background_available=with_background)
    fork_on = fork_subagent_enabled(settings, env)
    if tasks is not None and background is not None:
        resumer = AgentResumer(planner, transcripts, background, worktrees, tasks, session.ctx)
        messaging = AgentMessaging(background.records.names, tasks, live, foreground, background, resumer)
        interrupted = InterruptedAgents(tasks, resumer)
    teams = None
    if agent_teams_enabled(env) and with_background:
        teams = TeamCoordinator(
            catui_home() / "teams", TeammatePlanner(planner, transcripts, deps.telemetry),
            InProcessTeammates(executor), session, grace_s=team_shutdown_grace_s(env), messaging=messaging,
        )
    runtime = SubagentRuntime(
        deps, planner, transcripts, foreground, launcher=background,
        gate=TeamRules(parts.registry) if with_background else None,
        fork=ForkPlanner(deps, worktrees, background_available=with_background) if fork_on else None,
        teams=teams,
    )
    system = SubagentSystem(runtime=runtime, live=live, background=background, messaging=messaging,
                            interrupted=interrupted, teams=teams, executor=executor)
    # The two the main context's tools reach (TaskStop and the Agent tool; Read/TaskOutput in auto mode):
    # they exist only now, after the session they serve.
    session.ctx.services.subagents = runtime
    if tasks is not None and background is not None:
        session.ctx.services.output_review = DeferredReview(tasks, concluder)
    _offer_tools(session, parts.registry, env, runtime, fork_on, messaging=messaging, teams=teams,
                 offer_send_message=messaging is not None and (
                     agent_teams_enabled(env) or send_message_enabled(settings, env)))
    return system


def _offer_tools(
    session: Session, registry: AgentCatalogue, env: Mapping[str, str], runtime: SubagentRuntime, fork_on: bool, *,
    messaging: AgentMessaging | None, teams: TeamCoordinator | None, offer_send_message: bool,
) -> None:
    """Add the Agent tool (SendMessage, TeamCreate, TeamDelete when offered) to the main session, sorted by name."""
    tools = list(session.tools)
    if not any(t.name == AgentTool.name for t in tools):
        tools.append(AgentTool(registry, env=dict(env), permissions=lambda: session.ctx.permissions,
                               fork_enabled=fork_on))
    if offer_send_message and not any(t.name == SendMessageTool.name for t in tools):
        tools.append(SendMessageTool(messaging, teams))
    if teams is not None:
        present = {t.name for t in tools}
        tools.extend(t for t in (TeamCreateTool(teams), TeamDeleteTool(teams)) if t.name not in present)
    session.set_tools(sorted(tools, key=lambda t: t.name))
