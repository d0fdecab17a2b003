"""Wiring the sub-agent system into an application: every collaborator built once and passed in.

``catui.app.build.build_app`` calls :func:`install_subagents` with the parts it uses
(:class:`SubagentParts`) once the main session exists. The pieces, each in its own module: the planner
(:mod:`.plan`) and the fork strategy (:mod:`.fork`), the one child builder (:mod:`.child_session`),
the executor (:mod:`.executors`), the foreground driver (:mod:`.foreground`),
background agents (:mod:`.background`), resume (:mod:`.resume`) and what
SendMessage reaches (:mod:`.messaging`). The runtime itself is built on first use (:class:`SubagentSystem`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.config.compat import CompatProfile
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
    from catui.hooks.runner import HookRunner
    from catui.mcp.manager import McpManager
    from catui.models.resolve import ResolvedModel
    from catui.session.session import Session
    from catui.skills.registry import SkillRegistry
    from catui.subagents.background import BackgroundAgents
    from catui.subagents.deferred_review import DeferredReview
    from catui.subagents.executors import AgentExecutor
    from catui.subagents.interrupted import InterruptedAgents
    from catui.subagents.live import LiveAgents
    from catui.subagents.messaging import AgentMessages, AgentMessaging
    from catui.subagents.names import AgentNames
    from catui.subagents.run import SubagentRun
    from catui.subagents.runtime import SubagentRuntime
    from catui.subagents.teams.coordinator import TeamCoordinator
    from catui.tasks.registry import TaskRegistry
    from catui.tools.base import AgentCatalogue, ToolContext, ToolResult


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
    compat: CompatProfile = field(default_factory=CompatProfile)
    """The Claude Code contract the session follows (catui.config.compat); it answers from ``env`` and
    ``settings`` above."""


@dataclass
class BuiltSubagents:
    """The sub-agent runtime's parts, as :func:`install_subagents` builds them (on first use)."""

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

    def __init__(self, build: Callable[[], BuiltSubagents], *, has_background: bool,
                 teams: TeamCoordinator | None = None, parent_resolved: ResolvedModel | None = None,
                 mcp: McpManager | None = None) -> None:
        self._build: Callable[[], BuiltSubagents] | None = build
        self._parts: BuiltSubagents | None = None
        self.parent_resolved = parent_resolved
        """The main agent's model, which sub-agents with model ``inherit`` follow (read when the runtime is
        built; :meth:`follow_model` changes it)."""
        self.mcp = mcp
        """The session's MCP servers children are offered (read when the runtime is built; :meth:`follow_mcp`
        changes it)."""
        self.has_background = has_background
        """Whether background agents are on (``background``, ``messaging`` and ``interrupted`` exist)."""
        self.teams = teams
        self.on_built: list[Callable[[], None]] = []
        """Called once the parts are built (the CLI freezes the collector's view of them)."""

    @property
    def built(self) -> bool:
        return self._parts is not None

    def parts(self) -> BuiltSubagents:
        """The parts, built now if they were not yet."""
        if self._parts is None:
            assert self._build is not None
            self._parts, self._build = self._build(), None
            for hook in self.on_built:
                hook()
        return self._parts

    def follow_model(self, resolved: ResolvedModel | None) -> None:
        """The main agent switched models: sub-agents started from now on inherit ``resolved``."""
        self.parent_resolved = resolved
        if self._parts is not None:
            self._parts.runtime.deps.parent_resolved = resolved

    def follow_mcp(self, manager: McpManager) -> None:
        """The session's MCP servers are now ``manager``'s (the first ``setMcpServers`` of a session that started
        without any): sub-agents started from now on are offered their tools as they are the start's servers'.

        A Ray executor built before keeps shipping the servers it was given (none), so its children stay without.
        """
        self.mcp = manager
        if self._parts is not None:
            self._parts.runtime.deps.mcp = manager

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


