"""One model turn: stream the request, turn stream events into session events, keep the assistant message.

A request refused as too long is compacted and sent again once; an overloaded
model hands the turn to the fallback model once, if one is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from catui.errors import ProviderError
from catui.messages import Message
from catui.models.base import STREAM_RETRY
from catui.models.http_api.accumulate import MessageAccumulator
from catui.session.events import (
    AssistantMessageEvent,
    StreamEventRaw,
    SystemEvent,
    TextDelta,
    ThinkingDelta,
    UsageEvent,
)
from catui.session.failures import is_overloaded, stream_retry_data
from catui.session.usage import add_usage, total_tokens

if TYPE_CHECKING:
    from catui.session.loop_state import LoopDeps, LoopState
    from catui.telemetry.hooks import ModelRequestObservation


async def model_turn(state: LoopState, session: LoopDeps) -> Message:
    """One model turn; a request refused as too long is compacted and sent again, once."""
    try:
        return await turn_with_fallback(state, session)
    except ProviderError as exc:
        from catui.session.compaction import compact_session, is_prompt_too_long  # lazy (catui.lazy)

        policy = session.config.context_policy
        if policy is None or not is_prompt_too_long(exc) or len(state.messages) < 2 or session.ctx.abort.is_set():
            raise
        await compact_session(state, session, policy, trigger="auto", keep_recent=False)
        return await turn_with_fallback(state, session)


async def turn_with_fallback(state: LoopState, session: LoopDeps) -> Message:
    """An overloaded model hands the turn to the fallback model, once, if one is set."""
    try:
        return await stream_turn(state, session)
    except ProviderError as exc:
        fallback = session.config.fallback
        if fallback is None or not is_overloaded(exc) or session.ctx.abort.is_set():
            raise
        session.config.fallback = None
        session.config.provider, session.config.model = fallback
        session.emit(SystemEvent(subtype="model_fallback", data={"model": fallback[1], "reason": str(exc)},
                                 **session.event_fields()))
        return await stream_turn(state, session)


async def stream_turn(state: LoopState, session: LoopDeps) -> Message:
    """Send the session's request and stream the answer; the assistant message, appended to the session."""
    telemetry = session.config.telemetry
    if telemetry is None:
        return await _stream_turn(state, session, None)
    observed = telemetry.model_request(
        model=session.config.model, effort=session.config.effort,
        query_source=str(session.config.request_metadata.get("query_source") or
                         ("main" if session.config.agent_id is None else "agent")),
        system=session.config.provider.name)
    try:
        return await _stream_turn(state, session, observed)
    except BaseException as exc:
        observed.failed(exc)
        raise


async def _stream_turn(state: LoopState, session: LoopDeps, observed: ModelRequestObservation | None) -> Message:
    request = session.build_request()
    accumulator = MessageAccumulator()
    api_started = time.monotonic()
    fields = session.event_fields()
    frames = state.timings.request()
    stream = session.config.provider.stream(request)

    async def consume() -> None:
        async for event in stream:
            if frames.feed(event) and observed is not None:
                observed.first_event()
            if event.get("type") == STREAM_RETRY:
                data = {**stream_retry_data(event, accumulator.message),
                        "parent_tool_use_id": fields["parent_tool_use_id"]}
                session.emit(SystemEvent(subtype="stream_retry", data=data, **fields))
                accumulator.feed(event)
                continue
            accumulator.feed(event)
            if session.config.include_partial_messages:
                session.emit(StreamEventRaw(event=event, **fields))
            if event.get("type") == "content_block_delta":
                delta = event.get("delta", {})
                if delta.get("type") == "text_delta":
                    session.emit(TextDelta(text=delta.get("text", ""), **fields))
                elif delta.get("type") == "thinking_delta":
                    session.emit(ThinkingDelta(text=delta.get("thinking", ""), **fields))

    # The stream is consumed in its own task and raced against the abort signal, so an abort
    # lands at once even while the provider is still waiting for its first byte.
    reader = asyncio.ensure_future(consume())
    aborted = asyncio.ensure_future(session.ctx.abort.wait())
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
        state.totals.api_ms += int((time.monotonic() - api_started) * 1000)
    if not accumulator.done:
        # Half a message is never kept: a provider that stops early without raising ends the run.
        raise ProviderError("the model stream ended before message_stop; the partial message was discarded")
    final = accumulator.message
    state.last_stop_reason = final.get("stop_reason")
    usage = final.get("usage") or {}
    model = final.get("model") or session.config.model
    if observed is not None:
        observed.finished(model=model, message=final)
    add_usage(state.usage, usage)
    session.config.usage_tracker.add(model, usage)
    session.emit(UsageEvent(model=model, usage=usage, **fields))
    assistant: Message = {"role": "assistant", "content": [b for b in final.get("content", []) if b]}
    line_uuid = session.append_message(assistant)
    state.context_mark = (len(state.messages), total_tokens(usage))
    session.emit(AssistantMessageEvent(message=assistant, model=model, uuid=line_uuid,
                                       message_id=str(final.get("id") or ""), stop_reason=final.get("stop_reason"),
                                       usage=dict(usage), **fields))
    return assistant
