"""Wiring the sub-agent system into an application: every collaborator built once and passed in.

``catui.app.build_app`` calls :func:`install_subagents` once the main session
exists. The pieces, each in its own module: the planner (:mod:`.plan`) and the
fork strategy (:mod:`.fork`), the one child builder (:mod:`.child_session`),
the executor (:mod:`.executors`), the foreground driver (:mod:`.foreground`),
background agents (:mod:`.background`), resume (:mod:`.resume`) and what
SendMessage reaches (:mod:`.messaging`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from catui.config.flags import (
    agent_teams_enabled,
    auto_background_ms,
    background_tasks_disabled,
    send_message_enabled,
    team_shutdown_grace_s,
)
from catui.paths import catui_home, sessions_dir
from catui.subagents.agent_tool import AgentTool, CurrentAgentTool
from catui.subagents.executors.choice import executor_name
from catui.subagents.parent_notices import ParentNotices
from catui.subagents.progress_summary import summary_settings
from catui.telemetry.events import Telemetry

if TYPE_CHECKING:
    from catui.app import AgentApp
    from catui.subagents.background import BackgroundAgents
    from catui.subagents.deferred_review import DeferredReview
    from catui.subagents.executors import AgentExecutor
    from catui.subagents.interrupted import InterruptedAgents
    from catui.subagents.live import LiveAgents
    from catui.subagents.messaging import AgentMessaging
    from catui.subagents.runtime import SubagentRuntime
    from catui.subagents.teams.coordinator import TeamCoordinator
    from catui.tools.services import OutputReviewer, SubagentSpawner


@dataclass
class SubagentParts:
    """The sub-agent runtime's parts, as :func:`install_subagents` builds them."""

    runtime: SubagentRuntime
    live: LiveAgents
    background: BackgroundAgents | None = None
    messaging: AgentMessaging | None = None
    interrupted: InterruptedAgents | None = None
    executor: AgentExecutor | None = None
    review: DeferredReview | None = None


class SubagentSystem:
    """The installed parts an application (and its front ends) may reach.

    Built on first use (``catui.lazy``): most runs never start a sub-agent, and the runtime's modules
    (executor, background agents, planner, resume, messaging) cost every run their import. Reading any
    part below builds them all; :attr:`built` says whether that happened. ``teams`` is there from the start
    (a team needs the runtime built).
    """

    def __init__(self, build: Callable[[], SubagentParts], *, has_background: bool,
                 teams: TeamCoordinator | None = None) -> None:
        self._build: Callable[[], SubagentParts] | None = build
        self._parts: SubagentParts | None = None
        self.has_background = has_background
        """Whether background agents are on (``background``, ``messaging`` and ``interrupted`` exist)."""
        self.teams = teams
        self.on_built: list[Callable[[], None]] = []
        """Called once the parts are built (the CLI freezes the collector's view of them)."""

    @property
    def built(self) -> bool:
        return self._parts is not None

    def parts(self) -> SubagentParts:
        """The parts, built now if they were not yet."""
        if self._parts is None:
            assert self._build is not None
            self._parts, self._build = self._build(), None
            for hook in self.on_built:
                hook()
        return self._parts

    @property
    def runtime(self) -> SubagentRuntime:
        return self.parts().runtime

    @property
    def live(self) -> LiveAgents:
        return self.parts().live

    @property
    def background(self) -> BackgroundAgents | None:
        return self.parts().background

    @property
    def messaging(self) -> AgentMessaging | None:
        return self.parts().messaging

    @property
    def interrupted(self) -> InterruptedAgents | None:
        return self.parts().interrupted

    @property
    def executor(self) -> AgentExecutor | None:
        return self.parts().executor

    async def aclose(self) -> None:
        """Release the executor's own resources (after background work has stopped); nothing if never built."""
        if self._parts is not None and self._parts.executor is not None:
            await self._parts.executor.aclose()


class _DeferredPart:
    """Stands for one part of a :class:`SubagentSystem` in ``ToolServices`` until it is built: the first
    attribute read builds the system (which then puts the real part in its place)."""

    def __init__(self, system: SubagentSystem, part: str) -> None:
        self._system = system
        self._part = part

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._system.parts(), self._part), name)