class SubagentHandle:
    """The sub-agent system as the main agent's tools reach it (``ToolServices.subagents`` and
    ``.output_review``), passed in when the main context is built, before the system exists.

    The main session, its tools and the sub-agent runtime form a circle (the runtime needs the session, the
    session its context, the context this handle), so the handle takes ``system``: a callable that returns
    the installed :class:`SubagentSystem`. Each call asks it; the first call that needs the runtime builds
    it (``catui.lazy``). Nothing is assigned afterwards: the handle stays the same object throughout.
    """

    def __init__(self, system: Callable[[], SubagentSystem]) -> None:
        self._system = system

    @property
    def runtime(self) -> SubagentRuntime:
        """The runtime, built now if it was not yet."""
        return self._system().runtime

    def built_runtime(self) -> SubagentRuntime | None:
        """The runtime if something built it already; None before (no sub-agent can be running then)."""
        system = self._system()
        return system.runtime if system.built else None

    # -- SubagentSpawner (catui.tools.base) ------------------------------------------------------------

    async def spawn(self, request: Any, parent_ctx: ToolContext) -> ToolResult:
        return await self.runtime.spawn(request, parent_ctx)

    def running_in_foreground(self, agent_id: str) -> bool:
        return self.runtime.running_in_foreground(agent_id)

    def live_agent_id(self, name: str) -> str | None:
        return self.runtime.live_agent_id(name)

    def foreground_ids(self) -> list[str]:
        return self.runtime.foreground_ids()

    async def stop_foreground(self, agent_id: str) -> SubagentRun | None:
        return await self.runtime.stop_foreground(agent_id)

    async def background_all_foreground(self, tool_use_id: str | None = None) -> list[str]:
        return await self.runtime.background_all_foreground(tool_use_id)

    # -- OutputReviewer (catui.tools.base): only with background agents, whose output can be read ----------

    async def review_task(self, task_id: str, ctx: ToolContext) -> str | None:
        review = self._review()
        return await review.review_task(task_id, ctx) if review is not None else None

    async def review_file(self, path: Path, ctx: ToolContext) -> str | None:
        review = self._review()
        return await review.review_file(path, ctx) if review is not None else None

    def _review(self) -> DeferredReview | None:
        system = self._system()
        return system.parts().review if system.has_background else None


class MessagingHandle:
    """The system's :class:`AgentMessaging` as SendMessage is handed it at install, before the system is built:
    each call asks the system (the first builds it). Only made when background agents are on, so the messaging
    exists once built."""

    def __init__(self, system: SubagentSystem) -> None:
        self._system = system

    def _messaging(self) -> AgentMessaging:
        messaging = self._system.messaging
        assert messaging is not None, "messaging exists whenever background agents are on"
        return messaging

    @property
    def names(self) -> AgentNames:
        return self._messaging().names

    @property
    def tasks(self) -> TaskRegistry:
        return self._messaging().tasks

    def running_agent(self, agent_id: str) -> bool:
        return self._messaging().running_agent(agent_id)

    def queue_message(self, agent_id: str, text: str) -> None:
        self._messaging().queue_message(agent_id, text)

    def holds_finished(self, agent_id: str) -> bool:
        return self._messaging().holds_finished(agent_id)

    def resume(self, agent_id: str, text: str, *, tool_use_id: str | None = None) -> bool:
        return self._messaging().resume(agent_id, text, tool_use_id=tool_use_id)

    def saved_transcript(self, agent_id: str) -> Path | None:
        return self._messaging().saved_transcript(agent_id)

    async def resume_from_transcript(self, agent_id: str, text: str, transcript: Path) -> str | None:
        return await self._messaging().resume_from_transcript(agent_id, text, transcript)

    def known_agents(self) -> dict[str, str]:
        return self._messaging().known_agents()


