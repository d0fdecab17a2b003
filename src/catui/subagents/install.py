"""Wiring the sub-agent system into an application: every collaborator built once and passed in.

``catui.app.build_app`` calls :func:`install_subagents` once the main session
exists. The pieces, each in its own module: the planner (:mod:`.plan`) and the
fork strategy (:mod:`.fork`), the one child builder (:mod:`.child_session`),
the executor (:mod:`.executors`), the foreground driver (:mod:`.foreground`),
background agents (:mod:`.background`), resume (:mod:`.resume`) and what
SendMessage reaches (:mod:`.messaging`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from catui.config.flags import (
    agent_teams_enabled,
    auto_background_ms,
    background_tasks_disabled,
    send_message_enabled,
    team_shutdown_grace_s,
)
from catui.paths import catui_home, sessions_dir
from catui.subagents.agent_tool import AgentTool, CurrentAgentTool
from catui.subagents.background import BackgroundAgents
from catui.subagents.background_tasks import AgentTaskRecords
from catui.subagents.child_session import ChildTranscripts
from catui.subagents.deferred_review import DeferredReview
from catui.subagents.deps import RuntimeDeps, SpawnCaches
from catui.subagents.executors import AgentExecutor
from catui.subagents.executors.choice import build_executor, executor_name
from catui.subagents.foreground import ForegroundDriver
from catui.subagents.fork import FORK_AGENT_TYPE, ForkPlanner
from catui.subagents.interrupted import InterruptedAgents
from catui.subagents.live import LiveAgents
from catui.subagents.messaging import AgentMessaging
from catui.subagents.messaging_current import CurrentSendMessageTool, ListAgentsTool
from catui.subagents.names import AgentNames
from catui.subagents.outcome import RunConcluder
from catui.subagents.parent_notices import ParentNotices
from catui.subagents.plan import ChildPlanner
from catui.subagents.progress_summary import ProgressSummaries, summary_settings
from catui.subagents.resume import AgentResumer
from catui.subagents.running_cap import RunningCap
from catui.subagents.runtime import SubagentRuntime
from catui.subagents.send_message import SendMessageTool
from catui.subagents.team_rules import TeamRules
from catui.subagents.teams.backend import InProcessTeammates
from catui.subagents.teams.coordinator import TeamCoordinator
from catui.subagents.teams.spawn import TeammatePlanner
from catui.subagents.teams.tools import TeamCreateTool, TeamDeleteTool
from catui.subagents.worktrees import WorktreeLeases
from catui.telemetry.events import Telemetry

if TYPE_CHECKING:
    from catui.app import AgentApp


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


def install_subagents(app: AgentApp, executor: AgentExecutor | None = None) -> SubagentSystem:
    """Build the sub-agent runtime for ``app`` and give its main session the Agent tool (and SendMessage).

    ``executor`` decides where children run; by default the one the options, ``CATUI_EXECUTOR`` or the
    ``executor`` setting name (:mod:`.executors.choice`; in this process unless told). Background agents are
    built unless they are disabled or the app has no task registry.
    """
    session = app.session
    settings = app.settings.merged
    env = dict(app.services.env)
    write_transcripts = session.config.transcript is not None
    # The profile answers from the app's environment and settings (an app built by hand sets only those).
    compat = app.services.compat = replace(app.services.compat, env=env, settings=settings)
    deps = RuntimeDeps(
        registry=app.registry,
        settings=settings,
        env=env,
        project_root=Path(app.project_root),
        sessions_dir=sessions_dir(Path(app.options.cwd).resolve()) if write_transcripts else None,
        parent_resolved=app.services.resolved_model,
        telemetry=Telemetry.from_settings(settings, env),
        load_project_memory=bool(set(app.options.setting_sources) & {"user", "project"}),
        skills=app.services.skills,
        max_spawn_depth=compat.max_spawn_depth(),
        compat=compat,
    )
    worktrees = WorktreeLeases(deps.project_root, settings)
    remote_executor = False
    if executor is None:
        chosen = executor_name(app.options.executor, settings, env)
        remote_executor = chosen == "ray"
        executor = build_executor(
            chosen, worktrees, settings=settings, env=env,
            parent_resolved=deps.parent_resolved, remote_foreground=app.options.remote_foreground,
        )
    concluder = RunConcluder(deps, worktrees)
    transcripts = ChildTranscripts(deps.sessions_dir)
    live = LiveAgents()
    with_background = not background_tasks_disabled(env) and app.tasks is not None
    background = messaging = None
    interrupted: InterruptedAgents | None = None
    if with_background:
        app.tasks.session_id = app.tasks.session_id or session.session_id
        names = AgentNames(session.session_id, app.tasks.state)
        notices = ParentNotices(session, app.tasks)
        notices.connect()
        summaries = ProgressSummaries(summary_settings(settings, env), deps)
        cap = compat.running_cap()
        if cap.warning is not None:
            app.services.startup_warnings.append(cap.warning)
        background = BackgroundAgents(
            app.tasks, AgentTaskRecords(app.tasks, names), executor, concluder, live, notices, summaries,
            # Over the cap the current contract refuses (counted by the runtime); the queue never fills then.
            max_running=cap.value if compat.overflow() == "queue" else 1_000_000, compat=compat,
        )
    foreground = ForegroundDriver(
        executor, concluder, live, handover=background,
        auto_background_ms=auto_background_ms(env, settings) if with_background else 0,
    )
    planner = ChildPlanner(deps, SpawnCaches(deps), worktrees, background_available=with_background)
    fork_on = compat.fork_enabled()
    teams = None
    if agent_teams_enabled(env) and with_background and compat.teams_tools():
        teams = TeamCoordinator(
            catui_home() / "teams", TeammatePlanner(planner, transcripts, deps.telemetry),
            InProcessTeammates(executor), session, grace_s=team_shutdown_grace_s(env),
        )
    runtime = SubagentRuntime(
        deps, planner, transcripts, foreground, launcher=background,
        gate=TeamRules(app.registry) if with_background else None,
        fork=ForkPlanner(deps, worktrees, background_available=with_background) if fork_on else None,
        teams=teams,
        fork_type=FORK_AGENT_TYPE if compat.fork_by_type() else None,
        cap=RunningCap(compat.running_cap().value) if compat.overflow() == "refuse" else None,
    )
    if background is not None:
        resumer = AgentResumer(planner, transcripts, background, worktrees, app.tasks, session.ctx)
        messaging = AgentMessaging(background.records.names, app.tasks, live, foreground, background, resumer)
        interrupted = InterruptedAgents(app.tasks, resumer)
    system = SubagentSystem(runtime=runtime, live=live, background=background, messaging=messaging,
                            interrupted=interrupted, teams=teams, executor=executor)
    if compat.current:  # a child without Agent (at the nesting limit) is told so, as 2.1.332 tells it
        session.config.missing_tool_hints.setdefault(
            "Agent", "Agent is not among the tools available here. Continue with the tools you have.")
    session.ctx.services.teams = teams
    session.ctx.services.subagents = runtime
    session.ctx.services.session = session
    session.ctx.services.messaging = messaging
    if background is not None:
        session.ctx.services.output_review = DeferredReview(app.tasks, concluder)
    app.services.subagents = system
    _offer_tools(app, fork_on, offer_send_message=messaging is not None and (
        agent_teams_enabled(env) or send_message_enabled(settings, env) or compat.messaging()),
        offer_teams=teams is not None, remote_executor=remote_executor,
        offer_list_agents=messaging is not None and compat.messaging())
    return system


def _offer_tools(
    app: AgentApp, fork_on: bool, *, offer_send_message: bool, offer_teams: bool = False,
    remote_executor: bool = False, offer_list_agents: bool = False,
) -> None:
    """Add the Agent tool (SendMessage, TeamCreate, TeamDelete when offered) to the main session, sorted by name."""
    session = app.session
    tools = list(session.tools)
    compat = app.services.compat
    if not any(t.name == AgentTool.name for t in tools):
        tool_class = CurrentAgentTool if compat.current else AgentTool
        agent_tool = tool_class(app.registry, env=dict(app.services.env),
                                permissions=lambda: session.ctx.permissions, fork_enabled=fork_on, compat=compat)
        agent_tool.remote_executor = remote_executor
        tools.append(agent_tool)
    if offer_send_message and not any(t.name == SendMessageTool.name for t in tools):
        tools.append(CurrentSendMessageTool() if compat.current else SendMessageTool())
    if offer_list_agents and not any(t.name == ListAgentsTool.name for t in tools):
        tools.append(ListAgentsTool())
    if offer_teams:
        present = {t.name for t in tools}
        tools.extend(t for t in (TeamCreateTool(), TeamDeleteTool()) if t.name not in present)
    session.set_tools(sorted(tools, key=lambda t: t.name))
