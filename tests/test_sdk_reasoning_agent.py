"""The SDK's ``agent``, ``effort``, ``thinking`` and ``max_thinking_tokens`` options against the loopback server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.sdk_backend import collect, isolated_sdk_home

__all__ = ["isolated_sdk_home"]

DONE = {"turns": [{"content": [{"type": "text", "text": "done"}], "repeat": True}]}


def options(server: AnthropicTestServer, tmp_path: Path, **fields: Any) -> catui.CatuiOptions:
    return catui.CatuiOptions(env=server.env(), cwd=tmp_path, **fields)


async def test_the_sdk_runs_the_main_session_as_an_agent_with_effort_and_thinking(tmp_path: Path) -> None:
    agents = {"scribe": catui.AgentDefinition(description="Writes.", prompt="You write docs.", tools=["Write"],
                                              model="haiku", initialPrompt="Docs first.")}
    with AnthropicTestServer(DONE) as server:
        await collect("go", options(server, tmp_path, agents=agents, agent="scribe", effort="xhigh",
                                    thinking={"type": "enabled", "budget_tokens": 3000}))
        (body,) = server.bodies()
    assert [b["text"] for b in body["system"]] == ["You write docs."]
    assert [t["name"] for t in body["tools"]] == ["Write"]
    assert body["model"] == "claude-haiku-4-5-20251001"
    assert body["messages"][0]["content"][-1]["text"] == "Docs first.\n\ngo"
    assert body["output_config"] == {"effort": "xhigh"}
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3000}


async def test_thinking_wins_over_max_thinking_tokens_and_disabled_sends_none(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        await collect("a", options(server, tmp_path, max_thinking_tokens=2000))
        await collect("b", options(server, tmp_path, max_thinking_tokens=2000, thinking={"type": "disabled"}))
        await collect("c", options(server, tmp_path, thinking={"type": "adaptive"}))
        first, second, third = server.bodies()
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert "thinking" not in second and "output_config" not in second
    assert third["thinking"] == {"type": "adaptive"}


@pytest.mark.parametrize(("fields", "message"), [
    ({"effort": "huge"}, "CatuiOptions.effort: effort 'huge' is not one of low, medium, high, xhigh, max"),
    ({"thinking": {"type": "enabled", "budget_tokens": 10}}, "CatuiOptions.thinking.budget_tokens: thinking "
                                                             "budget 10 is below the API's minimum of 1024"),
    ({"max_thinking_tokens": -1}, "CatuiOptions.max_thinking_tokens: thinking budget -1 is not a whole number"),
    ({"agent": "nobody"}, "CatuiOptions.agent: no agent named 'nobody'; available agents: "),
])
async def test_bad_sdk_values_raise_configuration_errors(tmp_path: Path, fields: dict[str, Any], message: str) -> None:
    with AnthropicTestServer(DONE) as server:
        with pytest.raises(catui.ConfigurationError) as caught:
            await collect("x", options(server, tmp_path, **fields))
        assert server.bodies() == []
    assert str(caught.value).startswith(message)


async def test_thinking_blocks_reach_sdk_messages_with_their_signature(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "thinking", "thinking": "List first.", "signature": "sig-9"},
            {"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}]},
        {"content": [{"type": "text", "text": "listed"}]},
    ]}
    with AnthropicTestServer(script) as server:
        messages = await collect("go", options(server, tmp_path, max_thinking_tokens=1024))
        _first, second = server.bodies()
    blocks = [b for m in messages if isinstance(m, catui.AssistantMessage) for b in m.content]
    thinking = [b for b in blocks if isinstance(b, catui.ThinkingBlock)]
    assert [(b.thinking, b.signature) for b in thinking] == [("List first.", "sig-9")]
    assert second["messages"][1]["content"][0] == {"type": "thinking", "thinking": "List first.",
                                                   "signature": "sig-9"}