def install_subagents(parts: SubagentParts, executor: AgentExecutor | None = None) -> SubagentSystem:
    """Set up the sub-agent runtime over ``parts`` and give the main session the Agent tool (and SendMessage).

    ``executor`` decides where children run; by default the one the options, ``CATUI_EXECUTOR`` or the
    ``executor`` setting name (:mod:`.executors.choice`; in this process unless told). Background agents are
    built unless they are disabled or there is no task registry. The settings are checked now; the
    runtime itself is built when first used (:class:`SubagentSystem`), or now when an executor is given,
    one other than in-process is chosen, or agent teams are on.
    """
    session = parts.session
    settings = parts.settings
    env = dict(parts.env)
    tasks = parts.tasks
    # The profile answers from these parts' environment and settings (parts built by hand set only those).
    compat = replace(parts.compat, env=env, settings=settings)
    # Everything a setting can get wrong is read now, so that a mistake stops the run at its start.
    chosen = executor_name(parts.executor, settings, env)
    remote_executor = executor is None and chosen == "ray"
    telemetry = Telemetry.from_settings(settings, env)
    max_spawn_depth = compat.max_spawn_depth()
    with_background = not background_tasks_disabled(env) and tasks is not None
    fork_on = compat.fork_enabled()
    with_teams = agent_teams_enabled(env) and with_background and compat.teams_tools()
    notices: ParentNotices | None = None
    summaries = None
    cap = None
    handover_ms = 0
    if tasks is not None and with_background:
        tasks.session_id = tasks.session_id or session.session_id
        notices = ParentNotices(session, tasks)  # background shell commands report through it too
        notices.connect()
        summaries = summary_settings(settings, env)
        cap = compat.running_cap()
        if cap.warning is not None:
            parts.warnings.append(cap.warning)
        handover_ms = auto_background_ms(env, settings)
    holder: list[SubagentSystem] = []

    def build() -> BuiltSubagents:
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
            registry=parts.registry,
            settings=settings,
            env=env,
            project_root=Path(parts.project_root),
            sessions_dir=sessions_dir(Path(parts.cwd).resolve()) if write_transcripts else None,
            parent_resolved=holder[0].parent_resolved,  # the model when built (a switch before it counts)
            telemetry=telemetry,
            load_project_memory=parts.load_project_memory,
            skills=parts.skills,
            max_spawn_depth=max_spawn_depth,
            hooks=parts.hooks,
            mcp=holder[0].mcp,  # the servers when built (a setMcpServers before it counts)
            compat=compat,
        )
        worktrees = WorktreeLeases(deps.project_root, settings, full_ids=compat.worktree_full_id())
        runner = executor or build_executor(
            chosen, worktrees, settings=settings, env=env, parent_resolved=deps.parent_resolved,
            remote_foreground=parts.remote_foreground, mcp=deps.mcp,
        )
        concluder = RunConcluder(deps, worktrees)
        transcripts = ChildTranscripts(deps.sessions_dir)
        live = LiveAgents()
        background = messaging = None
        interrupted: InterruptedAgents | None = None
        review = None
        if tasks is not None and notices is not None and summaries is not None and cap is not None:
            names = AgentNames(session.session_id, open_state=lambda: tasks.state)  # no state.db until used
            background = BackgroundAgents(
                tasks, AgentTaskRecords(tasks, names), runner, concluder, live, notices,
                ProgressSummaries(summaries, deps),
                # Over the cap the current contract refuses (counted by the runtime); the queue never fills then.
                max_running=cap.value if compat.overflow() == "queue" else 1_000_000, compat=compat,
            )
        foreground = ForegroundDriver(runner, concluder, live, handover=background, auto_background_ms=handover_ms)
        planner = ChildPlanner(deps, SpawnCaches(deps), worktrees, background_available=with_background)
        if tasks is not None and background is not None:
            resumer = AgentResumer(planner, transcripts, background, worktrees, tasks, session.ctx)
            messaging = AgentMessaging(background.records.names, tasks, live, foreground, background, resumer)
            interrupted = InterruptedAgents(tasks, resumer)
            review = DeferredReview(tasks, concluder)
        fork = None
        fork_type = None
        if fork_on:
            # lazy (catui.lazy): forking is off unless turned on
            from catui.subagents.fork import FORK_AGENT_TYPE, ForkPlanner

            fork = ForkPlanner(deps, worktrees, background_available=with_background)
            fork_type = FORK_AGENT_TYPE if compat.fork_by_type() else None
        running_cap = None
        if compat.overflow() == "refuse":
            from catui.subagents.running_cap import RunningCap  # lazy (catui.lazy): the current contract only

            running_cap = RunningCap(compat.running_cap().value)
        teams = None
        if with_teams:
            # lazy (catui.lazy): agent teams load only when their flag turns them on
            from catui.subagents.teams.backend import InProcessTeammates
            from catui.subagents.teams.coordinator import TeamCoordinator
            from catui.subagents.teams.spawn import TeammatePlanner

            teams = TeamCoordinator(
                catui_home() / "teams", TeammatePlanner(planner, transcripts, deps.telemetry),
                InProcessTeammates(runner), session, grace_s=team_shutdown_grace_s(env), messaging=messaging,
            )
            holder[0].teams = teams
        runtime = SubagentRuntime(
            deps, planner, transcripts, foreground, launcher=background,
            gate=TeamRules(parts.registry) if with_background else None, fork=fork, teams=teams,
            fork_type=fork_type, cap=running_cap, names=background.records.names if background is not None else None,
        )
        return BuiltSubagents(runtime=runtime, live=live, background=background, messaging=messaging,
                              interrupted=interrupted, executor=runner, review=review)

    system = SubagentSystem(build, has_background=with_background, parent_resolved=parts.resolved_model,
                            mcp=parts.mcp)
    holder.append(system)
    messaging = MessagingHandle(system) if with_background else None
    if executor is not None or chosen != "in-process" or with_teams:
        system.parts()
    if compat.current:  # a child without Agent (at the nesting limit) is told so, as 2.1.332 tells it
        session.config.missing_tool_hints.setdefault(
            "Agent", "Agent is not among the tools available here. Continue with the tools you have.")
    _offer_tools(
        session, parts.registry, env, compat, fork_on, system, messaging=messaging,
        offer_send_message=with_background and (
            agent_teams_enabled(env) or send_message_enabled(settings, env) or compat.messaging()),
        remote_executor=remote_executor, offer_list_agents=with_background and compat.messaging(),
    )
    return system


