"""The sub-agent runtime: one spawn, step by step (spec 6.1, 8.1).

:meth:`SubagentRuntime.spawn` is what the Agent tool calls. It resolves the
definition, the model, the tools, the permission context, the system prompt
and first message, creates the worktree when asked, and builds a
:class:`SubagentRun` (the child :class:`~catui.session.session.Session` with
its metadata). A run is then either driven to completion in the foreground
(:meth:`SubagentRuntime.run_to_completion`) or handed to the background
launcher (``runtime.background_launcher``, installed by the background-task
layer), which drives ``run.events()`` itself and calls
:meth:`SubagentRuntime.finish` for the result.

Whatever goes wrong inside a child comes back as that Agent call's error
tool_result; siblings and the parent carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.errors import CatuiError
from catui.messages import Message, blocks_of
from catui.session.events import AssistantMessageEvent, Event, ResultEvent, SystemEvent, UsageEvent
from catui.session.session import Session, SessionConfig
from catui.session.transcript import TranscriptWriter
from catui.session.usage import total_tokens
from catui.subagents.ids import new_agent_id
from catui.subagents.json_file import write_json_atomic
from catui.subagents.models import ChildModel, resolve_child_model
from catui.subagents.prompt import build_first_message, build_subagent_system_prompt, load_agent_memory
from catui.subagents.resolve import AgentSpawnError, resolve_agent_type
from catui.subagents.result import (
    ONE_SHOT_AGENT_TYPES,
    AgentResult,
    NoAssistantMessagesError,
    extract_agent_result,
    format_agent_tool_result,
)
from catui.subagents.tool_filter import NoToolsLeftError, filter_tools_for_agent
from catui.telemetry.events import AGENT_MEMORY_LOADED, AGENT_TOOL_COMPLETED, AGENT_TOOL_SELECTED, Telemetry
from catui.telemetry.spans import agent_span, set_span_attributes
from catui.tools.base import ToolContext, ToolResult

BackgroundLauncher = Callable[["SubagentRun", ToolContext], Awaitable[ToolResult]]
"""Takes a prepared run and the parent's context, starts it in the background, returns the immediate result."""

ForkHandler = Callable[["SpawnRequest", ToolContext], Awaitable[ToolResult]]
"""The fork path (an omitted subagent_type with the fork setting on); installed by a later layer."""

SpawnGate = Callable[["SpawnRequest", ToolContext], "ToolResult | None"]
"""Checks a call before anything is prepared (the teams rules); a ToolResult refuses the call."""


class ForegroundHook(Protocol):
    """How the background layer makes foreground runs movable (auto-background, Ctrl-B).

    ``events(run)`` stands in for ``run.events()`` while the parent waits;
    when it stops early because the run moved to the background, ``moved(run)``
    returns the parent's immediate result (``None`` for a run that did not
    move). ``background_all()`` moves every running foreground run.
    """

    def events(self, run: SubagentRun) -> AsyncIterator[Event]: ...

    async def moved(self, run: SubagentRun) -> ToolResult | None: ...

    async def background_all(self) -> list[str]: ...


@dataclass
class SpawnRequest:
    """One Agent call's arguments, plus the id of the tool_use that made it."""

    description: str
    prompt: str
    subagent_type: str | None = None
    model: str | None = None
    run_in_background: bool = False
    name: str | None = None
    team_name: str | None = None
    mode: str | None = None
    isolation: str | None = None
    cwd: str | None = None
    tool_use_id: str | None = None


