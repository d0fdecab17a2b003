"""The agent loop: stream a model turn, run its tool calls, repeat until the model is done.

One :class:`Session` is one conversation with one model and one tool set; the
main agent and every sub-agent each have their own. ``run(prompt)`` is an
async iterator of :mod:`catui.session.events` and always ends with a
:class:`ResultEvent`, whatever happened (end of turn, max turns, an abort, an
unrecoverable provider error).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from catui.config.concurrency import DEFAULT_TOOL_USE_CONCURRENCY
from catui.errors import CatuiError, ProviderError
from catui.hooks.apply import (
    MAX_STOP_HOOK_CONTINUATIONS,
    apply_hook_decision,
    result_with_hook_feedback,
    stop_feedback_text,
)
from catui.hooks.runner import HookNotice, HookRunner
from catui.messages import Block, Message, text_of, tool_result_block, tool_uses_of, user_message
from catui.messages import result_text as content_text
from catui.models.accumulate import MessageAccumulator
from catui.models.base import STREAM_RETRY, ModelProvider, ModelRequest
from catui.permissions.context import PermissionDecision, PermissionRequest
from catui.permissions.rules import denies_tool_outright
from catui.session.budget import BUDGET_SUBTYPE, SessionBudget
from catui.session.compaction import CompactionOutcome, compact_session, fit_context, is_prompt_too_long
from catui.session.context_window import ContextPolicy
from catui.session.events import (
    AssistantMessageEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    TextDelta,
    ThinkingDelta,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
    UserMessageEvent,
)
from catui.session.failures import format_validation_error, is_overloaded, stream_retry_data
from catui.session.tool_window import run_windowed
from catui.session.transcript import TranscriptWriter
from catui.session.usage import UsageTracker, add_usage, empty_usage, total_tokens
from catui.tools.base import CURRENT_TOOL_USE_ID, Tool, ToolContext, ToolResult
from catui.tools.plan_file import plan_file_for_session, plan_mode_reminder

CanUseTool = Callable[[Tool, dict[str, Any], PermissionRequest, ToolContext], Awaitable[PermissionDecision]]
"""Asked when the permission decision is ``ask``: the terminal prompt, or the SDK's can_use_tool."""

_DONE = object()


def transcript_tool_results(data: dict[str, Any], tool_uses: list[Block]) -> dict[str, Any] | None:
    """The transcript line's structured results, as Claude Code records them (``toolUseResult``).

    One call: its result object; several: ``toolUseResults`` by tool_use id (catui keeps a round's results
    in one message). WebSearch's server blocks (``server_tool_use``, ``web_search_tool_result``) are kept
    this way, and a resumed session reads only ``message``, so nothing else changes.
    """
    if not data:
        return None
    if len(tool_uses) == 1:
        return {"toolUseResult": data.get(tool_uses[0]["id"])}
    return {"toolUseResults": data}


def new_session_id() -> str:
    return str(uuid.uuid4())


@dataclass
class SessionConfig:
    """Everything a session needs. ``usage_tracker`` may be shared with sub-agents (modelUsage totals)."""

    provider: ModelProvider
    model: str
    tools: list[Tool]
    tool_context: ToolContext
    system_prompt: list[Block] = field(default_factory=list)
    session_id: str = field(default_factory=new_session_id)
    max_turns: int | None = None
    max_tokens: int = 32000
    temperature: float | None = None
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    """The wire effort level (``catui.models.reasoning``); None sends none."""
    transcript: TranscriptWriter | None = None
    can_use_tool: CanUseTool | None = None
    include_partial_messages: bool = False
    usage_tracker: UsageTracker = field(default_factory=UsageTracker)
    agent_id: str | None = None
    parent_tool_use_id: str | None = None
    pending_messages: Callable[[], list[str]] | None = None
    before_turn: Callable[[Session], Awaitable[None]] | None = None
    request_metadata: dict[str, Any] = field(default_factory=dict)
    fallback: tuple[ModelProvider, str] | None = None
    """(provider, model id) to switch to when the model is overloaded after its retries."""
    hooks: HookRunner | None = None
    """Settings-defined hooks (catui.hooks); None runs no hook code at all."""
    history: list[Message] = field(default_factory=list)
    """Messages the session starts from (a resumed or forked session's old conversation)."""
    max_tool_use_concurrency: int = DEFAULT_TOOL_USE_CONCURRENCY
    """How many concurrency-safe calls of one message run at once (a sliding window; catui.config.concurrency)."""
    context_policy: ContextPolicy | None = None
    """Window sizes and auto-compaction (catui.session.compaction); None never compacts."""
    budget: SessionBudget | None = None
    """The session-wide spending limit (the main session only): once it trips, runs end with its subtype."""


