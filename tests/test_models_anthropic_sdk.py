"""catui's Anthropic wire handling checked against the official SDK (a test dependency only)."""

from __future__ import annotations

from typing import Any

import pytest

from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.http_api.retry import RetryPolicy
from tests.support.anthropic_server import AnthropicTestServer, Fault
from tests.support.typed_check import check

anthropic = pytest.importorskip("anthropic")
from anthropic.types.message_create_params import MessageCreateParamsStreaming  # noqa: E402

FAST = RetryPolicy(max_retries=1, base_delay_s=0.001, max_delay_s=0.001)

SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "match": {"last_user_contains": "thinking"},
            "content": [
                {
                    "type": "thinking",
                    "thinking": "Considering which files matter before answering at length.",
                },
                {"type": "text", "text": "Here is what I found in the repository, in some detail."},
                {
                    "type": "tool_use",
                    "name": "Read",
                    "input": {"file_path": "/tmp/a.py", "limit": 20, "nested": {"x": [1, 2]}},
                },
                {"type": "tool_use", "name": "Grep", "input": {}},
            ],
            "usage": {"input_tokens": 321, "output_tokens": 55, "cache_creation_input_tokens": 12},
        },
        {
            "match": {"last_is_tool_result": True},
            "content": [{"type": "text", "text": "All done."}],
            "stop_reason": "end_turn",
        },
    ]
}

TOOLS = [
    {
        "name": "Read",
        "description": "Read a file.",
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["file_path"],
            "additionalProperties": False,
        },
    },
    {"name": "Grep", "description": "Search.", "input_schema": {"type": "object", "properties": {}}},
]

CONVERSATION = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
            {"type": "text", "text": "go"},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/x"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file text"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "is_error": True,
                "content": [
                    {"type": "text", "text": "<tool_use_error>nope</tool_use_error>"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                    },
                ],
            },
            {"type": "text", "text": "now with thinking please"},
        ],
    },
]


def request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "model": "claude-opus-4-6",
        "system": [{"type": "text", "text": "You are catui."}, {"type": "text", "text": "Env: linux"}],
        "messages": CONVERSATION,
        "tools": TOOLS,
        "max_tokens": 64000,
        "temperature": 1.0,
        "thinking": {"type": "adaptive"},
        "tool_choice": {"type": "auto"},
    }
    fields.update(overrides)
    return ModelRequest(**fields)


def without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_none(v) for v in value]
    return value


async def catui_message(provider: AnthropicProvider, req: ModelRequest) -> dict[str, Any]:
    accumulator = MessageAccumulator()
    async for event in provider.stream(req):
        accumulator.feed(event)
    return accumulator.message


def test_request_bodies_validate_against_the_sdk_request_type() -> None:
    for caching in (True, False):
        provider = AnthropicProvider(
            base_url="http://127.0.0.1:9", api_key="k", prompt_caching=caching, env={}
        )
        check(provider.build_body(request(temperature=None)), MessageCreateParamsStreaming)
        simple = request(
            messages=[{"role": "user", "content": "hi"}], tools=[], thinking=None, temperature=None
        )
        check(provider.build_body(simple), MessageCreateParamsStreaming)


def test_temperature_is_the_one_field_beyond_the_sdk_type_and_is_dropped_where_rejected() -> None:
    # The 2.x SDK targets API version 2026-10-21, which removed sampling parameters; catui speaks
    # 2023-06-01 (as Claude Code 2.1.92 does), where temperature is still accepted by 4.6-class models.
    provider = AnthropicProvider(base_url="http://127.0.0.1:9", api_key="k", env={})
    body = provider.build_body(request(model="claude-sonnet-4-6"))
    assert body.pop("temperature") == 1.0
    check(body, MessageCreateParamsStreaming)
    for model in ("claude-opus-4-7", "claude-sonnet-5-5"):
        check(provider.build_body(request(model=model)), MessageCreateParamsStreaming)
    newer = AnthropicProvider(
        base_url="http://127.0.0.1:9", api_key="k", env={"CATUI_ANTHROPIC_VERSION": "2026-10-21"}
    )
    assert "temperature" not in newer.build_body(request())
    assert newer.build_headers()["anthropic-version"] == "2026-10-21"


