"""What a finished child's parent receives: its answer, or why it failed or stopped (spec 6.1 [12], 12.1)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from catui.errors import CatuiError
from catui.messages import Message
from catui.models.resolve import create_provider, resolve_model
from catui.safety.handoff import UNAVAILABLE_NOTE, check_handoff_safety
from catui.session.events import ResultEvent
from catui.session.usage import total_tokens
from catui.subagents.deps import RuntimeDeps
from catui.subagents.hand_back import tools_used
from catui.subagents.limits import LimitHit
from catui.subagents.result import (
    ONE_SHOT_AGENT_TYPES,
    AgentResult,
    NoAssistantMessagesError,
    extract_agent_result,
    format_agent_tool_result,
    merge_back_hint,
)
from catui.subagents.run import SubagentRun
from catui.subagents.structured_output import MAX_ATTEMPTS, StructuredOutputTool, find_structured_output
from catui.subagents.worktrees import KeptWorktree, WorktreeLeases
from catui.telemetry.events import AGENT_TOOL_COMPLETED
from catui.tools.base import ToolResult
from catui.tools.worktree_merge import worktree_merge_allowed


class RunConcluder:
    """Turns a stopped run into its tool_result; reviews the handoff, settles the worktree, records telemetry."""

    def __init__(self, deps: RuntimeDeps, worktrees: WorktreeLeases) -> None:
        self.deps = deps
        self.worktrees = worktrees

    async def finish(self, run: SubagentRun) -> ToolResult:
        """The tool_result of a child whose run has ended: its answer, or the reason it failed."""
        result, _ = await self.finish_reviewed(run)
        return result

    async def finish_reviewed(self, run: SubagentRun) -> tuple[ToolResult, str | None]:
        """:meth:`finish`, with the handoff review's warning (or degraded note) apart, for background agents."""
        if run.limit_hit is not None and run.aborted:
            kept = await self.worktrees.discard(run.worktree)
            self.record_completed(run, None)
            return limit_result(run, run.limit_hit, kept), None
        structured = find_structured_output(run.session.tools)
        failure = failure_text(run, run.result_event)
        if structured is not None and (failure is None or structured.gave_up) and structured.output is None:
            failure = structured_failure_text(run, structured)
            if failure is not None:
                kept = await self.worktrees.discard(run.worktree)
                self.record_completed(run, None)
                return failed_result(failure, kept), None
        if failure is not None:
            kept = await self.worktrees.discard(run.worktree)
            self.record_completed(run, None)
            if run.stop_requested:
                return stopped_result(run, kept), None
            return failed_result(failure, kept), None
        try:
            result = extract_agent_result(
                run.messages, run.agent_id, agent_type=run.agent_type, prompt=run.request.prompt,
                duration_ms=run.duration_ms, usage=run.last_usage,
            )
        except NoAssistantMessagesError as exc:
            kept = await self.worktrees.discard(run.worktree)
            self.record_completed(run, None)
            return failed_result(f"Agent \"{run.description}\" ({run.agent_type}) failed: {exc}", kept), None
        result.extra.update({"model": run.model.model_id, "modelReason": run.model.reason,
                             "modelResolution": run.model.trace()})
        if structured is not None and structured.output is not None:
            # Typed result: the object is the answer, as JSON text for the model and as data for programs.
            result.structured_output = structured.output
            result.content = [{"type": "text", "text": json.dumps(structured.output, ensure_ascii=False)}]
        warning = await self.handoff_warning(run, result)
        kept_path, kept_branch = await self.worktrees.settle(run.worktree)
        self.record_completed(run, result)
        hint = merge_back_hint(run.agent_id, tool_offered=worktree_merge_allowed(self.deps.settings)) if (
            kept_branch) else None  # git worktrees only: a hook-made one cannot be merged by catui
        compat = self.deps.compat
        formatted = format_agent_tool_result(result, worktree_path=kept_path, worktree_branch=kept_branch,
                                             warning=warning, depth=run.depth, merge_hint=hint,
                                             current=compat.hand_back_framing(), scan=compat.scans_output(),
                                             tools=tools_used(run.own_messages()), resolved_model=run.model.model_id)
        return formatted, warning

    async def crashed(self, run: SubagentRun, exc: BaseException) -> ToolResult:
        """The error result of a child whose driver raised (a bug in it must not take the parent down)."""
        kept = await self.worktrees.discard(run.worktree)
        return failed_result(f"Agent \"{run.description}\" ({run.agent_type}) failed: {type(exc).__name__}: {exc}", kept)

    async def handoff_warning(self, run: SubagentRun, result: AgentResult) -> str | None:
        """Spec 12.1: in auto mode, a classifier reviews the child's work before the parent sees it."""
        if run.parent_ctx.permissions.mode != "auto":
            return None
        return await self.review_transcript(run.messages, run.agent_type, result.total_tool_use_count,
                                            [t.name for t in run.session.tools])

    async def review_transcript(
        self, messages: list[Message], agent_type: str, tool_use_count: int, tool_names: list[str]
    ) -> str | None:
        """The auto-mode handoff review of a child's conversation: its warning, the degraded note, or None."""
        deps = self.deps
        try:
            resolved = resolve_model("haiku", deps.settings, deps.env, within=deps.parent_resolved)
            provider = create_provider(resolved, deps.settings, deps.env)
        except CatuiError:
            return UNAVAILABLE_NOTE
        return await check_handoff_safety(
            messages,
            permission_mode="auto",
            provider=provider,
            model=resolved.model_id,
            subagent_type=agent_type,
            total_tool_use_count=tool_use_count,
            tool_names=tool_names,
            telemetry=deps.telemetry,
        )

    def record_completed(self, run: SubagentRun, result: AgentResult | None) -> None:
        """The ``catui_agent_tool_completed`` record (spec 16) and OpenTelemetry's ``subagent_completed`` event."""
        otel = run.session.config.telemetry
        if otel is not None:
            otel.subagent_completed(
                agent_id=run.agent_id, agent_type=run.agent_type, duration_ms=run.duration_ms,
                status="completed" if result is not None else ("stopped" if run.aborted else "failed"),
                total_tokens=result.total_tokens if result else total_tokens(run.last_usage),
                tool_uses=result.total_tool_use_count if result else run.tool_use_count, is_async=run.is_async)
        telemetry = self.deps.telemetry
        if telemetry is None:
            return
        assistants = [m for m in run.messages if m.get("role") == "assistant"]
        telemetry.record(
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
                "depth": run.depth,
            },
        )


