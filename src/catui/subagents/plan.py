"""Planning a child (spec 6.1 steps 5-11): everything decided before its session is built.

:meth:`ChildPlanner.plan_child` resolves the definition, the model, the
permissions, the tools, the folder (and its worktree lease), the system prompt
and the first message into a :class:`ChildPlan`. Fork children get their plan
from :mod:`catui.subagents.fork`; both go through
:func:`catui.subagents.child_session.build_child_session`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.config.flags import background_tasks_disabled
from catui.errors import CatuiError
from catui.messages import Block, Message
from catui.models.base import ModelProvider
from catui.models.reasoning import effort_level
from catui.models.resolve import default_max_tokens
from catui.permissions.context import PermissionContext
from catui.permissions.subagent_limits import cap_mode
from catui.session.prompt import context_block
from catui.session.session import Session
from catui.subagents.deps import RuntimeDeps, SpawnCaches
from catui.subagents.ids import new_agent_id
from catui.subagents.memory_tools import grant_memory_tools
from catui.subagents.models import ChildModel, resolve_child_model
from catui.subagents.nesting import may_spawn, refusal_for, tools_never_given
from catui.subagents.prompt import (
    build_first_message,
    build_subagent_system_prompt,
    load_agent_memory,
    memory_dir,
)
from catui.subagents.question_relay import ASK_USER_QUESTION, asks_the_user
from catui.subagents.resolve import DEFAULT_AGENT_TYPE, AgentSpawnError, find_agent, resolve_agent_type
from catui.subagents.run import SpawnRequest
from catui.subagents.structured_output import (
    STRUCTURED_OUTPUT_TOOL,
    StructuredOutputTool,
    output_instructions,
)
from catui.subagents.tool_filter import NoToolsLeftError, ToolFilterMemo
from catui.subagents.worktrees import WorktreeLeases
from catui.telemetry.events import AGENT_MEMORY_LOADED
from catui.tools.ask_user_question import AskUserQuestionTool
from catui.tools.base import TeamMembership, Tool, ToolContext
from catui.worktree.guard import ensure_inside, validate_agent_cwd, worktrees_root

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager
    from catui.mcp.subagents import ChildMcpServers
    from catui.worktree.model import WorktreeInfo


@dataclass
class ChildPlan:
    """A child, fully decided: who it is, how it talks to the model, what it may touch, what it is told."""

    agent_id: str
    definition: AgentDefinition
    request: SpawnRequest
    model: ChildModel
    provider: ModelProvider
    permissions: PermissionContext
    tools: list[Tool]
    cwd: Path
    project_root: Path
    system_prompt: list[Block]
    first_message: Message
    max_tokens: int
    query_source: str
    is_async: bool
    temperature: float | None = 1
    thinking: dict[str, object] | None = None
    effort: str | None = None
    """The wire effort level: the definition's own, else the parent's (catui.models.reasoning)."""
    inherited: list[Message] = field(default_factory=list)
    """Messages the child starts with (a fork's copy of its parent's conversation)."""
    worktree: WorktreeInfo | None = None
    mcp_servers: ChildMcpServers | None = None
    is_fork: bool = False
    depth: int = 1
    """The child's nesting depth (its parent's plus one; the main agent is 0)."""
    team: TeamMembership | None = None
    """Set for a teammate: the team it joins (its context's ``team``)."""

    async def release(self, worktrees: WorktreeLeases) -> None:
        """Give back what the plan holds (its own MCP connections, a worktree it created) when no run follows."""
        if self.mcp_servers is not None:
            with contextlib.suppress(Exception):
                await self.mcp_servers.aclose()
        await worktrees.discard(self.worktree)


def parent_session(ctx: ToolContext) -> Session:
    """The session that made the Agent call. Raises AgentSpawnError when the context has none."""
    session = ctx.session
    if not isinstance(session, Session):
        raise AgentSpawnError("Sub-agents need a running session; none was found in this tool context.")
    return session


def wants_background(request: SpawnRequest, definition: AgentDefinition, deps: RuntimeDeps, can: bool) -> bool:
    """Whether the child starts in the background: asked by the call or the definition, and possible here."""
    asked = bool(request.run_in_background or definition.background)
    return asked and can and not background_tasks_disabled(deps.env)


class ChildPlanner:
    """Makes the :class:`ChildPlan` of an ordinary (non-fork) Agent call."""

    def __init__(
        self, deps: RuntimeDeps, caches: SpawnCaches, worktrees: WorktreeLeases, *, background_available: bool
    ) -> None:
        self.deps = deps
        self.caches = caches
        self.worktrees = worktrees
        self.background_available = background_available
        self._tool_filter = ToolFilterMemo()

    async def plan_child(
        self, request: SpawnRequest, parent_ctx: ToolContext, *, agent_id: str | None = None,
        worktree: WorktreeInfo | None = None,
    ) -> ChildPlan:
        """Decide everything about the child. Raises AgentSpawnError (or CatuiError from the models layer).

        ``agent_id`` keeps an existing agent's id (one resumed from its transcript); else a new one.
        ``worktree`` is a worktree the agent continues in (one it kept): none is made, and it is settled
        again when the run ends.
        """
        deps = self.deps
        parent = parent_session(parent_ctx)
        deps.registry.reload_if_changed()
        self._check_nesting(request, parent_ctx)
        definition = resolve_agent_type(deps.registry, request.subagent_type, parent_ctx.permissions)
        if request.output_schema is not None:
            definition = definition.model_copy(update={"output_schema": request.output_schema})
        if request.shown_type is not None:
            definition = definition.model_copy(update={"agent_type": request.shown_type})
        mcp = deps.mcp
        await _check_mcp_requirements(definition, parent.tools, mcp)
        model = resolve_child_model(
            definition.model, request.model, parent_model_id=parent.config.model,
            parent_resolved=deps.parent_resolved, settings=deps.settings, env=deps.env,
        )
        provider = self.caches.provider(model.resolved) if model.resolved is not None else parent.config.provider
        permissions = _child_permissions(parent_ctx.permissions, definition, request)
        pool = _tool_pool(parent.tools, mcp)
        if asks_the_user(definition) and not any(t.name == ASK_USER_QUESTION for t in pool):
            # Listed on purpose: offered even where the parent has no terminal (the answer is relayed or refused).
            pool = sorted([*pool, AskUserQuestionTool()], key=lambda tool: tool.name)
        try:
            depth = parent_ctx.agent_depth + 1
            never = tools_never_given(definition, depth, deps.max_spawn_depth,
                                      by_default=deps.compat.nesting_by_default(),
                                      child_messaging=deps.compat.current) | request.withheld_tools
            tools = self._tool_filter.filter(definition, pool, permissions, never=never)
        except NoToolsLeftError as exc:
            raise AgentSpawnError(str(exc)) from None
        tools, permissions = grant_memory_tools(
            definition, tools, pool, permissions, memory_dir(definition, parent_ctx.project_root)
        )
        agent_id = agent_id or new_agent_id()
        isolation = None if worktree is not None else (request.isolation or definition.isolation)
        # `cwd` comes from the call (SDK) or the definition; either way it excludes isolation.
        cwd_override = _validate_cwd(request.cwd or definition.cwd, isolation)
        if cwd_override is not None and not request.cwd:
            _check_project_cwd(definition, parent_ctx.project_root)
        child_mcp = None
        if definition.mcp_servers:
            from catui.mcp.subagents import child_mcp_tools  # lazy (catui.lazy): MCP

            child_mcp = await child_mcp_tools(mcp, definition)
        if child_mcp is not None:
            # The agent's own servers' tools join after the filtering, as in Claude Code.
            present = {t.name for t in tools}
            tools = [*tools, *(t for t in child_mcp.tools if t.name not in present)]
        if definition.output_schema is not None:
            # Typed results: the child hands its answer back through this tool (one instance per run).
            tools = [*(t for t in tools if t.name != STRUCTURED_OUTPUT_TOOL), StructuredOutputTool(definition.output_schema)]
        created = None
        try:
            if isolation == "worktree":
                worktree = created = await self.worktrees.create(agent_id, parent.session_id)
            return self._settle_folder_and_prompt(
                request, parent_ctx, definition, model, provider, permissions, tools, agent_id, worktree,
                cwd_override, child_mcp,
            )
        except BaseException:
            if child_mcp is not None:
                with contextlib.suppress(Exception):
                    await child_mcp.aclose()
            await self.worktrees.discard(created)
            raise

    def _check_nesting(self, request: SpawnRequest, parent_ctx: ToolContext) -> None:
        """A nested parent (a sub-agent) may start only what its definition and the depth cap allow."""
        if parent_ctx.agent_depth < 1 or parent_ctx.agent_type is None:
            return
        parent_definition = find_agent(self.deps.registry, parent_ctx.agent_type)
        if parent_definition is None:  # a fork worker: its own rules apply (catui.subagents.fork)
            return
        if not may_spawn(parent_definition, parent_ctx.agent_depth, self.deps.max_spawn_depth,
                         by_default=self.deps.compat.nesting_by_default()):
            raise AgentSpawnError(
                f"Sub-agents at depth {parent_ctx.agent_depth} may not start agents: the nesting cap "
                f"(maxSubagentSpawnDepth / CATUI_MAX_SUBAGENT_SPAWN_DEPTH) is {self.deps.max_spawn_depth}."
            )
        refusal = refusal_for(parent_definition, request.subagent_type, DEFAULT_AGENT_TYPE)
        if refusal is not None:
            raise AgentSpawnError(refusal)

    def _settle_folder_and_prompt(
        self, request: SpawnRequest, parent_ctx: ToolContext, definition: AgentDefinition, model: ChildModel,
        provider: ModelProvider, permissions: PermissionContext, tools: list[Tool], agent_id: str,
        worktree: WorktreeInfo | None, cwd_override: Path | None, child_mcp: ChildMcpServers | None,
    ) -> ChildPlan:
        confined: Path | None = Path(worktree.path) if worktree is not None else None
        if cwd_override is not None and ensure_inside(cwd_override, worktrees_root(parent_ctx.project_root)):
            confined = cwd_override  # an agent resumed in the worktree it kept stays confined to it
        cwd = Path(confined or cwd_override or parent_ctx.cwd)
        root = Path(confined or parent_ctx.project_root)
        if confined is not None:
            permissions = confine_to(permissions, confined, parent_ctx.project_root, worktree)
        elif cwd_override is not None:
            permissions = permissions.with_working_directories(cwd_override, *permissions.working_directories)
        return ChildPlan(
            agent_id=agent_id, definition=definition, request=request, model=model, provider=provider,
            permissions=permissions, tools=tools, cwd=cwd, project_root=root,
            system_prompt=self._system_prompt(definition, model, tools, cwd, cwd_override, parent_ctx.project_root),
            first_message=self._first_message(definition, request, cwd, root),
            max_tokens=default_max_tokens(model.model_id),
            query_source=f"agent:{definition.agent_type}",
            is_async=wants_background(request, definition, self.deps, self.background_available),
            worktree=worktree, mcp_servers=child_mcp, depth=parent_ctx.agent_depth + 1,
            effort=effort_level(definition.effort) if definition.effort is not None
            else request.effort or parent_session(parent_ctx).config.effort,
        )

    def _system_prompt(
        self, definition: AgentDefinition, model: ChildModel, tools: list[Tool], cwd: Path,
        cwd_override: Path | None, project_root: Path,
    ) -> list[Block]:
        memory = load_agent_memory(definition, project_root) if definition.memory else None
        if memory is not None and self.deps.telemetry is not None:
            self.deps.telemetry.record(AGENT_MEMORY_LOADED, {"scope": definition.memory, "source": "subagent"})
        blocks = build_subagent_system_prompt(
            definition,
            environment=self.caches.environment(cwd, model.model_id),
            git_status=None if definition.omit_claude_md else self.caches.git_snapshot(cwd),
            working_dirs=[cwd_override] if cwd_override is not None else [],
            memory=memory,
            prompt_context=SystemPromptContext(
                active_agents=list(self.deps.registry.active), tool_names=[t.name for t in tools],
            ),
        )
        if definition.output_schema is not None:
            blocks = [*blocks, output_instructions(definition.output_schema)]
        return blocks

    def _first_message(self, definition: AgentDefinition, request: SpawnRequest, cwd: Path, root: Path) -> Message:
        wants_memory = self.deps.load_project_memory and not definition.omit_claude_md
        project_memory = self.caches.project_memory(cwd, root) if wants_memory else None
        from catui.skills.preload import preload_skills  # lazy (catui.lazy): skills

        preloaded = preload_skills(definition.skills or [], self.deps.skills)
        return build_first_message(request.prompt, context_block(project_memory), preloaded.blocks)


def confine_to(
    permissions: PermissionContext, folder: Path, project_root: Path, worktree: WorktreeInfo | None
) -> PermissionContext:
    """``permissions`` with ``folder`` (a worktree) in place of the main checkout's folders.

    Folders of the main checkout (the parent's cwd may be one of its sub-folders) would let the child
    write there, past its worktree; folders outside the checkout stay.
    """
    git_root = getattr(worktree, "git_root", None)
    main_roots = [project_root, *([Path(git_root)] if git_root else [])]
    others = [d for d in permissions.working_directories if not any(ensure_inside(d, r) for r in main_roots)]
    return permissions.with_working_directories(folder, *others).isolated_in(folder)


async def _check_mcp_requirements(
    definition: AgentDefinition, parent_tools: list[Tool], mcp: McpManager | None
) -> None:
    """Spec 6.1 [6]: wait up to 30 s for required MCP servers still connecting, then refuse when one is missing."""
    required = definition.required_mcp_servers or []
    if not required:
        return
    if mcp is None:  # no configured servers: only the SDK's in-process servers can satisfy it
        _check_in_process_servers(definition, required, parent_tools)
        return
    from catui.mcp.subagents import check_required_servers  # lazy (catui.lazy): MCP

    error = await check_required_servers(
        mcp, required, agent_type=definition.agent_type, tool_names=[t.name for t in parent_tools]
    )
    if error is not None:
        raise AgentSpawnError(error)


def _check_in_process_servers(definition: AgentDefinition, required: list[str], parent_tools: list[Tool]) -> None:
    names = [t.name for t in parent_tools]
    missing = [s for s in required if not any(n.startswith(f"mcp__{s}__") for n in names)]
    if missing:
        raise AgentSpawnError(
            f"Agent type '{definition.agent_type}' needs the MCP server(s) {', '.join(missing)}, which are not "
            "connected in this session. Configure them in the MCP settings (or check that they start), then try "
            "again; or use another agent type."
        )


def _tool_pool(parent_tools: list[Tool], mcp: McpManager | None) -> list[Tool]:
    """The tools a child chooses from: the parent's, plus those of MCP servers that connected later."""
    if mcp is None:
        return parent_tools
    from catui.mcp.subagents import mcp_tool_pool  # lazy (catui.lazy): MCP

    return mcp_tool_pool(mcp, parent_tools)


def _child_permissions(
    parent: PermissionContext, definition: AgentDefinition, request: SpawnRequest
) -> PermissionContext:
    """The parent's rules and folders with the definition's mode (else the call's, else the parent's), capped."""
    requested = definition.permission_mode or request.mode
    return parent.with_mode(cap_mode(parent.mode, requested))  # type: ignore[arg-type]


def _check_project_cwd(definition: AgentDefinition, project_root: Path) -> None:
    """Re-check at spawn time (a link may have changed since loading) that a project agent stays in the project."""
    from catui.agents.project_limits import cwd_refusal, outside_project

    if definition.source != "projectSettings" or definition.cwd is None:
        return
    if outside_project(definition.cwd, project_root):
        where = str(Path(definition.base_dir) / f"{definition.filename}.md") if definition.filename else definition.agent_type
        raise AgentSpawnError(cwd_refusal(definition.cwd, project_root, where).replace("is ignored", "is refused"))


def _validate_cwd(cwd: str | None, isolation: str | None) -> Path | None:
    if cwd is None:
        return None
    try:
        return validate_agent_cwd(cwd, isolation)
    except CatuiError as exc:
        raise AgentSpawnError(str(exc)) from None
