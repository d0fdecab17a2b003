"""The sub-agent runtime: one Agent call from its arguments to its tool_result (spec 6.1, 8.1).

:meth:`SubagentRuntime.spawn` is what the Agent tool calls (through the
:class:`~catui.tools.base.SubagentSpawner` protocol). It checks the call
against the spawn gate (the team rules), sends ``team_name`` + ``name`` calls down the team path, has the child planned (by the fork
strategy when ``subagent_type`` is left out and forking is on, else by the
:class:`~catui.subagents.plan.ChildPlanner`), builds its session with the one
child builder, and hands the run to the background launcher or to the
foreground driver. Every collaborator is given to the constructor
(:func:`catui.subagents.install.install_subagents` wires them).

Whatever goes wrong inside a child comes back as that Agent call's error
tool_result; siblings and the parent carry on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from catui.errors import CatuiError
from catui.subagents.child_session import ChildTranscripts, build_child_session
from catui.subagents.deps import RuntimeDeps
from catui.subagents.foreground import ForegroundDriver
from catui.subagents.names import AgentNames
from catui.subagents.plan import ChildPlan, ChildPlanner, parent_session
from catui.subagents.resolve import AgentSpawnError
from catui.subagents.run import SpawnRequest, SubagentRun
from catui.subagents.running_cap import RunningCap, cap_refusal
from catui.subagents.stats import SubagentStats
from catui.tools.base import ToolContext, ToolResult

SpawnGate = Callable[[SpawnRequest, ToolContext], "ToolResult | None"]
"""Checks a call before anything is prepared (the teams rules); a ToolResult refuses the call."""


class BackgroundLauncher(Protocol):
    """Starts a prepared run in the background; returns the parent's immediate ("launched") result."""

    def launch(self, run: SubagentRun) -> ToolResult: ...


class ForkStrategy(Protocol):
    """Plans the child of an Agent call that leaves out ``subagent_type`` (fork mode)."""

    async def plan_fork(self, request: SpawnRequest, parent_ctx: ToolContext) -> ChildPlan:
        """The worker's plan. Raises AgentSpawnError with the exact tool_result text."""
        ...


class TeamSpawner(Protocol):
    """Starts teammates (``catui.subagents.teams.coordinator.TeamCoordinator``): spec 6.1 [4]."""

    def wants_teammate(self, request: SpawnRequest, parent_ctx: ToolContext) -> bool:
        """Whether this call starts a teammate (a ``name``, and a team named or current)."""
        ...

    async def spawn(self, request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult:
        """Start the teammate; its tool_result (or the error)."""
        ...


class SubagentRuntime:
    """Spawns sub-agents for the sessions whose ``ctx.services.subagents`` it is."""

    def __init__(
        self, deps: RuntimeDeps, planner: ChildPlanner, transcripts: ChildTranscripts, foreground: ForegroundDriver,
        *, launcher: BackgroundLauncher | None = None, gate: SpawnGate | None = None,
        fork: ForkStrategy | None = None, teams: TeamSpawner | None = None,
        fork_type: str | None = None, cap: RunningCap | None = None, names: AgentNames | None = None,
    ) -> None:
        self.deps = deps
        self.names = names
        """The background agents' names (TaskStop takes a name for an id); None without background agents."""
        self.planner = planner
        self.transcripts = transcripts
        self.foreground = foreground
        self.launcher = launcher
        self.gate = gate
        self.fork = fork
        self.teams = teams
        self.fork_type = fork_type
        """The ``subagent_type`` that forks (the current contract's ``"fork"``); None: an omitted type forks."""
        self.cap = cap
        self.stats = SubagentStats()
        """``subagent_stats`` of the result objects (catui.subagents.stats)."""
        """The current contract's running-agents cap (over it, a spawn is refused); None: no such cap."""

    async def spawn(self, request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult:
        """Run one Agent call to its tool_result (foreground) or hand it to the background launcher."""
        if self.gate is not None:
            refusal = self.gate(request, parent_ctx)
            if refusal is not None:
                return refusal
        if self.teams is not None and self.teams.wants_teammate(request, parent_ctx):
            return await self.teams.spawn(request, parent_ctx)  # spec 6.1 [4]: the team path
        cap = self.cap
        stats = self.stats
        stats.requested(request.requested)
        if cap is not None and not cap.take():
            stats.refused("concurrency_limit")
            return ToolResult(cap_refusal(cap.limit), is_error=True)
        handed_over = False
        try:
            try:
                run = await self.prepare(request, parent_ctx)
            except AgentSpawnError as exc:
                return ToolResult(str(exc), is_error=True)
            except CatuiError as exc:
                return ToolResult(f"Agent could not start: {exc}", is_error=True)
            run.current_contract = self.deps.compat.current
            background = run.is_async and self.launcher is not None
            stats.spawned(run.agent_type, depth=run.depth, background=background,
                          by_subagent=parent_ctx.agent_depth > 0)
            if background and self.launcher is not None:
                run.on_end.append(lambda: stats.ended(run.end_status or "completed"))
                if cap is not None:
                    run.on_end.append(cap.give_back)
                    handed_over = True
                return self.launcher.launch(run)
            run.is_async = False
            result = await self.foreground.run_to_completion(run)
            if not run.is_async:  # (one moved to the background reports its end there)
                stats.ended("stopped" if run.stop_requested else ("failed" if result.is_error else "completed"))
            return result
        finally:
            if cap is not None and not handed_over:
                cap.give_back()

    async def prepare(self, request: SpawnRequest, parent_ctx: ToolContext) -> SubagentRun:
        """Plan the child and build its session (nothing runs yet). Raises AgentSpawnError or CatuiError."""
        if self.fork is not None and request.subagent_type == self.fork_type:
            plan = await self.fork.plan_fork(request, parent_ctx)
        else:
            plan = await self.planner.plan_child(request, parent_ctx)
        try:
            return build_child_session(
                plan, parent_ctx, parent_session(parent_ctx), self.transcripts, self.deps
            )
        except BaseException:
            await plan.release(self.planner.worktrees)
            raise

    # -- the foreground, for TaskStop and front ends (SubagentSpawner) ------------------------------

    def running_in_foreground(self, agent_id: str) -> bool:
        return agent_id in self.foreground.running

    def live_agent_id(self, name: str) -> str | None:
        return self.names.live(name) if self.names is not None else None

    def foreground_ids(self) -> list[str]:
        return list(self.foreground.running)

    async def stop_foreground(self, agent_id: str) -> SubagentRun | None:
        """Stop a running foreground agent by id (TaskStop, ``CatuiClient.stop_task``); None if there is none."""
        return await self.foreground.stop(agent_id)

    async def background_all_foreground(self, tool_use_id: str | None = None) -> list[str]:
        """Move every running foreground agent to the background (Ctrl-B, the SDK; with ``tool_use_id`` only the
        one that Agent call started); returns their ids."""
        return await self.foreground.background_all(tool_use_id)
