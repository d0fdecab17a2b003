"""The model-resolution trace: each Agent result says which model the child ran on and which source decided.

Through the real CLI against the loopback Anthropic server (stream-json ``tool_use_result``), and through
the SDK (the ``UserMessage.tool_use_result`` of the Agent call).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from catui import CatuiOptions, query
from catui.sdk.types import UserMessage
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.sdk_backend import isolated_sdk_home  # noqa: F401 (autouse fixture)

SONNET, HAIKU, OPUS = "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "claude-opus-4-6"


def make_repo(tmp_path: Path, model_line: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "picker.md").write_text(
        f"---\nname: picker\ndescription: Picks.\n{model_line}---\nYou are PICKER.\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def script(call_model: str | None, *, background: bool = False) -> dict[str, Any]:
    call: dict[str, Any] = {"description": "pick", "prompt": "CHILD pick", "subagent_type": "picker"}
    if call_model:
        call["model"] = call_model
    if background:
        call["run_in_background"] = True
    return {"turns": [
        {"match": {"system_contains": "You are PICKER"}, "content": [{"type": "text", "text": "picked"}]},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "noted"}]},
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_pick", "name": "Agent", "input": call}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ]}


def agent_data(tmp_path: Path, repo: Path, server: AnthropicTestServer, **env: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "stream-json", "--verbose"],
        cwd=repo, env=cli_env(tmp_path, server, **env), capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return next(line["tool_use_result"] for line in lines
                if line["type"] == "user" and line.get("parent_tool_use_id") is None and "tool_use_result" in line)


def child_models(server: AnthropicTestServer) -> list[str]:
    return [b["model"] for b in server.bodies() if "You are PICKER" in json.dumps(b.get("system"))]


@pytest.mark.parametrize(
    ("model_line", "call_model", "env", "model", "reason", "words"),
    [
        ("model: opus\n", "haiku", {}, OPUS, "definition", ["definition's model: opus", "wins over the call's 'haiku'"]),
        ("model: inherit\n", "haiku", {}, HAIKU, "call", ["Agent call's model parameter 'haiku'"]),
        ("", None, {}, SONNET, "parent", ["inherited from the parent"]),
        ("model: opus\n", "sonnet", {"CATUI_SUBAGENT_MODEL": "haiku"}, HAIKU, "environment",
         ["CATUI_SUBAGENT_MODEL=haiku (environment)", "the definition's 'opus' and the call's 'sonnet'"]),
        ("", "haiku", {"CATUI_DISABLE_AGENT_MODEL_OVERRIDE": "1"}, SONNET, "parent",
         ["the call's 'haiku' was ignored (restricted mode"]),
    ],
)
def test_the_trace_names_the_model_and_the_deciding_source(
    tmp_path: Path, model_line: str, call_model: str | None, env: dict[str, str], model: str, reason: str,
    words: list[str],
) -> None:
    repo = make_repo(tmp_path, model_line)
    with AnthropicTestServer(script(call_model)) as server:
        data = agent_data(tmp_path, repo, server, **env)
        assert child_models(server) == [model]  # the trace tells the truth about the request
    trace = data["modelResolution"]
    assert (trace["model"], trace["reason"], trace["provider"]) == (model, reason, "anthropic")
    for phrase in words:
        assert phrase in trace["explanation"], trace["explanation"]
    assert trace["candidates"]["call"] == call_model


def test_a_background_agents_launch_result_carries_the_trace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "model: haiku\n")
    with AnthropicTestServer(script(None, background=True)) as server:
        data = agent_data(tmp_path, repo, server)
    assert data["status"] == "async_launched"
    assert data["modelResolution"]["model"] == HAIKU and data["modelResolution"]["reason"] == "definition"


def test_an_unknown_model_error_names_its_source(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "model: nosuchprovider:thing\n")
    with AnthropicTestServer(script(None)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "stream-json", "--verbose"],
            cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60,
        )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    block = next(b for line in lines if line["type"] == "user" for b in line["message"]["content"]
                 if isinstance(b, dict) and b.get("tool_use_id") == "toolu_pick")
    assert block["is_error"] is True
    assert "the agent definition's model 'nosuchprovider:thing' could not be resolved" in json.dumps(block["content"])


async def test_the_sdk_result_carries_the_trace(tmp_path: Path) -> None:
    from catui import AgentDefinition

    with AnthropicTestServer(script("opus")) as server:
        options = CatuiOptions(cwd=tmp_path, env=server.env(), model=SONNET, agents={
            "picker": AgentDefinition(description="Picks.", prompt="You are PICKER.")})
        messages = [m async for m in query("PARENT go", options)]
    data = next(m.tool_use_result for m in messages if isinstance(m, UserMessage) and m.tool_use_result)
    assert data["modelResolution"]["model"] == OPUS and data["modelResolution"]["reason"] == "call"