@dataclass
class SubagentRun:
    """A prepared child: its session, first message and metadata; drive it with :meth:`events`.

    Counters (``tool_use_count``, ``last_tool_name``, ``last_usage``) follow
    the child's messages as they arrive, for progress lines and task events.
    """

    agent_id: str
    definition: AgentDefinition
    request: SpawnRequest
    session: Session
    first_message: Message
    model: ChildModel
    parent_ctx: ToolContext
    transcript_path: Path | None = None
    worktree: Any = None
    is_async: bool = False
    started: float = field(default_factory=time.monotonic)
    tool_use_count: int = 0
    last_tool_name: str | None = None
    last_usage: dict[str, Any] = field(default_factory=dict)
    result_event: ResultEvent | None = None
    aborted: bool = False
    span: Any = None
    stop_event: asyncio.Event | None = None
    """When set, the child stops when this is set, instead of on the parent's abort (background runs)."""
    mcp_servers: Any = None
    """The MCP servers of the agent's own ``mcpServers`` (catui.mcp.subagents.ChildMcpServers), closed at the end."""
    stop_requested: bool = False
    """Set by :meth:`request_stop` (TaskStop, ``CatuiClient.stop_task``): this run alone was asked to stop."""
    _stop_request: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def agent_type(self) -> str:
        return self.definition.agent_type

    @property
    def description(self) -> str:
        return self.request.description

    @property
    def messages(self) -> list[Message]:
        return self.session.messages

    @property
    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def request_stop(self) -> None:
        """Stop this child at once (mid-request included); siblings and the parent carry on."""
        self.stop_requested = True
        self._stop_request.set()

    def clear_stop_request(self) -> None:
        """Forget an earlier stop, before the run continues (a stopped agent resumed with SendMessage)."""
        self.stop_requested = False
        self._stop_request.clear()

    def progress_usage(self) -> dict[str, int]:
        """``{total_tokens, tool_uses, duration_ms}`` as task events and notifications report them."""
        return {
            "total_tokens": total_tokens(self.last_usage),
            "tool_uses": self.tool_use_count,
            "duration_ms": self.duration_ms,
        }

    async def events(self) -> AsyncIterator[Event]:
        """Run the child to its end, yielding its events.

        The parent's abort aborts the child at once, even in the middle of a
        model request: the child's run is closed, which cancels its work.
        """
        first_index, tools_before = len(self.session.messages), self.tool_use_count
        stream = self.session.run(self.first_message)
        stop_signal = self.stop_event if self.stop_event is not None else self.parent_ctx.abort
        parent_abort = asyncio.ensure_future(_first_set(stop_signal, self._stop_request))
        # The child's own loop runs ahead of this consumer, so abort it the moment the parent aborts,
        # not when this loop next looks: otherwise a child whose tool just finished starts another turn.
        parent_abort.add_done_callback(lambda f: None if f.cancelled() else self.session.abort())
        try:
            while True:
                step = asyncio.ensure_future(anext(stream))
                await asyncio.wait({step, parent_abort}, return_when=asyncio.FIRST_COMPLETED)
                if parent_abort.done():
                    self.session.abort()
                    if not step.done():
                        step.cancel()
                    with contextlib.suppress(BaseException):
                        await step
                    self.aborted = True
                    self._catch_up_tool_calls(first_index, tools_before)
                    return
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                if isinstance(event, AssistantMessageEvent) and event.agent_id == self.agent_id:
                    self._observe(event)
                elif isinstance(event, UsageEvent) and event.agent_id == self.agent_id:
                    self.last_usage = dict(event.usage)
                elif isinstance(event, ResultEvent) and event.agent_id == self.agent_id:
                    self.result_event = event
                yield event
        finally:
            parent_abort.cancel()
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                with contextlib.suppress(BaseException):
                    await closer()
            if self.mcp_servers is not None:
                with contextlib.suppress(Exception):
                    await self.mcp_servers.aclose()

    def _catch_up_tool_calls(self, first_index: int, tools_before: int) -> None:
        # The child's loop runs ahead of this consumer: when it is stopped, the tool calls of messages
        # not read yet still count (a stopped agent's result and task report them).
        calls = [
            block
            for message in self.session.messages[first_index:]
            if message.get("role") == "assistant"
            for block in blocks_of(message)
            if block.get("type") == "tool_use"
        ]
        if len(calls) > self.tool_use_count - tools_before:
            self.tool_use_count = tools_before + len(calls)
            self.last_tool_name = str(calls[-1].get("name", ""))

    def _observe(self, event: AssistantMessageEvent) -> None:
        for block in blocks_of(event.message):
            if block.get("type") == "tool_use":
                self.tool_use_count += 1
                self.last_tool_name = str(block.get("name", ""))


@dataclass
class RuntimeDeps:
    """What the runtime needs from the application (built by :func:`catui.subagents.install.install_subagents`)."""

    registry: Any
    settings: Mapping[str, Any]
    env: Mapping[str, str]
    project_root: Path
    sessions_dir: Path | None
    parent_resolved: Any = None
    telemetry: Telemetry | None = None
    worktree_state: Any = None
    load_project_memory: bool = True


