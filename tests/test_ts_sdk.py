"""The official TypeScript Agent SDK drives the real ``catui`` CLI on the loopback Anthropic server.

Each case is a small ES module using the SDK's own ``query()``, ``tool()``,
``createSdkMcpServer()`` and session readers, run under node with two
releases: the current one and the one of Claude Code 2.1.92's time
(tests/support/ts_sdk.py). They skip, saying why, only when node or the
package cannot be had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.loopback import started_servers
from tests.support.ts_sdk import RELEASES, run_case

ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    yield from started_servers(AnthropicTestServer)


@pytest.fixture(params=RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for message in body["messages"] if isinstance(message.get("content"), list)
            for block in message["content"] if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def test_query_yields_catuis_answer(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "Hello from catui"}]}]})
    run = run_case(release, """
await collect(sdk.query({ prompt: "Say hello", options: { ...base } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert run.result()["result"] == "Hello from catui" and run.result()["is_error"] is False
    assert run.init()["model"] == "claude-sonnet-4-6"


def test_an_sdk_mcp_server_tool_is_listed_and_called(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 40}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "It is 42."}]},
    ]})
    run = run_case(release, """
const add = sdk.tool("add", "Add two integers", { a: z.number(), b: z.number() },
  async (args) => { emit({ called: args }); return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] }; });
const calc = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
await collect(sdk.query({ prompt: "Add 2 and 40",
  options: { ...base, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert {"called": {"a": 2, "b": 40}} in run.lines
    assert {"name": "calc", "status": "connected"} in run.init()["mcp_servers"]
    assert "mcp__calc__add" in run.init()["tools"]
    first, second = server.bodies()
    assert "mcp__calc__add" in [t["name"] for t in first["tools"]]
    (answer,) = tool_results(second)
    assert result_text(answer) == "sum=42" and not answer.get("is_error")
    assert run.result()["result"] == "It is 42."