def install_subagents(app: AgentApp, executor: AgentExecutor | None = None) -> SubagentSystem:
    """Set up the sub-agent runtime for ``app`` and give its main session the Agent tool (and SendMessage).

    ``executor`` decides where children run; by default the one the options, ``CATUI_EXECUTOR`` or the
    ``executor`` setting name (:mod:`.executors.choice`; in this process unless told). Background agents are
    built unless they are disabled or the app has no task registry. The settings are checked now; the
    runtime itself is built when first used (:class:`SubagentSystem`), or now when an executor is given,
    one other than in-process is chosen, or agent teams are on.
    """
    session = app.session
    settings = app.settings.merged
    env = dict(app.services.env)
    # The profile answers from the app's environment and settings (an app built by hand sets only those).
    compat = app.services.compat = replace(app.services.compat, env=env, settings=settings)
    # Everything a setting can get wrong is read now, so that a mistake stops the run at its start.
    chosen = executor_name(app.options.executor, settings, env)
    remote_executor = executor is None and chosen == "ray"
    telemetry = Telemetry.from_settings(settings, env)
    max_spawn_depth = compat.max_spawn_depth()
    with_background = not background_tasks_disabled(env) and app.tasks is not None
    fork_on = compat.fork_enabled()
    with_teams = agent_teams_enabled(env) and with_background and compat.teams_tools()
    notices: ParentNotices | None = None
    summaries = None
    cap = None
    handover_ms = 0
    if with_background:
        app.tasks.session_id = app.tasks.session_id or session.session_id
        notices = ParentNotices(session, app.tasks)  # background shell commands report through it too
        notices.connect()
        summaries = summary_settings(settings, env)
        cap = compat.running_cap()
        if cap.warning is not None:
            app.services.startup_warnings.append(cap.warning)
        handover_ms = auto_background_ms(env, settings)
    holder: list[SubagentSystem] = []

    def build() -> SubagentParts:
        # lazy (catui.lazy): the runtime's modules load with the first use of a sub-agent
        from catui.subagents.background import BackgroundAgents
        from catui.subagents.background_tasks import AgentTaskRecords
        from catui.subagents.child_session import ChildTranscripts
        from catui.subagents.deferred_review import DeferredReview
        from catui.subagents.deps import RuntimeDeps, SpawnCaches
        from catui.subagents.executors.choice import build_executor
        from catui.subagents.foreground import ForegroundDriver
        from catui.subagents.interrupted import InterruptedAgents
        from catui.subagents.live import LiveAgents
        from catui.subagents.messaging import AgentMessaging
        from catui.subagents.names import AgentNames
        from catui.subagents.outcome import RunConcluder
        from catui.subagents.plan import ChildPlanner
        from catui.subagents.progress_summary import ProgressSummaries
        from catui.subagents.resume import AgentResumer
        from catui.subagents.runtime import SubagentRuntime
        from catui.subagents.team_rules import TeamRules
        from catui.subagents.worktrees import WorktreeLeases

        write_transcripts = session.config.transcript is not None
        deps = RuntimeDeps(
            registry=app.registry,
            settings=settings,
            env=env,
            project_root=Path(app.project_root),
            sessions_dir=sessions_dir(Path(app.options.cwd).resolve()) if write_transcripts else None,
            parent_resolved=app.services.resolved_model,
            telemetry=telemetry,
            load_project_memory=bool(set(app.options.setting_sources) & {"user", "project"}),
            skills=app.services.skills,
            max_spawn_depth=max_spawn_depth,
            compat=compat,
        )
        worktrees = WorktreeLeases(deps.project_root, settings)
        runner = executor or build_executor(
            chosen, worktrees, settings=settings, env=env,
            parent_resolved=deps.parent_resolved, remote_foreground=app.options.remote_foreground,
        )
        concluder = RunConcluder(deps, worktrees)
        transcripts = ChildTranscripts(deps.sessions_dir)
        live = LiveAgents()
        background = messaging = None
        interrupted: InterruptedAgents | None = None
        if notices is not None and summaries is not None and cap is not None:
            names = AgentNames(session.session_id, open_state=lambda: app.tasks.state)  # no state.db until used
            background = BackgroundAgents(
                app.tasks, AgentTaskRecords(app.tasks, names), runner, concluder, live, notices,
                ProgressSummaries(summaries, deps),
                # Over the cap the current contract refuses (counted by the runtime); the queue never fills then.
                max_running=cap.value if compat.overflow() == "queue" else 1_000_000, compat=compat,
            )
        foreground = ForegroundDriver(runner, concluder, live, handover=background, auto_background_ms=handover_ms)
        planner = ChildPlanner(deps, SpawnCaches(deps), worktrees, background_available=with_background)
        fork = None
        fork_type = None
        if fork_on:
            # lazy (catui.lazy): forking is off unless turned on
            from catui.subagents.fork import FORK_AGENT_TYPE, ForkPlanner

            fork = ForkPlanner(deps, worktrees, background_available=with_background)
            fork_type = FORK_AGENT_TYPE if compat.fork_by_type() else None
        running_cap = None
        if compat.overflow() == "refuse":
            from catui.subagents.running_cap import RunningCap

            running_cap = RunningCap(compat.running_cap().value)
        teams = None
        if with_teams:
            # lazy (catui.lazy): agent teams load only when their flag turns them on
            from catui.subagents.teams.backend import InProcessTeammates
            from catui.subagents.teams.coordinator import TeamCoordinator
            from catui.subagents.teams.spawn import TeammatePlanner

            teams = TeamCoordinator(
                catui_home() / "teams", TeammatePlanner(planner, transcripts, deps.telemetry),
                InProcessTeammates(runner), session, grace_s=team_shutdown_grace_s(env),
            )
            holder[0].teams = teams
        runtime = SubagentRuntime(
            deps, planner, transcripts, foreground, launcher=background,
            gate=TeamRules(app.registry) if with_background else None, fork=fork, teams=teams,
            fork_type=fork_type, cap=running_cap,
        )
        review = None
        if background is not None:
            resumer = AgentResumer(planner, transcripts, background, worktrees, app.tasks, session.ctx)
            messaging = AgentMessaging(background.records.names, app.tasks, live, foreground, background, resumer)
            interrupted = InterruptedAgents(app.tasks, resumer)
            review = DeferredReview(app.tasks, concluder)
        services = session.ctx.services  # the real parts take the stand-ins' places
        services.teams = teams
        services.subagents = runtime
        services.messaging = messaging
        services.output_review = review
        return SubagentParts(runtime=runtime, live=live, background=background, messaging=messaging,
                             interrupted=interrupted, executor=runner, review=review)

    system = SubagentSystem(build, has_background=with_background)
    holder.append(system)
    session.ctx.services.session = session
    session.ctx.services.subagents = cast("SubagentSpawner", _DeferredPart(system, "runtime"))
    if with_background:
        session.ctx.services.messaging = cast("AgentMessaging", _DeferredPart(system, "messaging"))
        session.ctx.services.output_review = cast("OutputReviewer", _DeferredPart(system, "review"))
    if executor is not None or chosen != "in-process" or with_teams:
        system.parts()
    app.services.subagents = system
    if compat.current:  # a child without Agent (at the nesting limit) is told so, as 2.1.332 tells it
        session.config.missing_tool_hints.setdefault(
            "Agent", "Agent is not among the tools available here. Continue with the tools you have.")
    _offer_tools(app, fork_on, offer_send_message=with_background and (
        agent_teams_enabled(env) or send_message_enabled(settings, env) or compat.messaging()),
        offer_teams=system.teams is not None, remote_executor=remote_executor,
        offer_list_agents=with_background and compat.messaging())
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
    if offer_send_message:
        from catui.subagents.send_message import SendMessageTool  # lazy (catui.lazy): off by default

        if not any(t.name == SendMessageTool.name for t in tools):
            if compat.current:
                from catui.subagents.messaging_current import CurrentSendMessageTool

                tools.append(CurrentSendMessageTool())
            else:
                tools.append(SendMessageTool())
    if offer_list_agents:
        from catui.subagents.messaging_current import ListAgentsTool  # lazy (catui.lazy): off by default

        if not any(t.name == ListAgentsTool.name for t in tools):
            tools.append(ListAgentsTool())
    if offer_teams:
        from catui.subagents.teams.tools import TeamCreateTool, TeamDeleteTool  # lazy (catui.lazy): teams

        present = {t.name for t in tools}
        tools.extend(t for t in (TeamCreateTool(), TeamDeleteTool()) if t.name not in present)
    session.set_tools(sorted(tools, key=lambda t: t.name))