class SubagentRuntime:
    """Spawns sub-agents for the sessions whose ``ctx.services["subagents"]`` it is."""

    def __init__(self, deps: RuntimeDeps) -> None:
        self.deps = deps
        self.background_launcher: BackgroundLauncher | None = None
        self.fork_handler: ForkHandler | None = None
        self.spawn_gate: SpawnGate | None = None
        self.foreground_hook: ForegroundHook | None = None
        self.runs: dict[str, SubagentRun] = {}
        self.foreground: dict[str, SubagentRun] = {}
        """Runs the parent is waiting for right now (their Agent call has not returned), by agent id."""
        self._foreground_ended: dict[str, asyncio.Event] = {}
        self._env_blocks: dict[tuple[str, str, tuple[str, ...]], str] = {}
        self._git_status: dict[str, str | None] = {}
        self._project_memory: dict[str, str | None] = {}
        self._providers: dict[Any, Any] = {}

    # -- the Agent tool's entry point -----------------------------------------------------------

    async def spawn(self, request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult:
        """Run one Agent call to its tool_result (foreground) or hand it to the background launcher."""
        if self.spawn_gate is not None:
            refusal = self.spawn_gate(request, parent_ctx)
            if refusal is not None:
                return refusal
        if request.subagent_type is None and self.fork_handler is not None:
            return await self.fork_handler(request, parent_ctx)
        try:
            run = await self.prepare(request, parent_ctx)
        except AgentSpawnError as exc:
            return ToolResult(str(exc), is_error=True)
        except CatuiError as exc:
            return ToolResult(f"Agent could not start: {exc}", is_error=True)
        if run.is_async and self.background_launcher is not None:
            return await self.background_launcher(run, parent_ctx)
        run.is_async = False
        return await self.run_to_completion(run)

    # -- preparing a run ------------------------------------------------------------------------

    async def prepare(
        self, request: SpawnRequest, parent_ctx: ToolContext, *, agent_id: str | None = None, worktree: Any = None
    ) -> SubagentRun:
        """Everything up to the child's first request (spec 6.1 steps 5-11). Raises AgentSpawnError.

        ``agent_id`` keeps an existing agent's id (an agent resumed from its transcript); else a new one.
        ``worktree`` (a :class:`~catui.worktree.model.WorktreeInfo`) is an existing worktree the agent
        continues in (the one it kept): no new one is made, and it is settled again at the end.
        """
        deps = self.deps
        parent = _parent_session(parent_ctx)
        reload = getattr(deps.registry, "reload_if_changed", None)
        if reload is not None:
            reload()
        definition = resolve_agent_type(deps.registry, request.subagent_type, parent_ctx.permissions)

        mcp = parent_ctx.services.get("mcp")
        await _check_mcp_requirements(definition, parent.tools, mcp)
        model = resolve_child_model(
            definition.model,
            request.model,
            parent_model_id=parent.config.model,
            parent_resolved=deps.parent_resolved,
            settings=deps.settings,
            env=deps.env,
        )
        provider = parent.config.provider
        if model.resolved is not None:
            provider = self._provider(model.resolved)

        permissions = _child_permissions(parent_ctx, definition, request)
        try:
            tools = filter_tools_for_agent(definition, _tool_pool(parent.tools, mcp), permissions)
        except NoToolsLeftError as exc:
            raise AgentSpawnError(str(exc)) from None

        agent_id = agent_id or new_agent_id()
        from catui.config.flags import background_tasks_disabled

        wants_async = bool(request.run_in_background or definition.background)
        is_async = wants_async and self.background_launcher is not None and not background_tasks_disabled(deps.env)
        isolation = None if worktree is not None else (request.isolation or definition.isolation)
        # `cwd` comes from the call (SDK) or the definition; either way it excludes isolation.
        cwd_override = _validate_cwd(request.cwd or definition.cwd, isolation)
        child_mcp = await _child_mcp_servers(definition, mcp)
        if child_mcp is not None:
            # The agent's own servers' tools join after the filtering, as in Claude Code.
            present = {t.name for t in tools}
            tools = [*tools, *(t for t in child_mcp.tools if t.name not in present)]
        created = None
        try:
            if isolation == "worktree":
                worktree = created = await self._create_worktree(agent_id, parent)
            run = self._build_run(
                request, parent_ctx, parent, definition, model, provider, permissions, tools, agent_id, is_async,
                worktree, cwd_override,
            )
            run.mcp_servers = child_mcp
            return run
        except BaseException:
            if child_mcp is not None:
                with contextlib.suppress(Exception):
                    await child_mcp.aclose()
            if created is not None:
                with contextlib.suppress(Exception):
                    from catui.worktree.cleanup import finish_worktree

                    await finish_worktree(created, self._state())
            raise

    def _build_run(
        self,
        request: SpawnRequest,
        parent_ctx: ToolContext,
        parent: Session,
        definition: AgentDefinition,
        model: ChildModel,
        provider: Any,
        permissions: Any,
        tools: list[Any],
        agent_id: str,
        is_async: bool,
        worktree: Any,
        cwd_override: Path | None,
    ) -> SubagentRun:
        """The child session and its run, once type, model, tools and folder are settled."""
        deps = self.deps
        from catui.worktree.guard import ensure_inside, worktrees_root

        confined: Path | None = Path(worktree.path) if worktree is not None else None
        if cwd_override is not None and ensure_inside(cwd_override, worktrees_root(parent_ctx.project_root)):
            confined = cwd_override  # an agent resumed in the worktree it kept stays confined to it
        child_cwd = confined or cwd_override or parent_ctx.cwd
        child_root = confined or parent_ctx.project_root
        if confined is not None:
            # Folders of the main checkout (the parent's cwd may be one of its sub-folders) would let the
            # child write there, past its worktree; folders outside the checkout stay.
            git_root = getattr(worktree, "git_root", None)
            main_roots = [parent_ctx.project_root, *([git_root] if git_root else [])]
            others = [
                d for d in permissions.working_directories if not any(ensure_inside(d, r) for r in main_roots)
            ]
            permissions = permissions.with_working_directories(confined, *others)
        elif cwd_override is not None:
            permissions = permissions.with_working_directories(cwd_override, *permissions.working_directories)

        memory = load_agent_memory(definition, parent_ctx.project_root) if definition.memory else None
        if memory is not None and deps.telemetry is not None:
            deps.telemetry.record(AGENT_MEMORY_LOADED, {"scope": definition.memory, "source": "subagent"})
        system = build_subagent_system_prompt(
            definition,
            environment=self._environment(Path(child_cwd), model.model_id),
            git_status=None if definition.omit_claude_md else self._git_snapshot(Path(child_cwd)),
            working_dirs=[cwd_override] if cwd_override is not None else [],
            memory=memory,
            prompt_context=SystemPromptContext(
                active_agents=list(getattr(deps.registry, "active", []) or []),
                tool_names=[t.name for t in tools],
            ),
        )
        from catui.session.prompt import context_block

        wants_memory = deps.load_project_memory and not definition.omit_claude_md
        project_memory = self._memory(Path(child_cwd), child_root) if wants_memory else None
        first_message = build_first_message(request.prompt, context_block(project_memory))

        ctx = ToolContext(
            cwd=Path(child_cwd),
            project_root=Path(child_root),
            permissions=permissions,
            agent_id=agent_id,
            agent_type=definition.agent_type,
            interactive=parent_ctx.interactive,
            services=dict(parent_ctx.services),
        )
        transcript, transcript_path = self._transcript(parent, agent_id, definition, request, Path(child_cwd),
                                                       worktree, model)
        from catui.hooks.install import child_hooks
        from catui.models.resolve import default_max_tokens

        config = SessionConfig(
            provider=provider,
            model=model.model_id,
            tools=tools,
            tool_context=ctx,
            system_prompt=system,
            session_id=parent.session_id,
            max_turns=definition.max_turns,
            max_tokens=default_max_tokens(model.model_id),
            temperature=1,
            thinking=None,
            transcript=transcript,
            can_use_tool=parent.config.can_use_tool,
            usage_tracker=parent.config.usage_tracker,
            agent_id=agent_id,
            parent_tool_use_id=request.tool_use_id,
            request_metadata={"query_source": f"agent:{definition.agent_type}"},
            # settings hooks plus the definition's own; SubagentStart/SubagentStop run inside the child's loop
            hooks=child_hooks(parent_ctx.services.get("hooks"), definition, agent_id, definition.agent_type,
                              cwd=Path(child_cwd), agent_transcript_path=transcript_path),
        )
        child = Session(config)
        ctx.services["session"] = child
        run = SubagentRun(
            agent_id=agent_id,
            definition=definition,
            request=request,
            session=child,
            first_message=first_message,
            model=model,
            parent_ctx=parent_ctx,
            transcript_path=transcript_path,
            worktree=worktree,
            is_async=is_async,
        )
        record_agent_selected(deps.telemetry, definition, model, is_async=is_async, is_fork=False)
        self.runs[agent_id] = run
        return run

    # -- running --------------------------------------------------------------------------------

    async def run_to_completion(self, run: SubagentRun) -> ToolResult:
        """Drive a run in the foreground, forwarding its events to the parent's stream; returns the result.

        While it runs it is in :attr:`foreground`, where :meth:`stop_foreground` can stop it.
        """
        with agent_span(
            "catui.agent",
            {
                "catui.agent.id": run.agent_id,
                "catui.agent.type": run.agent_type,
                "catui.agent.model": run.model.model_id,
                "catui.agent.model_reason": run.model.reason,
                "catui.agent.description": run.description,
                "catui.agent.is_async": False,
            },
        ) as span:
            run.span = span
            ended = asyncio.Event()
            self.foreground[run.agent_id] = run
            self._foreground_ended[run.agent_id] = ended
            try:
                return await self._drive_foreground(run, span)
            finally:
                if self.foreground.get(run.agent_id) is run:
                    del self.foreground[run.agent_id]
                    self._foreground_ended.pop(run.agent_id, None)
                ended.set()

    async def _drive_foreground(self, run: SubagentRun, span: Any) -> ToolResult:
        emit = run.parent_ctx.emit
        self.emit_task_started(run)
        hook = self.foreground_hook
        try:
            async for event in (hook.events(run) if hook is not None else run.events()):
                if emit is not None:
                    emit(event)
                if (
                    isinstance(event, AssistantMessageEvent)
                    and event.agent_id == run.agent_id
                    and emit is not None
                ):
                    emit(self.task_progress_event(run))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a child must not take the parent down
            kept = await self._discard_worktree(run)
            result = _failed(
                f"Agent \"{run.description}\" ({run.agent_type}) failed: {type(exc).__name__}: {exc}", kept
            )
            self.emit_task_finished(run, "stopped" if run.stop_requested else "failed")
            return result
        moved = await hook.moved(run) if hook is not None else None
        if moved is not None:  # now a background task, which reports its own end
            return moved
        result = await self.finish(run)
        # A child that finished just as the stop came is reported as it ended.
        status = "completed" if not result.is_error else ("stopped" if run.stop_requested else "failed")
        self.emit_task_finished(run, status)
        set_span_attributes(span, {"catui.agent.tool_uses": run.tool_use_count, "catui.agent.error": result.is_error})
        return result

    async def stop_foreground(self, agent_id: str, *, wait_s: float = 10.0) -> SubagentRun | None:
        """Stop a running foreground agent by id (TaskStop, ``CatuiClient.stop_task``); None if there is none.

        The child aborts at once; its parent's Agent call returns an error result saying it was stopped
        (with its partial answer), and a ``task_notification`` with status ``stopped`` follows. Waits up
        to ``wait_s`` seconds for that call to return, so the caller can report the end.
        """
        run = self.foreground.get(agent_id)
        if run is None:
            return None
        ended = self._foreground_ended.get(agent_id)
        run.request_stop()
        if ended is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), wait_s)
        return run

    async def finish(self, run: SubagentRun) -> ToolResult:
        """The tool_result of a child that has stopped: its answer, or the reason it failed.

        Also reviews the handoff (auto mode), settles the worktree and records telemetry.
        """
        self.runs.pop(run.agent_id, None)
        end = run.result_event
        failure = _failure_text(run, end)
        if failure is not None:
            kept = await self._discard_worktree(run)
            self._record_completed(run, None)
            if run.stop_requested:
                return _stopped(run, kept)
            return _failed(failure, kept)
        try:
            result = extract_agent_result(
                run.messages,
                run.agent_id,
                agent_type=run.agent_type,
                prompt=run.request.prompt,
                duration_ms=run.duration_ms,
                usage=run.last_usage,
            )
        except NoAssistantMessagesError as exc:
            kept = await self._discard_worktree(run)
            self._record_completed(run, None)
            return _failed(f"Agent \"{run.description}\" ({run.agent_type}) failed: {exc}", kept)
        result.extra.update({"model": run.model.model_id, "modelReason": run.model.reason})
        warning = await self._handoff_warning(run, result)
        kept_path, kept_branch = await self._settle_worktree(run)
        self._record_completed(run, result)
        return format_agent_tool_result(result, worktree_path=kept_path, worktree_branch=kept_branch, warning=warning)

    async def background_all_foreground(self) -> list[str]:
        """Move every running foreground agent to the background (Ctrl-B, the SDK); returns their ids."""
        if self.foreground_hook is None:
            return []
        return await self.foreground_hook.background_all()

    # -- task events (stream-json, SDK, live lines) ---------------------------------------------

    def _emit(self, run: SubagentRun, event: Event) -> None:
        if run.parent_ctx.emit is not None:
            run.parent_ctx.emit(event)

    def emit_task_started(self, run: SubagentRun) -> None:
        """Tell the parent's stream that ``run`` started (``system/task_started``)."""
        self._emit(
            run,
            SystemEvent(
                subtype="task_started",
                data={
                    "task_id": run.agent_id,
                    "tool_use_id": run.request.tool_use_id,
                    "description": run.description,
                    "task_type": "local_agent",
                    "prompt": run.request.prompt,
                },
                agent_id=run.parent_ctx.agent_id,
            ),
        )

    def task_progress_event(self, run: SubagentRun) -> SystemEvent:
        """A ``system/task_progress`` event with the run's counters so far."""
        return SystemEvent(
            subtype="task_progress",
            data={
                "task_id": run.agent_id,
                "tool_use_id": run.request.tool_use_id,
                "description": run.description,
                "last_tool_name": run.last_tool_name,
                "usage": run.progress_usage(),
            },
            agent_id=run.parent_ctx.agent_id,
        )

    def emit_task_finished(self, run: SubagentRun, status: str) -> None:
        """Tell the parent's stream that ``run`` ended (``system/task_notification``; status completed/failed)."""
        self._emit(
            run,
            SystemEvent(
                subtype="task_notification",
                data={
                    "task_id": run.agent_id,
                    "tool_use_id": run.request.tool_use_id,
                    "status": status,
                    "output_file": str(run.transcript_path) if run.transcript_path else "",
                    "summary": f'Agent "{run.description}" {status}',
                    "usage": run.progress_usage(),
                },
                agent_id=run.parent_ctx.agent_id,
            ),
        )

    # -- pieces ---------------------------------------------------------------------------------

    def _provider(self, resolved: Any) -> Any:
        # create_provider shares one provider per configuration (the parent's own when they match);
        # remembering it here spares building a provider object per spawn just to find that out.
        provider = self._providers.get(resolved)
        if provider is None:
            from catui.models.resolve import create_provider

            provider = self._providers[resolved] = create_provider(resolved, self.deps.settings, self.deps.env)
        return provider

    def _environment(self, cwd: Path, model_id: str) -> str:
        key = (str(cwd), model_id, ())
        block = self._env_blocks.get(key)
        if block is None:
            from catui.config.context import environment_block

            block = environment_block(cwd, model_id)
            self._env_blocks[key] = block
        return block

    def _git_snapshot(self, cwd: Path) -> str | None:
        # One snapshot per folder per conversation, as the main agent's: it is described as such.
        key = str(cwd)
        if key not in self._git_status:
            from catui.config.context import git_status_snapshot

            self._git_status[key] = git_status_snapshot(cwd)
        return self._git_status[key]

    def _memory(self, cwd: Path, project_root: Path) -> str | None:
        key = f"{cwd}\0{project_root}"
        if key not in self._project_memory:
            from catui.config.context import load_project_memory

            self._project_memory[key] = load_project_memory(cwd, project_root)
        return self._project_memory[key]

    def _transcript(
        self, parent: Session, agent_id: str, definition: AgentDefinition, request: SpawnRequest, cwd: Path,
        worktree: Any, model: ChildModel,
    ) -> tuple[TranscriptWriter | None, Path | None]:
        if parent.config.transcript is None or self.deps.sessions_dir is None:
            return None, None
        folder = self.deps.sessions_dir / parent.session_id / "subagents"
        path = folder / f"agent-{agent_id}.jsonl"
        writer = TranscriptWriter(
            [path], session_id=parent.session_id, cwd=cwd, agent_id=agent_id,
            git_branch=parent.config.transcript.git_branch,
        )
        meta: dict[str, Any] = {"agentType": definition.agent_type, "description": request.description}
        if worktree is not None:
            meta["worktreePath"] = str(worktree.path)
        # The resolved model and why it was chosen are part of the run's metadata (also in telemetry).
        meta["model"] = model.model_id
        meta["modelReason"] = model.reason
        write_json_atomic(folder / f"agent-{agent_id}.meta.json", meta)
        return writer, path

    def _state(self) -> Any:
        """The project's state database (worktree records), opened on first use."""
        if self.deps.worktree_state is None:
            from catui.state.db import StateDB

            self.deps.worktree_state = StateDB(self.deps.project_root)
        return self.deps.worktree_state

    async def _create_worktree(self, agent_id: str, parent: Session) -> Any:
        from catui.worktree.create import create_worktree

        try:
            return await create_worktree(
                agent_id,
                repo_root=self.deps.project_root,
                settings=self.deps.settings,
                state=self._state(),
                session_id=parent.session_id,
            )
        except CatuiError as exc:
            raise AgentSpawnError(f"Agent could not create its worktree: {exc}") from None

    async def _settle_worktree(self, run: SubagentRun) -> tuple[str | None, str | None]:
        """Remove an unchanged worktree; report a changed one's path and branch."""
        if run.worktree is None:
            return None, None
        from catui.worktree.cleanup import finish_worktree

        outcome = await finish_worktree(run.worktree, self._state())
        if not outcome.kept:
            return None, None
        return str(outcome.path), outcome.branch

    async def _discard_worktree(self, run: SubagentRun) -> tuple[str | None, str | None]:
        # A failed child's worktree is settled like a finished one's: kept only when it changed something.
        if run.worktree is not None:
            with contextlib.suppress(Exception):
                return await self._settle_worktree(run)
        return None, None

    async def _handoff_warning(self, run: SubagentRun, result: AgentResult) -> str | None:
        if run.parent_ctx.permissions.mode != "auto":
            return None
        from catui.models.resolve import create_provider, resolve_model
        from catui.safety.handoff import UNAVAILABLE_NOTE, check_handoff_safety

        try:
            resolved = resolve_model("haiku", self.deps.settings, self.deps.env, within=self.deps.parent_resolved)
            provider = create_provider(resolved, self.deps.settings, self.deps.env)
        except CatuiError:
            return UNAVAILABLE_NOTE
        return await check_handoff_safety(
            run.messages,
            permission_mode=run.parent_ctx.permissions.mode,
            provider=provider,
            model=resolved.model_id,
            subagent_type=run.agent_type,
            total_tool_use_count=result.total_tool_use_count,
            tool_names=[t.name for t in run.session.tools],
            telemetry=self.deps.telemetry,
        )

    def _record_completed(self, run: SubagentRun, result: AgentResult | None) -> None:
        if self.deps.telemetry is None:
            return
        assistants = [m for m in run.messages if m.get("role") == "assistant"]
        self.deps.telemetry.record(
            AGENT_TOOL_COMPLETED,
            {
                "agent_type": run.agent_type,
                "model": run.model.model_id,
                "model_reason": run.model.reason,
                "prompt_char_count": len(run.request.prompt),
                "response_char_count": len(result.text) if result is not None else 0,
                "assistant_message_count": len(assistants),
                "total_tool_use_count": result.total_tool_use_count if result else run.tool_use_count,
                "duration_ms": run.duration_ms,
                "total_tokens": result.total_tokens if result else total_tokens(run.last_usage),
                "is_built_in_agent": run.definition.is_built_in,
                "is_async": run.is_async,
                "is_error": result is None,
            },
        )


