"""The retry policy's pieces and the SSE decoder, on their own."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator

from catui.models.http_api.retry import RetryPolicy, parse_retry_after, should_retry_status
from catui.models.http_api.sse import ServerSentEvent, SSEDecoder


def test_retry_after_variants() -> None:
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    parsed = parse_retry_after({"retry-after": in_ten})
    assert parsed is not None and 8.0 <= parsed <= 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_should_retry_statuses_and_header() -> None:
    for status in (408, 409, 429, 500, 502, 503, 504, 529):
        assert should_retry_status(status, {})
    for status in (400, 401, 403, 404, 413, 422):
        assert not should_retry_status(status, {})
    assert not should_retry_status(529, {"x-should-retry": "false"})
    assert should_retry_status(400, {"x-should-retry": "true"})


def test_backoff_doubles_with_jitter_and_a_ceiling() -> None:
    policy = RetryPolicy(max_retries=10, base_delay_s=0.5, max_delay_s=32.0)
    for attempt, full in [(0, 0.5), (1, 1.0), (3, 4.0), (6, 32.0), (20, 32.0)]:
        for _ in range(20):
            assert 0.75 * full <= policy.backoff(attempt) <= full
    assert RetryPolicy.from_env({}).max_retries == 10
    assert RetryPolicy.from_env({"CLAUDE_CODE_MAX_RETRIES": "4"}).max_retries == 4
    assert RetryPolicy.from_env({"CATUI_MAX_RETRIES": "x"}).max_retries == 10


async def decode(chunks: list[bytes]) -> list[ServerSentEvent]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [e async for e in SSEDecoder().aiter_events(source())]


async def test_sse_decoder_handles_any_split_and_line_end() -> None:
    raw = (
        b': comment\r\nevent: a\r\ndata: {"x":\r\ndata: 1}\r\n\r\n'
        b"event: b\ndata: two\n\nid: 7\ndata: three\r\rdata: cut"
    )
    expected = [("a", '{"x":\n1}'), ("b", "two"), (None, "three")]
    for size in (1, 2, 3, 7, len(raw)):
        events = await decode([raw[i : i + size] for i in range(0, len(raw), size)])
        assert [(e.event, e.data) for e in events] == expected, size
        assert events[2].id == "7"


async def test_sse_decoder_keeps_multibyte_characters_split_across_reads() -> None:
    raw = "data: caf\u00e9 \u2603\n\n".encode()
    events = await decode([raw[:10], raw[10:13], raw[13:]])
    assert events[0].data == "caf\u00e9 \u2603"
