"""Compaction: when a conversation nears its model's context window, replace its older part with a summary.

The summary is written by the session's own model: one extra request with
the older messages, catui's summarising instructions (plus ``/compact``'s
and any ``PreCompact`` hook's) and no tool use expected. The conversation
then goes on from ``[summary] + the most recent messages`` (those that fit in
a fifth of the usable window, starting at an assistant message so tool calls
keep their results).

Nothing is lost on disk: the transcript gets a ``compact_boundary`` system
line, then the summary (``isCompactSummary``), then the kept messages again;
a resume reads from the last boundary on (``store.conversation``). The run's
stream carries a ``compact_boundary`` system event with Claude Code's
``compact_metadata`` (``trigger``, ``pre_tokens``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError, ProviderError
from catui.messages import Block, Message, text_of, user_message
from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.session.context_window import ContextPolicy
from catui.session.events import SystemEvent
from catui.session.transcript import COMPACT_BOUNDARY
from catui.session.usage import add_usage

if TYPE_CHECKING:
    from catui.session.loop_state import LoopDeps, LoopState

SUMMARY_MAX_TOKENS = 8_000
KEEP_FRACTION = 5
"""The most recent messages kept verbatim fill at most 1/KEEP_FRACTION of the usable window."""

SUMMARISER_SYSTEM = (
    "You write the working memory of a coding agent whose conversation has grown too long to keep. "
    "Read the conversation and write a summary that lets the agent carry on as if it still had every "
    "message. The summary replaces the conversation, so anything it leaves out is gone."
)

SUMMARY_REQUEST = """Summarise the conversation so far for your own later use. Do not call any tools: \
answer with text only. Cover, under plain headings:

1. The user's requests and intent, in their own words where it matters.
2. Decisions taken and constraints agreed on.
3. Files and code: which files were read, changed or created, with the exact snippets that matter.
4. Errors met and how they were fixed.
5. Work finished, work in progress, and what is still pending.
6. The immediate next step, if one was under way.

Be specific (paths, names, commands, numbers); leave out pleasantries."""

CONTINUATION_NOTE = ("Carry on with the task that was in progress when the conversation was compacted; "
                     "do not ask the user to repeat anything.")


class CompactionError(CatuiError):
    """Compaction could not be done (the summary request failed, or a PreCompact hook refused)."""


class ContextWindowExceededError(CatuiError):
    """The conversation does not fit the model's context window, even after compaction."""


@dataclass(frozen=True)
class CompactionOutcome:
    """What one compaction did."""

    trigger: str  # "auto" | "manual"
    pre_tokens: int
    post_tokens: int
    summarised: int
    kept: int
    summary: str


def estimate_tokens(items: list[Any]) -> int:
    """About four characters a token, over the JSON of ``items`` (messages, system blocks, tool schemas)."""
    return sum(len(json.dumps(item, ensure_ascii=False)) for item in items) // 4


def conversation_tokens(state: LoopState, session: LoopDeps) -> int:
    """The size of the next request: the last measured usage, plus an estimate of what came after it."""
    mark = state.context_mark
    messages = state.messages
    if mark is not None and mark[0] <= len(messages):
        return mark[1] + estimate_tokens(messages[mark[0]:])
    config = session.config
    tool_chars = sum(tool.api_chars() for tool in config.tools)
    return estimate_tokens([*messages, *config.system_prompt]) + tool_chars // 4


def is_prompt_too_long(exc: ProviderError) -> bool:
    """Whether the provider refused the request because it is larger than the model's context."""
    text = str(exc).lower()
    return any(marker in text for marker in ("prompt is too long", "context_length_exceeded",
                                             "maximum context length", "context window"))