async def _first_set(*events: asyncio.Event) -> None:
    """Return as soon as one of ``events`` is set."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _parent_session(ctx: ToolContext) -> Session:
    session = ctx.services.get("session")
    if not isinstance(session, Session):
        raise AgentSpawnError("Sub-agents need a running session; none was found in this tool context.")
    return session


def _check_required_mcp_servers(definition: AgentDefinition, parent_tools: list[Any]) -> None:
    """Refuse to start an agent whose required MCP servers have no tools in this session (spec 6.1 [6])."""
    required = definition.required_mcp_servers or []
    if not required:
        return
    names = [t.name for t in parent_tools]
    missing = [s for s in required if not any(n.startswith(f"mcp__{s}__") for n in names)]
    if missing:
        raise AgentSpawnError(
            f"Agent type '{definition.agent_type}' needs the MCP server(s) {', '.join(missing)}, which are not "
            "connected in this session. Configure them in the MCP settings (or check that they start), then try "
            "again; or use another agent type."
        )


async def _check_mcp_requirements(definition: AgentDefinition, parent_tools: list[Any], mcp: Any) -> None:
    """Spec 6.1 [6]: wait up to 30 s for required MCP servers still connecting, then refuse when one is missing."""
    required = definition.required_mcp_servers or []
    if not required:
        return
    if mcp is None:  # no configured servers: only the SDK's in-process servers can satisfy it
        _check_required_mcp_servers(definition, parent_tools)
        return
    from catui.mcp.subagents import check_required_servers

    error = await check_required_servers(
        mcp, required, agent_type=definition.agent_type, tool_names=[t.name for t in parent_tools]
    )
    if error is not None:
        raise AgentSpawnError(error)


def _tool_pool(parent_tools: list[Any], mcp: Any) -> list[Any]:
    """The tools a child chooses from: the parent's, plus those of MCP servers that connected later."""
    if mcp is None:
        return parent_tools
    from catui.mcp.subagents import mcp_tool_pool

    return mcp_tool_pool(mcp, parent_tools)