def answer_text(result: ToolResult) -> str:
    """The child's answer inside a finished run's tool_result (without the agentId/usage trailer)."""
    data = result.data if isinstance(result.data, Mapping) else {}
    blocks = data.get("content")
    if isinstance(blocks, list):
        return "\n\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping))
    if isinstance(result.content, str):
        return result.content
    texts = [str(b.get("text", "")) for b in result.content if b.get("type") == "text"]
    return texts[0] if texts else ""


def failed_result(text: str, kept: KeptWorktree) -> ToolResult:
    """A failed child's error result; a worktree it changed is kept and named, as in a successful result."""
    path, branch = kept
    if path is None:
        return ToolResult(text, is_error=True)
    lines = [f"worktreePath: {path}", *([f"worktreeBranch: {branch}"] if branch else [])]
    return ToolResult("\n".join([text, *lines]), is_error=True,
                      data={"worktreePath": path, **({"worktreeBranch": branch} if branch else {})})


def stopped_result(run: SubagentRun, kept: KeptWorktree) -> ToolResult:
    """The error result of a child stopped by request: what it had written so far, how to continue it."""
    headline = f"Agent \"{run.description}\" ({run.agent_type}) was stopped before it finished."
    return _ended_early(run, headline, kept, {"status": "stopped"}, total_tokens(run.last_usage))


def _ended_early(
    run: SubagentRun, headline: str, kept: KeptWorktree, status: dict[str, Any], tokens: int
) -> ToolResult:
    """A child stopped before its answer (by request or at a limit): its partial text and how to continue it."""
    partial = run.latest_text()
    lines = [headline]
    if partial:
        lines += ["Its last text before it was stopped:", partial]
    else:
        lines.append("It had written no text yet.")
    if run.agent_type not in ONE_SHOT_AGENT_TYPES:
        lines.append(f"agentId: {run.agent_id} (use SendMessage with to: '{run.agent_id}' to continue this agent)")
    failed = failed_result("\n".join(lines), kept)
    data: dict[str, Any] = {
        **status,
        "agentId": run.agent_id,
        "agentType": run.agent_type,
        "prompt": run.request.prompt,
        "partialResult": partial,
        "totalDurationMs": run.duration_ms,
        "totalToolUseCount": run.tool_use_count,
        "totalTokens": tokens,
        "modelResolution": run.model.trace(),
    }
    if isinstance(failed.data, Mapping):
        data.update(failed.data)
    return ToolResult(failed.content, is_error=True, data=data)


def structured_failure_text(run: SubagentRun, tool: StructuredOutputTool) -> str | None:
    """Why a child with an ``outputSchema`` gave no typed result, or None when it gave one."""
    who = f"Agent \"{run.description}\" ({run.agent_type})"
    if tool.output is not None:
        return None
    if tool.gave_up:
        return (f"{who} failed: none of its {MAX_ATTEMPTS} StructuredOutput calls matched its outputSchema "
                f"(last problem: {tool.last_error}). Simplify the schema or the task.")
    return (f"{who} failed: it finished without calling StructuredOutput, so there is no result matching its "
            "outputSchema. Ask again, or make the task smaller.")


def end_status(run: SubagentRun, result: ToolResult) -> str:
    """A finished run's task status: completed, failed, stopped, or the limit that stopped it."""
    if not result.is_error:
        return "completed"
    if run.limit_hit is not None and run.aborted:
        return run.limit_hit.status
    return "stopped" if run.stop_requested else "failed"


def limit_result(run: SubagentRun, hit: LimitHit, kept: KeptWorktree) -> ToolResult:
    """The error result of a child stopped at one of its limits: which, what it spent, its last text."""
    headline = f"Agent \"{run.description}\" ({run.agent_type}) was stopped ({hit.status}): {hit.describe()}."
    status = {
        "status": hit.status,
        "limit": {"field": hit.field, "value": hit.limit},
        "spent": {"totalTokens": hit.tokens, "costUsd": hit.cost_usd, "costKnown": hit.cost_usd is not None},
    }
    return _ended_early(run, headline, kept, status, hit.tokens)


def failure_text(run: SubagentRun, end: ResultEvent | None) -> str | None:
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
    if run.current_contract and end.terminal_reason == "api_error":
        return api_error_text(end, run.model.model_id)
    return f"{who} failed: {end.result}"


def api_error_text(end: ResultEvent, model: str) -> str:
    """The current contract's text for a child ended by a failed API call (observed-cc-now.md §4)."""
    status = end.api_error_status
    message = end.api_error_message or end.result
    shown = f"{status} {message}" if status is not None else message
    http = f"HTTP {status}, " if status is not None else ""
    return (f"Agent terminated early due to an API error: API Error: {shown} (error type unknown, {http}"
            f"model sent to the API: {model})")
