"""OpenAIProvider over real HTTP against the loopback Chat Completions server, and the SDK cross-check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catui.errors import ProviderError
from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.http_api.openai import OpenAIProvider, build_chat_body, convert_messages
from catui.models.http_api.retry import RetryPolicy
from tests.support.openai_server import Fault, OpenAITestServer
from tests.support.transports import http_transport as http_transport  # runs each test on both
from tests.support.transports import transport_env
from tests.support.typed_check import check

FAST = RetryPolicy(max_retries=3, base_delay_s=0.001, max_delay_s=0.002)

SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "match": {"last_is_tool_result": False},
            "repeat": True,
            "content": [
                {"type": "text", "text": "I will read both files now."},
                {
                    "type": "tool_use",
                    "id": "call_a",
                    "name": "Read",
                    "input": {"file_path": "/w/a.py", "limit": 5},
                },
                {"type": "tool_use", "id": "call_b", "name": "Read", "input": {"file_path": "/w/b.py"}},
            ],
            "usage": {"input_tokens": 90, "output_tokens": 30, "cache_read_input_tokens": 10},
        },
        {
            "match": {"last_is_tool_result": True, "last_user_contains": "contents of a"},
            "repeat": True,
            "content": [
                {"type": "thinking", "thinking": "Both read."},
                {"type": "text", "text": "Done reading."},
            ],
            "stop_reason": "max_tokens",
        },
    ]
}

TOOLS = [
    {
        "name": "Read",
        "description": "Read a file.",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}},
            "required": ["file_path"],
        },
    }
]


def first_request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "model": "gpt-4.1",
        "system": [{"type": "text", "text": "You are catui."}, {"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": "read a and b"}],
        "tools": TOOLS,
        "max_tokens": 2048,
    }
    fields.update(overrides)
    return ModelRequest(**fields)


FOLLOW_UP_MESSAGES = [
    {"role": "user", "content": [{"type": "text", "text": "read a and b"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "s"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "call_a", "name": "Read", "input": {"file_path": "/w/a.py"}},
            {"type": "tool_use", "id": "call_b", "name": "Read", "input": {"file_path": "/w/b.py"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "contents of a"},
            {
                "type": "tool_result",
                "tool_use_id": "call_b",
                "is_error": True,
                "content": [
                    {"type": "text", "text": "no such file"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                    },
                ],
            },
            {"type": "text", "text": "<system-reminder>keep going</system-reminder>"},
        ],
    },
]


async def final(provider: OpenAIProvider, request: ModelRequest) -> dict[str, Any]:
    accumulator = MessageAccumulator()
    async for event in provider.stream(request):
        accumulator.feed(event)
    assert accumulator.done
    return accumulator.message


def provider_for(server: OpenAITestServer) -> OpenAIProvider:
    return OpenAIProvider(base_url=server.base_url, api_key="sk-openai-test-key", retry=FAST, env=transport_env())


def test_messages_convert_to_chat_format() -> None:
    converted = convert_messages([{"type": "text", "text": "sys"}], FOLLOW_UP_MESSAGES)
    assert converted[0] == {"role": "system", "content": "sys"}
    assert converted[1] == {"role": "user", "content": "read a and b"}
    assistant = converted[2]
    assert assistant["content"] == "Reading."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"file_path": "/w/a.py"}
    assert converted[3] == {"role": "tool", "tool_call_id": "call_a", "content": "contents of a"}
    assert converted[4] == {"role": "tool", "tool_call_id": "call_b", "content": "Error: no such file"}
    last = converted[5]
    assert last["role"] == "user"
    assert last["content"][0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert last["content"][1] == {"type": "text", "text": "<system-reminder>keep going</system-reminder>"}
    assert len(converted) == 6


def test_request_bodies_validate_against_the_sdk_request_type() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    for request in (
        first_request(),
        first_request(
            messages=FOLLOW_UP_MESSAGES, tool_choice={"type": "tool", "name": "Read"}, temperature=0.2
        ),
        first_request(tools=[], system=[]),
    ):
        check(build_chat_body(request), CompletionCreateParamsStreaming)


@pytest.mark.parametrize("content_style", ["null", "empty"])
@pytest.mark.parametrize("tool_call_style", ["split", "whole"])
@pytest.mark.parametrize("usage_style", ["end", "inline", "absent"])
async def test_stream_variations_build_the_same_message(
    content_style: str, tool_call_style: str, usage_style: str
) -> None:
    options = {"content_style": content_style, "tool_call_style": tool_call_style, "usage_style": usage_style}
    with OpenAITestServer(SCRIPT, **options) as server:
        message = await final(provider_for(server), first_request())
    assert [b["type"] for b in message["content"]] == ["text", "tool_use", "tool_use"]
    assert message["content"][0]["text"] == "I will read both files now."
    assert message["content"][1] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "Read",
        "input": {"file_path": "/w/a.py", "limit": 5},
    }
    assert message["content"][2]["input"] == {"file_path": "/w/b.py"}
    assert message["stop_reason"] == "tool_use"
    if usage_style == "absent":
        assert message["usage"] == {"input_tokens": 0, "output_tokens": 0}
    else:
        assert message["usage"] == {"input_tokens": 90, "output_tokens": 30, "cache_read_input_tokens": 10}
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert server.requests[0].headers["authorization"] == "Bearer sk-openai-test-key"


async def test_follow_up_turn_maps_reasoning_and_length_finish() -> None:
    with OpenAITestServer(SCRIPT, send_done=False) as server:
        message = await final(provider_for(server), first_request(messages=FOLLOW_UP_MESSAGES))
    assert [b["type"] for b in message["content"]] == ["thinking", "text"]
    assert message["content"][0]["thinking"] == "Both read."
    assert message["stop_reason"] == "max_tokens"
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]


async def test_retries_and_a_cut_stream() -> None:
    with OpenAITestServer(SCRIPT) as server:
        server.inject(Fault(status=429, headers={"retry-after": "0"}), Fault(status=503))
        message = await final(provider_for(server), first_request())
        assert message["stop_reason"] == "tool_use" and len(server.requests) == 3
        # A cut mid-message and a server_error chunk are retried; the final message is whole.
        server.inject(Fault(cut_after_events=2))
        assert (await final(provider_for(server), first_request()))["stop_reason"] == "tool_use"
        assert len(server.requests) == 5
        server.inject(Fault(error_event_after=2, error_type="server_error", message="boom"))
        assert (await final(provider_for(server), first_request()))["stop_reason"] == "tool_use"
        assert len(server.requests) == 7
        server.inject(Fault(error_event_after=2, error_type="invalid_request_error", message="boom"))
        with pytest.raises(ProviderError, match="error mid-stream: invalid_request_error: boom"):
            await final(provider_for(server), first_request())


async def test_401_names_openai_api_key() -> None:
    with OpenAITestServer(SCRIPT, require_key="right") as server, pytest.raises(ProviderError) as caught:
        await final(OpenAIProvider(env={**transport_env(), **server.env("wrong")}, retry=FAST), first_request())
    message = str(caught.value)
    assert (
        "401" in message
        and "Fix OPENAI_API_KEY" in message
        and server.base_url in message
        and "\n" not in message
    )


async def test_same_sse_bytes_give_the_same_completion_as_the_sdk() -> None:
    openai = pytest.importorskip("openai")
    with OpenAITestServer(SCRIPT, tool_call_style="split") as server:
        ours = await final(provider_for(server), first_request())
        server.inject(Fault(raw_body=server.responses[0]))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-openai-test-key", max_retries=0)
        async with client.chat.completions.stream(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "read a and b"}],
            stream_options={"include_usage": True},
        ) as stream:
            completion = await stream.get_final_completion()
        await client.close()
    choice = completion.choices[0]
    assert ours["content"][0]["text"] == choice.message.content
    calls = choice.message.tool_calls or []
    ours_calls = [b for b in ours["content"] if b["type"] == "tool_use"]
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        (b["id"], b["name"], b["input"]) for b in ours_calls
    ]
    assert (choice.finish_reason, ours["stop_reason"]) == ("tool_calls", "tool_use")
    assert completion.usage is not None
    cached = (
        completion.usage.prompt_tokens_details.cached_tokens if completion.usage.prompt_tokens_details else 0
    )
    assert (
        ours["usage"]["input_tokens"] + ours["usage"]["cache_read_input_tokens"]
        == completion.usage.prompt_tokens
    )
    assert ours["usage"]["cache_read_input_tokens"] == cached
    assert ours["usage"]["output_tokens"] == completion.usage.completion_tokens
