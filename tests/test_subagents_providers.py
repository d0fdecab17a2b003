"""Per-agent providers through the real CLI: a parent on one provider, a child on another, both over HTTP.

The parent talks to the loopback Anthropic server and a child whose definition says ``model:
openai:gpt-4.1`` to the loopback OpenAI server (and the other way round). Each server's requests show
who asked what; the parent's result, stream-json and ``catui agents show`` show the provider.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import SRC, cli_env
from tests.support.openai_server import OpenAITestServer


def make_repo(tmp_path: Path, agent_model: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "elsewhere.md").write_text(
        f"---\nname: elsewhere\ndescription: Runs on another provider.\nmodel: {agent_model}\ntools: Read, Grep\n"
        "---\nYou are ELSEWHERE.\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


PARENT_TURNS: list[dict[str, Any]] = [
    {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_far", "name": "Agent",
                  "input": {"description": "ask elsewhere", "prompt": "CHILD answer", "subagent_type": "elsewhere"}}]},
    {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
     "content": [{"type": "text", "text": "parent heard back"}]},
]
CHILD_TURNS: list[dict[str, Any]] = [
    {"match": {"first_user_contains": "CHILD"}, "content": [{"type": "text", "text": "answer from the other provider"}],
     "usage": {"input_tokens": 30, "output_tokens": 7}},
]


def run(repo: Path, env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "stream-json", "--verbose",
         "--forward-subagent-text", *args],
        cwd=repo, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def agent_result(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    line = next(line for line in lines if line["type"] == "user" and line.get("parent_tool_use_id") is None
                and "tool_use_result" in line)
    return line["message"]["content"][0], line["tool_use_result"]


def test_a_child_on_openai_under_a_parent_on_anthropic(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "openai:gpt-4.1")
    with AnthropicTestServer({"turns": PARENT_TURNS}) as anthropic, OpenAITestServer({"turns": CHILD_TURNS}) as openai:
        env = {**cli_env(tmp_path, anthropic), **openai.env("openai-test-key")}
        lines = run(repo, env)
        anthropic_bodies, openai_bodies = anthropic.bodies(), openai.bodies()
        openai_auth = [r.headers.get("authorization") for r in openai.requests]
    # The parent's two turns went to Anthropic, the child's one turn to OpenAI, nothing crossed over.
    assert [b["model"] for b in anthropic_bodies] == ["claude-sonnet-4-6"] * 2
    assert not any("You are ELSEWHERE" in json.dumps(b) for b in anthropic_bodies)
    assert [b["model"] for b in openai_bodies] == ["gpt-4.1"]
    assert openai_auth == ["Bearer openai-test-key"]
    child = openai_bodies[0]
    assert child["messages"][0]["role"] == "system" and "You are ELSEWHERE" in json.dumps(child["messages"][0])
    assert sorted(t["function"]["name"] for t in child["tools"]) == ["Grep", "Read"]
    _, data = agent_result(lines)
    assert data["content"] == [{"type": "text", "text": "answer from the other provider"}]
    assert data["modelResolution"]["provider"] == "openai" and data["modelResolution"]["model"] == "gpt-4.1"
    child_lines = [line for line in lines if line.get("parent_tool_use_id") == "toolu_far" and line["type"] == "assistant"]
    assert [line["message"]["model"] for line in child_lines] == ["gpt-4.1"]
    result = lines[-1]
    assert result["result"] == "parent heard back"
    assert set(result["modelUsage"]) == {"claude-sonnet-4-6", "gpt-4.1"}
    assert result["modelUsage"]["gpt-4.1"]["inputTokens"] == 30 and result["modelUsage"]["gpt-4.1"]["costUSD"] == 0


def test_a_child_on_anthropic_under_a_parent_on_openai(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "haiku")
    with AnthropicTestServer({"turns": CHILD_TURNS}) as anthropic, OpenAITestServer({"turns": PARENT_TURNS}) as openai:
        env = {**cli_env(tmp_path, anthropic), **openai.env("openai-test-key")}
        lines = run(repo, env, "--model", "openai:gpt-4.1")
        assert [b["model"] for b in openai.bodies()] == ["gpt-4.1"] * 2
        assert [b["model"] for b in anthropic.bodies()] == ["claude-haiku-4-5-20251001"]
    _, data = agent_result(lines)
    assert data["modelResolution"]["provider"] == "anthropic"
    assert lines[-1]["result"] == "parent heard back"


def test_a_child_whose_provider_has_no_credentials_fails_alone_with_the_reason(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "openai:gpt-4.1")
    with AnthropicTestServer({"turns": PARENT_TURNS}) as anthropic:
        lines = run(repo, cli_env(tmp_path, anthropic))  # no OPENAI_API_KEY
    block = next(b for line in lines if line["type"] == "user" and line.get("parent_tool_use_id") is None
                 for b in line["message"]["content"] if isinstance(b, dict) and b.get("tool_use_id") == "toolu_far")
    assert block["is_error"] is True and "OPENAI_API_KEY" in json.dumps(block["content"])
    assert lines[-1]["result"] == "parent heard back"


def test_agents_show_prints_the_provider(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "openai:gpt-4.1")
    (repo / ".claude" / "agents" / "near.md").write_text(
        "---\nname: near\ndescription: Inherits.\n---\nInherits the model.\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "PYTHONPATH": str(SRC)}
    shown = {}
    for name in ("elsewhere", "near", "Explore"):
        done = subprocess.run([sys.executable, "-m", "catui", "agents", "show", name], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        shown[name] = next(line for line in done.stdout.splitlines() if line.startswith("Provider:"))
    assert "openai (gpt-4.1; configured by OPENAI_API_KEY; OPENAI_BASE_URL)" in shown["elsewhere"]
    assert "the parent's" in shown["near"]
    assert "anthropic (claude-haiku-4-5-20251001" in shown["Explore"]