def test_the_checker_rejects_what_the_api_would_reject() -> None:
    bad = AnthropicProvider(base_url="http://127.0.0.1:9", api_key="k", env={}).build_body(
        request(temperature=None)
    )
    bad["messages"][0]["content"][0]["cache_ctrl"] = {}
    with pytest.raises(AssertionError, match="cache_ctrl"):
        check(bad, MessageCreateParamsStreaming)


async def test_sdk_sends_the_same_body_for_the_same_request() -> None:
    req = request(temperature=None)
    with AnthropicTestServer(SCRIPT) as server:
        provider = AnthropicProvider(
            base_url=server.url, api_key="sk-test", retry=FAST, prompt_caching=False, env={}
        )
        await catui_message(provider, req)
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="sk-test", max_retries=0)
        server.inject(Fault(raw_body=server.responses[0]))
        async with client.messages.stream(
            model=req.model,
            max_tokens=req.max_tokens,
            system=req.system,  # type: ignore[arg-type]
            messages=req.messages,  # type: ignore[arg-type]
            tools=req.tools,  # type: ignore[arg-type]
            thinking={"type": "adaptive"},
            tool_choice={"type": "auto"},
        ) as stream:
            await stream.get_final_message()
        await client.close()
    ours, theirs = server.requests
    assert ours.body == theirs.body
    assert ours.headers["content-type"] == theirs.headers["content-type"]
    # Deliberate differences: the 2.x SDK sends the key as a Bearer token and API version 2026-10-21.
    assert theirs.headers["authorization"] == "Bearer sk-test"
    assert ours.headers["x-api-key"] == "sk-test" and ours.headers["anthropic-version"] == "2023-06-01"


async def test_same_sse_bytes_build_the_same_final_message_as_the_sdk() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        provider = AnthropicProvider(base_url=server.url, api_key="sk-test", retry=FAST, env={})
        ours = await catui_message(provider, request())
        raw = server.responses[0]
        assert b"event: ping" in raw and b"signature_delta" in raw and b"input_json_delta" in raw
        server.inject(Fault(raw_body=raw))
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="sk-test", max_retries=0)
        async with client.messages.stream(
            model="claude-opus-4-6", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as stream:
            theirs = (await stream.get_final_message()).model_dump(mode="json")
        await client.close()
    assert without_none(ours) == without_none(theirs)
    assert [b["type"] for b in ours["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert ours["content"][3]["input"] == {}


async def test_an_interleaved_hand_written_stream_matches_the_sdk_too() -> None:
    # Bytes as the API really frames them: CRLF line ends, a comment line, split across arbitrary chunks.
    frames = [
        (
            "message_start",
            '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}',
        ),
        (
            "content_block_start",
            '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Caf\\u00e9 \\u2603 "}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}',
        ),
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        (
            "content_block_start",
            '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"Bash","input":{}}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"comm"}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"and\\": \\"ls -la\\"}"}}',
        ),
        ("content_block_stop", '{"type":"content_block_stop","index":1}'),
        (
            "message_delta",
            '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":17}}',
        ),
        ("message_stop", '{"type":"message_stop"}'),
    ]
    raw = b": keep-alive comment\r\n\r\n" + b"".join(
        f"event: {n}\r\ndata: {d}\r\n\r\n".encode() for n, d in frames
    )
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(raw_body=raw), Fault(raw_body=raw))
        provider = AnthropicProvider(base_url=server.url, api_key="sk-test", retry=FAST, env={})
        ours = await catui_message(provider, request())
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="sk-test", max_retries=0)
        async with client.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as stream:
            theirs = (await stream.get_final_message()).model_dump(mode="json")
        await client.close()
    assert without_none(ours) == without_none(theirs)
    assert ours["content"][0]["text"] == "Café ☃ ok"
    assert ours["content"][1]["input"] == {"command": "ls -la"}