@dataclass
class TurnTotals:
    num_turns: int = 0
    tool_uses: int = 0
    api_ms: int = 0


class Session:
    """One conversation. Not safe to ``run`` twice at the same time."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.ctx = config.tool_context
        self.messages: list[Message] = list(config.history)
        self.usage: dict[str, Any] = empty_usage()
        self.permission_denials: list[dict[str, Any]] = []
        self.totals = TurnTotals()
        self.last_stop_reason: str | None = None
        self.context_mark: tuple[int, int] | None = None
        """(messages counted, tokens): the context size the last response's usage measured."""
        self._queue: asyncio.Queue[Any] | None = None
        self._tools_by_name: dict[str, Tool] = {}
        self._hook_halt: str | None = None
        # Blocks tools asked to follow their results (ToolResult.follow_up), by tool_use id, until sent.
        self._follow_ups: dict[str, list[Block]] = {}
        # Rules tools granted for the current run only (a skill's allowed-tools), taken back when it ends.
        self._run_rules: list[Any] = []
        if config.agent_id is not None:
            # Only the main agent writes and presents a plan; a sub-agent in plan mode stays read-only.
            if self.ctx.permissions.plan_file is not None:
                self.ctx.permissions = self.ctx.permissions.with_plan_file(None)
        elif self.ctx.permissions.plan_file is None:
            # The main agent's plan file, where it writes its plan in plan mode (catui.tools.plan_file).
            self.ctx.permissions = self.ctx.permissions.with_plan_file(plan_file_for_session(config.session_id))
        self.set_tools(config.tools)

    # -- public API -----------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.config.session_id

    @property
    def tools(self) -> list[Tool]:
        return self.config.tools

    def set_tools(self, tools: list[Tool]) -> None:
        """Offer these tools, minus any the permission context denies outright (e.g. ``--disallowedTools Bash``)."""
        outright = [r for r in self.ctx.permissions.rules if r.behavior == "deny" and r.content is None]
        if outright:
            tools = [t for t in tools if not any(denies_tool_outright(r, t.name) for r in outright)]
        self.config.tools = list(tools)
        self._tools_by_name = {}
        for tool in tools:
            self._tools_by_name[tool.name] = tool
            for alias in tool.aliases:
                self._tools_by_name.setdefault(alias, tool)

    def set_model(self, model: str) -> None:
        self.config.model = model

    def replace_messages(self, messages: list[Message]) -> None:
        """Continue from these messages instead (a compaction); the transcript is the caller's to write."""
        self.messages[:] = messages
        self.context_mark = None

    async def compact(self, instructions: str | None = None) -> CompactionOutcome:
        """``/compact``: summarise the conversation now (between runs); raises CompactionError if it cannot."""
        policy = self.config.context_policy or ContextPolicy()
        return await compact_session(self, policy, trigger="manual", instructions=instructions)

    def is_running(self) -> bool:
        """Whether a :meth:`run` is under way (events emitted now reach its consumer)."""
        return self._queue is not None

    def abort(self) -> None:
        """Stop the current run as soon as possible; the run still ends with a ResultEvent."""
        self.ctx.abort.set()

    def emit(self, event: Event) -> None:
        """Push an event (typically a sub-agent's) into the stream of the current run."""
        if self._queue is not None:
            self._queue.put_nowait(event)

    async def run(self, prompt: str | list[Block] | Message) -> AsyncIterator[Event]:
        """Send ``prompt`` and drive the loop; yields events, the last being a ResultEvent."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._queue = queue
        self.ctx.emit = self.emit
        self.ctx.abort.clear()
        producer = asyncio.create_task(self._drive(prompt))

        def finished(_task: asyncio.Task[None]) -> None:
            # Events emitted after this point would queue behind _DONE and be lost: from now on the
            # session counts as idle, so emitters (background agents) take their idle route instead.
            if self._queue is queue:
                self._queue = None
            queue.put_nowait(_DONE)

        producer.add_done_callback(finished)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
            producer.result()
        finally:
            if not producer.done():
                self.ctx.abort.set()
                producer.cancel()
                with contextlib.suppress(BaseException):
                    await producer
            self._queue = None

    # -- the loop -------------------------------------------------------------------------------

    def _event_fields(self) -> dict[str, Any]:
        return {"agent_id": self.config.agent_id, "parent_tool_use_id": self.config.parent_tool_use_id}

    def _append(self, message: Message, extra: dict[str, Any] | None = None) -> str:
        self.messages.append(message)
        if self.config.transcript is not None:
            try:
                return self.config.transcript.append(message, extra=extra)
            except OSError as exc:
                self.emit(ErrorEvent(message=f"could not write transcript: {exc}", **self._event_fields()))
        return str(uuid.uuid4())

    async def _drive(self, prompt: str | list[Block] | Message) -> None:
        started = time.monotonic()
        message = prompt if isinstance(prompt, dict) else user_message(prompt)
        subtype, is_error, result_text = "success", False, ""
        terminal_reason, api_error_status, in_tools = "completed", None, False
        hooks, refused, stop_continuations = self.config.hooks, False, 0
        self._hook_halt = None
        turns_this_run = 0
        try:
            if hooks is not None:  # SessionStart / SubagentStart / UserPromptSubmit may add context or refuse
                message, start = await hooks.before_run(message, has_history=bool(self.messages),
                                                        model=self.config.model, ctx=self.ctx)
                self._emit_hook_notices(start.notices)
                refused = start.blocked or start.halt
                if refused:
                    subtype, is_error = "error_during_execution", True
                    result_text = start.reason or start.stop_reason or "A hook stopped this prompt."
                    terminal_reason = "hook_stopped"
            if not refused:
                message = self._with_plan_reminder(message)
                line_uuid = self._append(message)
                self.emit(UserMessageEvent(message=message, uuid=line_uuid, **self._event_fields()))
            while not refused:
                if self.ctx.abort.is_set():
                    raise asyncio.CancelledError
                if self.config.budget is not None and self.config.budget.exceeded:
                    subtype, is_error, result_text = BUDGET_SUBTYPE, True, self.config.budget.describe()
                    break
                if self.config.max_turns is not None and turns_this_run >= self.config.max_turns:
                    subtype, is_error = "error_max_turns", True
                    result_text = result_text or f"Reached the maximum number of turns ({self.config.max_turns})."
                    terminal_reason = "max_turns"
                    break
                if self.config.before_turn is not None:
                    await self.config.before_turn(self)
                    if self.ctx.abort.is_set():  # the hook stopped the run (a sub-agent at one of its limits)
                        raise asyncio.CancelledError
                if self.config.context_policy is not None:
                    await fit_context(self, self.config.context_policy)
                in_tools = False
                assistant = await self._model_turn()
                turns_this_run += 1
                self.totals.num_turns += 1
                result_text = text_of(assistant) or result_text
                if self.config.budget is not None and self.config.budget.exceeded:
                    # As Claude Code: the turn that reached the budget is the last; its tool calls do not run.
                    subtype, is_error, result_text = BUDGET_SUBTYPE, True, self.config.budget.describe()
                    break
                tool_uses = tool_uses_of(assistant)
                if not tool_uses:
                    if hooks is not None and await self._stop_hook_continues(hooks, result_text, stop_continuations):
                        stop_continuations += 1
                        continue
                    break
                in_tools = True  # until the next model turn starts: an abort seen before it stopped the tools
                await self._run_tool_round(tool_uses)
                if self._hook_halt is not None:  # a hook answered continue: false
                    result_text = self._hook_halt
                    terminal_reason = "hook_stopped"
                    break
        except asyncio.CancelledError:
            subtype, is_error = "error_during_execution", True
            result_text = "Interrupted by the user."
            self.last_stop_reason = "aborted"
            terminal_reason = "aborted_tools" if in_tools else "aborted_streaming"
            if self.config.budget is not None and self.config.budget.exceeded:  # the budget stopped the run
                subtype, result_text = BUDGET_SUBTYPE, self.config.budget.describe()
        except CatuiError as exc:
            subtype, is_error = "error_during_execution", True
            result_text = str(exc)
            api_error_status = exc.status if isinstance(exc, ProviderError) else None
            terminal_reason = "api_error" if isinstance(exc, ProviderError) else "error"
            self.emit(ErrorEvent(message=str(exc), **self._event_fields()))
        if self._run_rules:
            self.ctx.permissions = self.ctx.permissions.without_rules(self._run_rules)
            self._run_rules.clear()
        self.emit(self.result_event(subtype, is_error, result_text, started=started, terminal_reason=terminal_reason,
                                    api_error_status=api_error_status))

    def result_event(self, subtype: str, is_error: bool, result_text: str, *, started: float,
                     terminal_reason: str | None = None, api_error_status: int | None = None) -> ResultEvent:
        """A run's closing event with the session's totals so far (``started``: the run's monotonic start).

        Front ends use it too, to end a run that stopped while no turn was running (the budget tripping
        while print mode waits for background agents).
        """
        return ResultEvent(
            subtype=subtype,
            is_error=is_error,
            result=result_text,
            session_id=self.session_id,
            num_turns=self.totals.num_turns,
            duration_ms=int((time.monotonic() - started) * 1000),
            duration_api_ms=self.totals.api_ms,
            usage=dict(self.usage),
            model_usage=self.config.usage_tracker.model_usage_json(),
            total_cost_usd=round(self.config.usage_tracker.total_cost_usd, 6),
            permission_denials=list(self.permission_denials),
            stop_reason=self.last_stop_reason,
            terminal_reason=terminal_reason,
            api_error_status=api_error_status,
            **self._event_fields(),
        )

    def build_request(self) -> ModelRequest:
        return ModelRequest(
            model=self.config.model,
            messages=self.messages,
            system=self.config.system_prompt,
            tools=[tool.to_api() for tool in self.config.tools],
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            thinking=self.config.thinking,
            effort=self.config.effort,
            metadata={"agent_id": self.config.agent_id, **self.config.request_metadata},
        )

    async def _model_turn(self) -> Message:
        """One model turn; a request refused as too long is compacted and sent again, once."""
        try:
            return await self._turn_with_fallback()
        except ProviderError as exc:
            policy = self.config.context_policy
            if policy is None or not is_prompt_too_long(exc) or len(self.messages) < 2 or self.ctx.abort.is_set():
                raise
            await compact_session(self, policy, trigger="auto", keep_recent=False)
            return await self._turn_with_fallback()

    async def _turn_with_fallback(self) -> Message:
        """An overloaded model hands the turn to the fallback model, once, if one is set."""
        try:
            return await self._stream_turn()
        except ProviderError as exc:
            fallback = self.config.fallback
            if fallback is None or not is_overloaded(exc) or self.ctx.abort.is_set():
                raise
            self.config.fallback = None
            self.config.provider, self.config.model = fallback
            self.emit(SystemEvent(subtype="model_fallback", data={"model": fallback[1], "reason": str(exc)},
                                  **self._event_fields()))
            return await self._stream_turn()

    async def _stream_turn(self) -> Message:
        request = self.build_request()
        accumulator = MessageAccumulator()
        api_started = time.monotonic()
        fields = self._event_fields()
        stream = self.config.provider.stream(request)

        async def consume() -> None:
            async for event in stream:
                if event.get("type") == STREAM_RETRY:
                    data = {**stream_retry_data(event, accumulator.message),
                            "parent_tool_use_id": fields["parent_tool_use_id"]}
                    self.emit(SystemEvent(subtype="stream_retry", data=data, **fields))
                    accumulator.feed(event)
                    continue
                accumulator.feed(event)
                if self.config.include_partial_messages:
                    self.emit(StreamEventRaw(event=event, **fields))
                if event.get("type") == "content_block_delta":
                    delta = event.get("delta", {})
                    if delta.get("type") == "text_delta":
                        self.emit(TextDelta(text=delta.get("text", ""), **fields))
                    elif delta.get("type") == "thinking_delta":
                        self.emit(ThinkingDelta(text=delta.get("thinking", ""), **fields))

        # The stream is consumed in its own task and raced against the abort signal, so an abort
        # lands at once even while the provider is still waiting for its first byte.
        reader = asyncio.ensure_future(consume())
        aborted = asyncio.ensure_future(self.ctx.abort.wait())
        try:
            await asyncio.wait({reader, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader
                raise asyncio.CancelledError
            reader.result()
        finally:
            aborted.cancel()
            if not reader.done():
                reader.cancel()
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
            self.totals.api_ms += int((time.monotonic() - api_started) * 1000)
        if not accumulator.done:
            # Half a message is never kept: a provider that stops early without raising ends the run.
            raise ProviderError("the model stream ended before message_stop; the partial message was discarded")
        final = accumulator.message
        self.last_stop_reason = final.get("stop_reason")
        usage = final.get("usage") or {}
        model = final.get("model") or self.config.model
        add_usage(self.usage, usage)
        self.config.usage_tracker.add(model, usage)
        self.emit(UsageEvent(model=model, usage=usage, **fields))
        assistant: Message = {"role": "assistant", "content": [b for b in final.get("content", []) if b]}
        line_uuid = self._append(assistant)
        self.context_mark = (len(self.messages), total_tokens(usage))
        self.emit(AssistantMessageEvent(message=assistant, model=model, uuid=line_uuid,
                                        message_id=str(final.get("id") or ""), stop_reason=final.get("stop_reason"),
                                        usage=dict(usage), **fields))
        return assistant

    async def _run_tool_round(self, tool_uses: list[Block]) -> None:
        """Run one assistant message's tool calls and append their results as one user message."""
        results: dict[str, tuple[Block, Any]] = {}
        batch: list[Block] = []

        async def flush_batch() -> None:
            if batch:
                # At most N at a time, a new one starting as soon as one ends (observed section 14).
                starters = [functools.partial(self._run_one_tool, b) for b in batch]
                outcomes = await run_windowed(starters, max(1, self.config.max_tool_use_concurrency))
                for block, outcome in zip(batch, outcomes, strict=True):
                    results[block["id"]] = outcome
                batch.clear()

        for block in tool_uses:
            tool = self._tools_by_name.get(block.get("name", ""))
            safe = False
            if tool is not None:
                try:
                    safe = tool.is_concurrency_safe(tool.input_model.model_validate(block.get("input") or {}))
                except ValidationError:
                    safe = True  # it will fail validation on its own, harmlessly, in the batch
            if safe:
                batch.append(block)
                continue
            await flush_batch()
            results[block["id"]] = await self._run_one_tool(block)
        await flush_batch()

        content: list[Block] = [results[b["id"]][0] for b in tool_uses]
        content.extend(block for b in tool_uses for block in self._follow_ups.pop(b["id"], []))
        data = {b["id"]: results[b["id"]][1] for b in tool_uses if results[b["id"]][1] is not None}
        if self.config.pending_messages is not None:
            for text in self.config.pending_messages():
                content.append({"type": "text", "text": text})
        message = self._with_plan_reminder(user_message(content))
        line_uuid = self._append(message, extra=transcript_tool_results(data, tool_uses))
        self.emit(UserMessageEvent(message=message, tool_use_results=data, uuid=line_uuid, **self._event_fields()))

    def _with_plan_reminder(self, message: Message) -> Message:
        """Add the plan-mode reminder (plan file path, rules) once per entry into plan mode."""
        reminder = plan_mode_reminder(self.ctx)
        if reminder is None:
            return message
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        return {**message, "content": [*blocks, {"type": "text", "text": reminder}]}

    async def _run_one_tool(self, block: Block) -> tuple[Block, Any]:
        tool_use_id = block["id"]
        name = block.get("name", "")
        raw_input = block.get("input") or {}
        fields = self._event_fields()
        self.totals.tool_uses += 1
        self.emit(ToolStartEvent(tool_use_id=tool_use_id, name=name, input=raw_input, **fields))
        result = await self._execute_tool(name, raw_input, tool_use_id)
        if result.data is not None and isinstance(result.data, dict) and "permission_mode" in result.data:
            mode = result.data["permission_mode"]
            self.ctx.permissions = self.ctx.permissions.with_mode(mode)
        self.emit(
            ToolEndEvent(
                tool_use_id=tool_use_id, name=name, is_error=result.is_error, content=result.content,
                data=result.data, **fields,
            )
        )
        if result.follow_up:
            self._follow_ups[tool_use_id] = list(result.follow_up)
        if result.server_tool_use:
            add_usage(self.usage, {"server_tool_use": result.server_tool_use})
        if result.run_rules:  # granted until this run ends (_drive takes them back)
            self.ctx.permissions = self.ctx.permissions.with_rules(*result.run_rules)
            self._run_rules.extend(result.run_rules)
        return tool_result_block(tool_use_id, result.content, is_error=result.is_error), result.data

    async def _execute_tool(self, name: str, raw_input: dict[str, Any], tool_use_id: str) -> ToolResult:
        tool = self._tools_by_name.get(name)
        if tool is None:
            return ToolResult(f"<tool_use_error>Error: No such tool available: {name}</tool_use_error>", is_error=True)
        try:
            args = tool.input_model.model_validate(raw_input)
        except ValidationError as exc:
            return ToolResult(format_validation_error(tool.name, exc), is_error=True)
        # Set before hooks and the permission check, so that can_use_tool callbacks know which call asks.
        CURRENT_TOOL_USE_ID.set(tool_use_id)
        hooks = self.config.hooks
        pre = None
        if hooks is not None:
            pre = await hooks.pre_tool_use(tool.name, raw_input, tool_use_id, self.ctx)
            self._emit_hook_notices(pre.notices)
            if pre.halt:
                self._hook_halt = pre.stop_reason or "A PreToolUse hook stopped the agent."
            if pre.updated_input is not None and pre.decision != "deny":
                try:  # a hook's rewritten input must still fit the tool
                    args = tool.input_model.model_validate(pre.updated_input)
                except ValidationError as exc:
                    return ToolResult(format_validation_error(tool.name, exc), is_error=True)
                raw_input = pre.updated_input
        request = tool.permission_request(args, self.ctx)
        decision = self.ctx.permissions.decide(request)
        if pre is not None and (pre.decision is not None or pre.halt):
            decision = apply_hook_decision(decision, pre, tool.name)
            if pre.halt and decision.behavior != "deny":
                decision = PermissionDecision("deny", self._hook_halt or "")
        if decision.behavior == "ask":
            if self.config.can_use_tool is not None:
                decision = await self.config.can_use_tool(tool, raw_input, request, self.ctx)
                if decision.behavior == "allow" and decision.updated_input is not None:
                    try:  # the approver's rewritten input must still fit the tool
                        args = tool.input_model.model_validate(decision.updated_input)
                    except ValidationError as exc:
                        return ToolResult(format_validation_error(tool.name, exc), is_error=True)
                    raw_input = decision.updated_input
            else:
                decision = PermissionDecision(
                    "deny",
                    decision.reason
                    or f"{tool.name} needs approval, and nobody can be asked in this mode. "
                    f"Allow it with --allowedTools '{tool.name}' or a permissions.allow rule in settings.",
                )
        if decision.behavior != "allow":
            self.permission_denials.append({"tool_name": tool.name, "tool_use_id": tool_use_id, "tool_input": raw_input})
            return ToolResult(decision.reason or f"Permission to use {tool.name} was denied.", is_error=True)
        try:
            result = await tool.call(args, self.ctx)
        except asyncio.CancelledError:
            raise
        except CatuiError as exc:
            result = ToolResult(f"Error: {exc}", is_error=True)
        except Exception as exc:  # a tool bug must not end the session; the model sees what failed
            result = ToolResult(f"Error: {name} failed: {type(exc).__name__}: {exc}", is_error=True)
        if hooks is not None:
            result = await self._post_tool_hooks(hooks, tool.name, raw_input, result, tool_use_id)
        return result

    # -- hooks (catui.hooks); only reached when config.hooks is set --------------------------------

    def _emit_hook_notices(self, notices: list[HookNotice]) -> None:
        for notice in notices:
            self.emit(SystemEvent(subtype="hook_response", data=notice.as_event_data(), **self._event_fields()))

    async def _post_tool_hooks(
        self, hooks: HookRunner, tool_name: str, tool_input: dict[str, Any], result: ToolResult, tool_use_id: str
    ) -> ToolResult:
        if result.is_error:
            post = await hooks.post_tool_use_failure(tool_name, tool_input, content_text(result.content),
                                                     tool_use_id, self.ctx)
        else:
            response = result.data if result.data is not None else result.content
            post = await hooks.post_tool_use(tool_name, tool_input, response, tool_use_id, self.ctx)
        self._emit_hook_notices(post.notices)
        if post.halt:
            self._hook_halt = post.stop_reason or f"A {post.event} hook stopped the agent."
        return result_with_hook_feedback(result, post, tool_name)

    async def _stop_hook_continues(self, hooks: HookRunner, last_text: str, continuations: int) -> bool:
        """Run Stop / SubagentStop hooks; True when one blocked and the reason went back to the model."""
        if self.ctx.abort.is_set():
            return False
        outcome = await hooks.at_stop(last_text, stop_hook_active=continuations > 0, ctx=self.ctx)
        self._emit_hook_notices(outcome.notices)
        if not outcome.blocked or outcome.halt:
            return False
        if continuations >= MAX_STOP_HOOK_CONTINUATIONS:
            self.emit(ErrorEvent(message=f"{outcome.event} hooks blocked stopping {continuations} times in a row; "
                                 "the agent stops anyway. Make the hook check stop_hook_active.",
                                 **self._event_fields()))
            return False
        message = user_message(stop_feedback_text(outcome))
        line_uuid = self._append(message)
        self.emit(UserMessageEvent(message=message, uuid=line_uuid, **self._event_fields()))
        return True