async def fit_context(state: LoopState, session: LoopDeps, policy: ContextPolicy) -> CompactionOutcome | None:
    """Before a request: compact when the conversation has reached the auto-compaction threshold."""
    config = session.config
    tokens = conversation_tokens(state, session)
    if tokens < policy.auto_threshold(config.model, config.max_tokens) or len(state.messages) < 2:
        return None
    usable = policy.usable(config.model, config.max_tokens)
    if not policy.auto_enabled:
        if tokens >= usable:
            raise ContextWindowExceededError(
                f"the conversation ({tokens} tokens) no longer fits the context window of {config.model} "
                f"({policy.window(config.model)} tokens) and auto-compaction is off; run /compact, or "
                "turn it back on (autoCompactEnabled, DISABLE_AUTO_COMPACT)")
        return None
    try:
        return await compact_session(state, session, policy, trigger="auto")
    except CompactionError:
        if tokens >= usable:
            raise
        return None  # a hook refused, but the request still fits: go on uncompacted


async def compact_session(state: LoopState, session: LoopDeps, policy: ContextPolicy, *, trigger: str,
                          instructions: str | None = None, keep_recent: bool = True) -> CompactionOutcome:
    """Summarise the older part of ``session``'s conversation and continue from the summary.

    ``keep_recent=False`` summarises everything (after the provider refused the request as too long, the
    latest messages may be what made it so).
    """
    config = session.config
    if not policy.compact_enabled:
        raise CompactionError("compaction is turned off (DISABLE_COMPACT); unset it to compact")
    messages = list(state.messages)
    if not messages:
        raise CompactionError("there is nothing to compact yet: the conversation is empty")
    pre_tokens = conversation_tokens(state, session)
    instructions = await _pre_compact_hooks(state, session, trigger, instructions)
    usable = policy.usable(config.model, config.max_tokens)
    split = keep_from(messages, usable // KEEP_FRACTION) if keep_recent else len(messages)
    older, kept = messages[:split], messages[split:]
    summary = await _summarise(state, session, older, instructions)
    summary_message = user_message(summary_text(summary, continuing=trigger == "auto"))
    session.replace_messages([summary_message, *kept])
    _record(state, session, trigger, pre_tokens, summary_message, kept)  # the conversation and its lines agree
    post_tokens = conversation_tokens(state, session)
    session.emit(SystemEvent(
        subtype=COMPACT_BOUNDARY,
        # A sub-agent's boundary names the Agent call it belongs to; the main agent's has Claude Code's shape.
        data={"compact_metadata": {"trigger": trigger, "pre_tokens": pre_tokens},
              **({"parent_tool_use_id": config.parent_tool_use_id} if config.parent_tool_use_id else {})},
        agent_id=config.agent_id, parent_tool_use_id=config.parent_tool_use_id,
    ))
    if config.hooks is not None and config.hooks.has("PostCompact"):
        post = await config.hooks.run_event("PostCompact", {"trigger": trigger, "compact_summary": summary},
                                            subject=trigger, ctx=session.ctx)
        _emit_notices(state, session, post.notices)
    if post_tokens >= usable:
        raise ContextWindowExceededError(
            f"the conversation does not fit the context window of {config.model} "
            f"({policy.window(config.model)} tokens) even after compaction: {post_tokens} tokens remain, "
            "most of them in the latest messages; start a new conversation or send smaller inputs "
            "(or raise the window: contextWindow setting, CATUI_CONTEXT_WINDOW)")
    return CompactionOutcome(trigger=trigger, pre_tokens=pre_tokens, post_tokens=post_tokens,
                             summarised=len(older), kept=len(kept), summary=summary)


def keep_from(messages: list[Message], budget: int) -> int:
    """Where the kept tail starts: the earliest assistant message from which the rest fits ``budget``.

    The tail starts at an assistant message so that the summary (a user
    message) comes before it and every tool call in it keeps its result. When
    nothing fits, everything is summarised (the index is ``len(messages)``).
    """
    best = len(messages)
    size = 0
    for index in range(len(messages) - 1, 0, -1):
        size += estimate_tokens([messages[index]])
        if size > budget:
            break
        if messages[index].get("role") == "assistant":
            best = index
    return best


def summary_text(summary: str, *, continuing: bool) -> str:
    """The user message the conversation continues from."""
    text = ("This conversation continues an earlier one that grew too long for the context window. "
            f"catui summarised the earlier part:\n\n<summary>\n{summary.strip()}\n</summary>")
    return f"{text}\n\n{CONTINUATION_NOTE}" if continuing else text


async def _pre_compact_hooks(state: LoopState, session: LoopDeps, trigger: str, instructions: str | None) -> str | None:
    hooks = session.config.hooks
    if hooks is None or not hooks.has("PreCompact"):
        return instructions
    outcome = await hooks.run_event("PreCompact", {"trigger": trigger, "custom_instructions": instructions or ""},
                                    subject=trigger, ctx=session.ctx)
    _emit_notices(state, session, outcome.notices)
    if outcome.blocked or outcome.halt:
        reason = outcome.reason or outcome.stop_reason or "no reason given"
        raise CompactionError(f"a PreCompact hook refused the compaction: {reason}")
    extra = [text.strip() for text in outcome.additional_context if text.strip()]
    return "\n\n".join([*([instructions] if instructions else []), *extra]) or None


async def _summarise(state: LoopState, session: LoopDeps, older: list[Message], instructions: str | None) -> str:
    config = session.config
    request_text = SUMMARY_REQUEST + (f"\n\nAlso follow these instructions:\n{instructions}" if instructions else "")
    request_messages = _with_request(older, request_text)
    request = ModelRequest(
        model=config.model,
        messages=request_messages,
        system=[{"type": "text", "text": SUMMARISER_SYSTEM}],
        # Sent because the messages hold tool calls (the API wants their tools declared); none is expected.
        tools=[tool.to_api() for tool in config.tools],
        max_tokens=min(config.max_tokens, SUMMARY_MAX_TOKENS),
        metadata={"agent_id": config.agent_id, "query_source": "compact"},
    )
    accumulator = MessageAccumulator()
    stream = config.provider.stream(request)
    try:
        async for event in stream:
            accumulator.feed(event)
    except ProviderError as exc:
        raise CompactionError(f"could not compact the conversation: the summary request failed: {exc}") from exc
    finally:
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()
    if not accumulator.done:
        raise CompactionError("could not compact the conversation: the summary stream ended early")
    final = accumulator.message
    usage = final.get("usage") or {}
    add_usage(state.usage, usage)
    config.usage_tracker.add(final.get("model") or config.model, usage)
    summary = text_of({"role": "assistant", "content": final.get("content") or []}).strip()
    if not summary:
        raise CompactionError("could not compact the conversation: the model answered the summary request "
                              "without any text")
    return summary


def _with_request(older: list[Message], request_text: str) -> list[Message]:
    """``older`` with the summary request as the last user turn (merged into a trailing user message)."""
    if older and older[-1].get("role") == "user":
        last = older[-1]
        content = last.get("content")
        blocks: list[Block] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        return [*older[:-1], {**last, "content": [*blocks, {"type": "text", "text": request_text}]}]
    return [*older, user_message(request_text)]


def _record(state: LoopState, session: LoopDeps, trigger: str, pre_tokens: int, summary: Message, kept: list[Message]) -> None:
    """The boundary, the summary and the kept messages, appended to the transcript in one write.

    A failure raises TranscriptWriteError (the run ends with it); the lines wait in the writer.
    """
    transcript = session.config.transcript
    if transcript is None:
        return
    transcript.append_compaction({"trigger": trigger, "preTokens": pre_tokens}, summary, kept)


def _emit_notices(state: LoopState, session: LoopDeps, notices: list[Any]) -> None:
    for notice in notices:
        session.emit(SystemEvent(subtype="hook_response", data=notice.as_event_data(),
                                 agent_id=session.config.agent_id,
                                 parent_tool_use_id=session.config.parent_tool_use_id))
