"""AnthropicProvider over real HTTP against the loopback Messages API server."""

from __future__ import annotations

import copy
import socket
from typing import Any

import pytest

from catui.errors import ProviderError
from catui.models.base import STREAM_RETRY, ModelRequest, StreamEvent
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.http_api.anthropic import AnthropicProvider, message_events
from catui.models.http_api.retry import RetryPolicy
from tests.support.anthropic_server import AnthropicTestServer, Fault
from tests.support.transports import http_transport as http_transport  # runs each test on both
from tests.support.transports import transport_env

FAST = RetryPolicy(max_retries=3, base_delay_s=0.001, max_delay_s=0.002)

SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "repeat": True,
            "content": [
                {"type": "thinking", "thinking": "The user wants the files listed; Glob will do."},
                {"type": "text", "text": "Let me look at the project files for you."},
                {
                    "type": "tool_use",
                    "id": "toolu_fixed",
                    "name": "Glob",
                    "input": {"pattern": "**/*.py", "path": "src"},
                },
            ],
            "usage": {"input_tokens": 120, "output_tokens": 40, "cache_read_input_tokens": 7},
        }
    ]
}


def make_request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "You are catui."}, {"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "list the python files"}]}],
        "tools": [
            {
                "name": "Glob",
                "description": "Find files by pattern.",
                "input_schema": {
                    "type": "object",
                    "properties": {"pattern": {"type": "string"}},
                    "required": ["pattern"],
                },
            }
        ],
        "max_tokens": 1024,
        "metadata": {"agent_id": "main"},
    }
    fields.update(overrides)
    return ModelRequest(**fields)


def provider_for(server: AnthropicTestServer, **options: Any) -> AnthropicProvider:
    options.setdefault("retry", FAST)
    return AnthropicProvider(base_url=server.url, api_key="sk-ant-test-key", env=transport_env(), **options)


async def collect(provider: AnthropicProvider, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def final_message(events: list[StreamEvent]) -> dict[str, Any]:
    accumulator = MessageAccumulator()
    for event in events:
        accumulator.feed(event)
    assert accumulator.done
    return accumulator.message


async def test_streams_every_block_kind_and_sends_the_api_headers() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        events = await collect(
            provider_for(server, betas=["interleaved-thinking-2025-05-14"]), make_request()
        )
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "ping" not in kinds
    deltas = {e["delta"]["type"] for e in events if e["type"] == "content_block_delta"}
    assert deltas == {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"}
    message = final_message(events)
    assert [b["type"] for b in message["content"]] == ["thinking", "text", "tool_use"]
    assert message["content"][2]["input"] == {"pattern": "**/*.py", "path": "src"}
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["output_tokens"] == 40
    (recorded,) = server.requests
    assert recorded.path == "/v1/messages"
    assert recorded.headers["x-api-key"] == "sk-ant-test-key"
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert recorded.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert "authorization" not in recorded.headers
    assert recorded.body["stream"] is True
    assert "metadata" not in recorded.body


async def test_the_selected_transport_carries_the_request(http_transport: str) -> None:
    with AnthropicTestServer(SCRIPT) as server:
        await collect(provider_for(server), make_request())
    # The lean client asks for no compression; httpx2 offers gzip by default.
    encoding = server.requests[0].headers["accept-encoding"]
    assert (encoding == "identity") is (http_transport == "lean"), encoding


async def test_auth_token_is_sent_as_bearer_and_env_configures_the_provider() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        provider = AnthropicProvider(
            env={
                **transport_env(),
                "ANTHROPIC_BASE_URL": server.url + "/",
                "ANTHROPIC_AUTH_TOKEN": "tok-123",
                "ANTHROPIC_BETAS": "a,b",
            }
        )
        await collect(provider, make_request())
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer tok-123"
    assert "x-api-key" not in headers
    assert headers["anthropic-beta"] == "a,b"


async def test_cache_breakpoints_mark_system_and_newest_message_without_touching_the_callers_data() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "first"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "text", "text": "more"}]},
    ]
    request = make_request(messages=messages)
    before = copy.deepcopy((request.system, request.messages))
    with AnthropicTestServer(SCRIPT) as server:
        await collect(provider_for(server), request)
    assert (request.system, request.messages) == before
    body = server.requests[0].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["system"][0]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["messages"][-1]["content"][0]
    assert all("cache_control" not in b for m in body["messages"][:-1] for b in m["content"])