def _offer_tools(
    session: Session, registry: AgentCatalogue, env: Mapping[str, str], compat: CompatProfile, fork_on: bool,
    system: SubagentSystem, *, messaging: AgentMessages | None, offer_send_message: bool,
    remote_executor: bool = False, offer_list_agents: bool = False,
) -> None:
    """Add the Agent tool (SendMessage, ListAgents, TeamCreate, TeamDelete when offered) to the main session,
    sorted by name."""
    teams = system.teams
    tools = list(session.tools)
    if not any(t.name == AgentTool.name for t in tools):
        tool_class = CurrentAgentTool if compat.current else AgentTool
        agent_tool = tool_class(registry, env=dict(env), permissions=lambda: session.ctx.permissions,
                                fork_enabled=fork_on, compat=compat)
        agent_tool.remote_executor = remote_executor
        tools.append(agent_tool)
    if offer_send_message:
        from catui.subagents.send_message import SendMessageTool  # lazy (catui.lazy): off by default

        if not any(t.name == SendMessageTool.name for t in tools):
            if compat.current:
                from catui.subagents.messaging_current import CurrentSendMessageTool

                tools.append(CurrentSendMessageTool(messaging))
            else:
                tools.append(SendMessageTool(messaging, teams))
    if offer_list_agents:
        from catui.subagents.messaging_current import ListAgentsTool  # lazy (catui.lazy): off by default

        if not any(t.name == ListAgentsTool.name for t in tools):
            tools.append(ListAgentsTool(
                lambda: system.runtime.foreground.running.values() if system.built else ()))
    if teams is not None:
        from catui.subagents.teams.tools import TeamCreateTool, TeamDeleteTool  # lazy (catui.lazy): teams

        present = {t.name for t in tools}
        tools.extend(t for t in (TeamCreateTool(teams), TeamDeleteTool(teams)) if t.name not in present)
    session.set_tools(sorted(tools, key=lambda t: t.name))
