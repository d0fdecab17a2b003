"""Effort and extended thinking on the wire, checked against the official SDKs' request types."""

from __future__ import annotations

from typing import Any

import pytest

from catui.agents.field_values import EFFORT_LEVELS
from catui.errors import ConfigurationError
from catui.models.base import ModelRequest
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.http_api.openai import build_chat_body
from catui.models.reasoning import (
    EFFORT_NAMES,
    effort_level,
    parse_effort,
    parse_thinking_config,
    thinking_from_budget,
)
from tests.support.typed_check import check

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
from anthropic.types.message_create_params import MessageCreateParamsStreaming  # noqa: E402
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming  # noqa: E402

PROVIDER = AnthropicProvider(base_url="http://127.0.0.1:9", api_key="k", env={})
CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "go"}]},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "First the file.", "signature": "sig-1"},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/x"}},
    ]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "text"}]},
]


def request(**fields: Any) -> ModelRequest:
    base: dict[str, Any] = {"model": "claude-sonnet-4-6", "messages": CONVERSATION, "max_tokens": 32000}
    base.update(fields)
    return ModelRequest(**base)


def test_every_effort_level_is_an_sdk_level_and_goes_out_as_output_config() -> None:
    assert EFFORT_NAMES == EFFORT_LEVELS  # the loader and the wire agree on the names
    for level in EFFORT_NAMES:
        body = PROVIDER.build_body(request(effort=level))
        assert body["output_config"] == {"effort": level}
        check(body, MessageCreateParamsStreaming)


def test_no_effort_sends_no_output_config() -> None:
    assert "output_config" not in PROVIDER.build_body(request())


def test_thinking_is_sent_checked_and_allows_no_temperature_but_1() -> None:
    thinking = {"type": "enabled", "budget_tokens": 5000}
    assert PROVIDER.build_body(request(thinking=thinking, temperature=1.0))["temperature"] == 1.0
    assert "temperature" in PROVIDER.build_body(request(temperature=0.3))
    body = PROVIDER.build_body(request(thinking=thinking, temperature=0.3, effort="high"))
    assert body["thinking"] == thinking and "temperature" not in body
    # the thinking block with its signature goes back unchanged, without a cache breakpoint
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "First the file.",
                                                 "signature": "sig-1"}
    check(body, MessageCreateParamsStreaming)


def test_a_budget_at_or_above_max_tokens_is_kept_below_it() -> None:
    body = PROVIDER.build_body(request(thinking={"type": "enabled", "budget_tokens": 40000}, max_tokens=32000))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 31999}
    assert PROVIDER.build_body(request(thinking={"type": "disabled"})).get("thinking") is None


def test_openai_compatible_bodies_carry_reasoning_effort() -> None:
    for level in EFFORT_NAMES:
        body = build_chat_body(request(effort=level, thinking={"type": "enabled", "budget_tokens": 2000}))
        assert body["reasoning_effort"] == level
        assert "thinking" not in body
        check(body, CompletionCreateParamsStreaming)
    assert "reasoning_effort" not in build_chat_body(request())


@pytest.mark.parametrize(("value", "level"), [(1, "low"), (50, "low"), (51, "medium"), (85, "medium"),
                                              (86, "high"), (100, "high"), (101, "max")])
def test_integer_efforts_map_onto_levels(value: int, level: str) -> None:
    assert effort_level(value) == level


def test_user_given_efforts_are_checked() -> None:
    assert parse_effort(" XHigh ", "--effort") == "xhigh"
    assert parse_effort("70", "--effort") == 70
    assert parse_effort(None, "--effort") is None
    for bad in ("extreme", 0, -3, True, "1.5", 2.0):
        with pytest.raises(ConfigurationError, match=r"^--effort: effort .* is not one of low, medium, high, "
                                                     r"xhigh, max or a positive integer"):
            parse_effort(bad, "--effort")


def test_thinking_budgets_and_configs_are_checked() -> None:
    assert thinking_from_budget("2048", "MAX_THINKING_TOKENS") == {"type": "enabled", "budget_tokens": 2048}
    assert thinking_from_budget(0, "x") == {"type": "disabled"}
    with pytest.raises(ConfigurationError, match="below the API's minimum of 1024"):
        thinking_from_budget(500, "--max-thinking-tokens")
    with pytest.raises(ConfigurationError, match="not a whole number of tokens"):
        thinking_from_budget("lots", "--max-thinking-tokens")
    assert parse_thinking_config({"type": "adaptive"}, "t") == {"type": "adaptive"}
    assert parse_thinking_config({"type": "enabled", "budget_tokens": 3000}, "t") == {
        "type": "enabled", "budget_tokens": 3000}
    with pytest.raises(ConfigurationError, match="needs \"budget_tokens\""):
        parse_thinking_config({"type": "enabled"}, "CatuiOptions.thinking")
    with pytest.raises(ConfigurationError, match="thinking type 'on' is not one of"):
        parse_thinking_config({"type": "on"}, "CatuiOptions.thinking")