async def test_string_content_gets_a_breakpoint_too_and_caching_can_be_disabled() -> None:
    request = make_request(messages=[{"role": "user", "content": "hello"}])
    with AnthropicTestServer(SCRIPT) as server:
        await collect(provider_for(server), request)
        await collect(provider_for(server, prompt_caching=False), request)
    cached, plain = server.bodies()
    assert cached["messages"][0]["content"] == [
        {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
    ]
    assert plain["messages"][0]["content"] == "hello"
    assert "cache_control" not in plain["system"][-1]


@pytest.mark.parametrize(
    ("status", "headers"),
    [(429, {"retry-after": "0"}), (529, {"retry-after-ms": "1"}), (500, {}), (408, {}), (409, {})],
)
async def test_retryable_statuses_are_retried(status: int, headers: dict[str, str]) -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(
            Fault(status=status, error_type="overloaded_error", headers=headers),
            Fault(status=status, headers=headers),
        )
        events = await collect(provider_for(server), make_request())
    assert final_message(events)["stop_reason"] == "tool_use"
    assert len(server.requests) == 3


async def test_x_should_retry_false_and_client_errors_are_not_retried() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(status=503, headers={"x-should-retry": "false"}))
        with pytest.raises(ProviderError, match="503") as first:
            await collect(provider_for(server), make_request())
        server.inject(Fault(status=400, error_type="invalid_request_error", message="max_tokens too large"))
        with pytest.raises(ProviderError, match="400 invalid_request_error: max_tokens too large") as second:
            await collect(provider_for(server), make_request())
    assert len(server.requests) == 2
    assert first.value.status == 503 and second.value.status == 400


async def test_x_should_retry_true_makes_a_client_error_retryable() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(status=400, headers={"x-should-retry": "true"}))
        await collect(provider_for(server), make_request())
    assert len(server.requests) == 2


async def test_gives_up_after_max_retries_with_a_retryable_error() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(*[Fault(status=529, error_type="overloaded_error", message="Overloaded")] * 5)
        with pytest.raises(ProviderError, match="529 overloaded_error: Overloaded") as caught:
            await collect(provider_for(server), make_request())
    assert len(server.requests) == FAST.max_retries + 1
    assert caught.value.retryable and caught.value.status == 529
    assert "gave up after 3 retries" in str(caught.value)


async def test_retry_base_delay_comes_from_the_environment() -> None:
    policy = RetryPolicy.from_env({"CATUI_RETRY_BASE_MS": "2", "CATUI_MAX_RETRIES": "1"})
    assert policy.max_retries == 1 and policy.base_delay_s == 0.002
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(status=429), Fault(status=429))
        with pytest.raises(ProviderError, match="429"):
            await collect(
                AnthropicProvider(env={**transport_env(), **server.env(), "CATUI_RETRY_BASE_MS": "2", "CATUI_MAX_RETRIES": "1"}),
                make_request(),
            )
    assert len(server.requests) == 2


async def test_a_stream_cut_mid_message_is_withdrawn_and_retried() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(cut_after_events=5))
        events = await collect(provider_for(server), make_request())
    kinds = [event["type"] for event in events]
    # The first attempt's events come first, then the withdrawal, then a whole second answer.
    retry_at = kinds.index(STREAM_RETRY)
    assert kinds[0] == "message_start" and 0 < retry_at < kinds.index("message_stop")
    assert kinds[retry_at + 1] == "message_start" and kinds.count("message_stop") == 1
    notice = events[retry_at]
    assert notice["attempt"] == 1 and notice["max_retries"] == FAST.max_retries
    assert "ended before message_stop" in notice["error"] or "dropped" in notice["error"]
    assert final_message(events)["content"][1]["text"] == "Let me look at the project files for you."
    assert len(server.requests) == 2


async def test_a_stream_cut_every_time_gives_up_after_the_retry_budget() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(*[Fault(cut_after_events=3)] * (FAST.max_retries + 1))
        with pytest.raises(ProviderError, match=r"dropped|ended before message_stop") as caught:
            await collect(provider_for(server), make_request())
    assert len(server.requests) == FAST.max_retries + 1
    assert caught.value.retryable and "gave up after 3 retries" in str(caught.value)