async def _child_mcp_servers(definition: AgentDefinition, mcp: Any) -> Any:
    """The agent's own ``mcpServers`` (named or inline), connected for this child; None when it has none."""
    if not definition.mcp_servers:
        return None
    from catui.mcp.subagents import child_mcp_tools

    return await child_mcp_tools(mcp, definition)


def _child_permissions(parent_ctx: ToolContext, definition: AgentDefinition, request: SpawnRequest) -> Any:
    """The parent's rules and folders with the definition's mode (else the parent's), never more permissive."""
    from catui.permissions.decide import cap_mode

    parent = parent_ctx.permissions
    requested = definition.permission_mode or request.mode
    return parent.with_mode(cap_mode(parent.mode, requested))  # type: ignore[arg-type]


def _failed(text: str, kept: tuple[str | None, str | None]) -> ToolResult:
    """A failed child's error result; a worktree it changed is kept and named, as in a successful result."""
    path, branch = kept
    if path is None:
        return ToolResult(text, is_error=True)
    lines = [f"worktreePath: {path}", *([f"worktreeBranch: {branch}"] if branch else [])]
    return ToolResult("\n".join([text, *lines]), is_error=True,
                      data={"worktreePath": path, **({"worktreeBranch": branch} if branch else {})})


def _stopped(run: SubagentRun, kept: tuple[str | None, str | None]) -> ToolResult:
    """The error result of a child stopped by request: what it had written so far, how to continue it."""
    partial = _partial_text(run)
    lines = [f"Agent \"{run.description}\" ({run.agent_type}) was stopped before it finished."]
    if partial:
        lines += ["Its last text before it was stopped:", partial]
    else:
        lines.append("It had written no text yet.")
    if run.agent_type not in ONE_SHOT_AGENT_TYPES:
        lines.append(f"agentId: {run.agent_id} (use SendMessage with to: '{run.agent_id}' to continue this agent)")
    failed = _failed("\n".join(lines), kept)
    data: dict[str, Any] = {
        "status": "stopped",
        "agentId": run.agent_id,
        "agentType": run.agent_type,
        "prompt": run.request.prompt,
        "partialResult": partial,
        "totalDurationMs": run.duration_ms,
        "totalToolUseCount": run.tool_use_count,
        "totalTokens": total_tokens(run.last_usage),
    }
    if isinstance(failed.data, Mapping):
        data.update(failed.data)
    return ToolResult(failed.content, is_error=True, data=data)