async def test_a_cut_before_the_first_event_and_a_dropped_connection_are_retried() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(cut_after_events=0), Fault(drop_connection=True))
        events = await collect(provider_for(server), make_request())
    assert final_message(events)["content"][1]["text"] == "Let me look at the project files for you."
    assert len(server.requests) == 3


async def test_an_error_event_mid_stream_is_retried_or_raised_by_its_type() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(error_event_after=4, error_type="overloaded_error", message="Overloaded"))
        events = await collect(provider_for(server), make_request())
        assert next(e for e in events if e["type"] == STREAM_RETRY)["error"].endswith("overloaded_error: Overloaded")
        assert final_message(events)["content"][1]["text"] == "Let me look at the project files for you."
        assert len(server.requests) == 2
        # As Claude Code does, the retry after an error event mid-message asks for the whole message at once.
        assert server.requests[0].body["stream"] is True and server.requests[1].body["stream"] is False
        # Before any event was handed over, an overloaded error event is retried like a 529, silently.
        server.inject(Fault(error_event_after=0, error_type="overloaded_error"))
        events = await collect(provider_for(server), make_request())
        assert len(server.requests) == 4 and STREAM_RETRY not in [e["type"] for e in events]
        server.inject(Fault(error_event_after=2, error_type="invalid_request_error", message="bad"))
        with pytest.raises(ProviderError, match="invalid_request_error: bad"):
            await collect(provider_for(server), make_request())
        assert len(server.requests) == 5


async def test_a_cut_stream_is_retried_streaming_and_only_once_without_streaming_after_an_error_event() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        server.inject(Fault(cut_after_events=4), Fault(error_event_after=4, error_type="api_error"),
                      Fault(status=529, error_type="overloaded_error"))
        events = await collect(provider_for(server), make_request())
    # cut -> streamed again; error event -> without streaming (a 529) -> streaming again.
    assert [r.body["stream"] for r in server.requests] == [True, True, False, True]
    assert final_message(events)["content"][1]["text"] == "Let me look at the project files for you."


def test_message_events_rebuild_the_same_message() -> None:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [
            {"type": "thinking", "thinking": "Look first.", "signature": "sig"},
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a.py", "limit": 5}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 7},
    }
    accumulator = MessageAccumulator()
    for event in message_events(message):
        accumulator.feed(event)
    assert accumulator.done and accumulator.message == message


async def test_401_names_the_variable_to_fix_in_one_line() -> None:
    with AnthropicTestServer(SCRIPT, require_key="right-key") as server:
        with pytest.raises(ProviderError) as with_key:
            await collect(AnthropicProvider(env={**transport_env(), **server.env("wrong-key")}, retry=FAST), make_request())
        with pytest.raises(ProviderError) as without_key:
            await collect(
                AnthropicProvider(env={**transport_env(), "ANTHROPIC_BASE_URL": server.url}, retry=FAST), make_request()
            )
    assert len(server.requests) == 2
    for caught in (with_key, without_key):
        message = str(caught.value)
        assert "\n" not in message and "401 authentication_error" in message and server.url in message
        assert caught.value.status == 401
    assert "Fix ANTHROPIC_API_KEY" in str(with_key.value)
    assert "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)" in str(without_key.value)


async def test_unreachable_endpoint_names_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with pytest.raises(ProviderError) as caught:
        await collect(AnthropicProvider(base_url=base, api_key="k", retry=FAST, env=transport_env()), make_request())
    message = str(caught.value)
    assert f"cannot reach the Anthropic API at {base}/v1/messages" in message
    assert "ANTHROPIC_BASE_URL" in message and "\n" not in message


async def test_invalid_base_url_is_a_clear_error() -> None:
    provider = AnthropicProvider(base_url="localhost:9", api_key="k", retry=FAST, env=transport_env())
    with pytest.raises(
        ProviderError, match=r"'localhost:9/v1/messages', is invalid .*check ANTHROPIC_BASE_URL$"
    ):
        await collect(provider, make_request())


async def test_keep_alive_reuses_one_connection() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        provider = provider_for(server)
        for _ in range(3):
            await collect(provider, make_request())
    assert len(server.requests) == 3
    assert len(server.connections) == 1