def _partial_text(run: SubagentRun) -> str | None:
    """The text of the child's latest assistant message that has any (its answer so far)."""
    for message in reversed(run.messages):
        if message.get("role") != "assistant":
            continue
        text = "".join(str(b.get("text", "")) for b in blocks_of(message) if b.get("type") == "text")
        if text:
            return text
    return None


def _validate_cwd(cwd: str | None, isolation: str | None) -> Path | None:
    if cwd is None:
        return None
    from catui.worktree.guard import validate_agent_cwd

    try:
        return validate_agent_cwd(cwd, isolation)
    except CatuiError as exc:
        raise AgentSpawnError(str(exc)) from None


def _failure_text(run: SubagentRun, end: ResultEvent | None) -> str | None:
    """The error tool_result text of a child that did not finish normally, or None."""
    who = f"Agent \"{run.description}\" ({run.agent_type})"
    if run.aborted:
        return f"{who} was interrupted before it finished."
    if end is None:
        return f"{who} stopped without a result."
    if not end.is_error:
        return None
    if end.subtype == "error_max_turns":
        limit = run.session.config.max_turns
        return (
            f"{who} stopped after reaching its limit of {limit} turns before finishing its task. "
            "Give it a narrower task, or raise maxTurns in its definition."
        )
    if run.session.last_stop_reason == "aborted" or run.parent_ctx.abort.is_set():
        return f"{who} was interrupted before it finished."
    return f"{who} failed: {end.result}"


def record_agent_selected(
    telemetry: Telemetry | None, definition: AgentDefinition, model: ChildModel, *, is_async: bool, is_fork: bool
) -> None:
    """The ``catui_agent_tool_selected`` record (spec 16), with why the model was chosen."""
    if telemetry is None:
        return
    telemetry.record(
        AGENT_TOOL_SELECTED,
        {
            "agent_type": definition.agent_type,
            "model": model.model_id,
            "model_reason": model.reason,
            "source": definition.source,
            "color": definition.color,
            "is_built_in_agent": definition.is_built_in,
            "is_resume": False,
            "is_async": is_async,
            "is_fork": is_fork,
        },
    )
