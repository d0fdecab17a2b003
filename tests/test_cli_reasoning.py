"""Effort and extended thinking through the real CLI: what each request carries (loopback servers on 127.0.0.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.openai_server import OpenAITestServer

DONE = {"turns": [{"content": [{"type": "text", "text": "done"}], "repeat": True}]}


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
    (repo / ".claude" / "agents" / "thinker.md").write_text(
        "---\nname: thinker\ndescription: Thinks hard.\ntools: Read\neffort: high\n---\nYou think hard.\n"
    )
    (repo / ".claude" / "agents" / "counted.md").write_text(
        "---\nname: counted\ndescription: Numeric effort.\ntools: Read\neffort: 101\n---\nYou count.\n"
    )
    (repo / ".claude" / "agents" / "plain.md").write_text(
        "---\nname: plain\ndescription: No effort of its own.\ntools: Read\n---\nYou answer plainly.\n"
    )
    return repo


def run(tmp_path: Path, server: Any, *args: str, prompt: str = "hello", **env: str) -> subprocess.CompletedProcess[str]:
    repo = project(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", prompt, *args],
        cwd=repo, env=cli_env(tmp_path, server, **env), capture_output=True, text=True, timeout=60,
    )


def test_effort_flag_reaches_the_request_and_is_absent_without_one(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        plain = run(tmp_path, server)
        flagged = run(tmp_path, server, "--effort", "XHIGH")
        bodies = server.bodies()
    assert plain.returncode == 0 and flagged.returncode == 0, flagged.stderr
    assert "output_config" not in bodies[0]
    assert bodies[1]["output_config"] == {"effort": "xhigh"}


def test_effort_from_settings_env_and_integer_values(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"effortLevel": "low"}))
    with AnthropicTestServer(DONE) as server:
        from_setting = run(tmp_path, server)
        from_env = run(tmp_path, server, CLAUDE_CODE_EFFORT_LEVEL="medium")
        flag_wins = run(tmp_path, server, "--effort", "90", CLAUDE_CODE_EFFORT_LEVEL="medium")
        bodies = server.bodies()
    assert [r.returncode for r in (from_setting, from_env, flag_wins)] == [0, 0, 0], flag_wins.stderr
    assert [b["output_config"]["effort"] for b in bodies] == ["low", "medium", "high"]


def test_a_definitions_effort_reaches_its_child_and_others_inherit_the_sessions(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"system_contains": "You think hard."}, "content": [{"type": "text", "text": "thought"}]},
        {"match": {"system_contains": "You answer plainly."}, "content": [{"type": "text", "text": "plain"}]},
        {"match": {"system_contains": "You count."}, "content": [{"type": "text", "text": "counted"}]},
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "t1", "name": "Agent",
             "input": {"description": "think", "prompt": "think", "subagent_type": "thinker"}},
            {"type": "tool_use", "id": "t3", "name": "Agent",
             "input": {"description": "count", "prompt": "count", "subagent_type": "counted"}},
            {"type": "tool_use", "id": "t2", "name": "Agent",
             "input": {"description": "plain", "prompt": "plain", "subagent_type": "plain"}}]},
        {"content": [{"type": "text", "text": "all done"}]},
    ]}
    with AnthropicTestServer(script) as server:
        done = run(tmp_path, server, "--effort", "low")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    efforts = sorted((who(body), body["output_config"]["effort"]) for body in bodies)
    assert efforts == [("counted", "max"), ("main", "low"), ("main", "low"), ("plain", "low"), ("thinker", "high")]


def who(body: dict[str, Any]) -> str:
    """Which agent sent a recorded request, told by its system prompt."""
    system = json.dumps(body["system"])
    if "You think hard." in system:
        return "thinker"
    if "You count." in system:
        return "counted"
    return "plain" if "You answer plainly." in system else "main"


THINKING_SCRIPT = {"turns": [
    {"match": {"last_is_tool_result": False}, "content": [
        {"type": "thinking", "thinking": "I should look at the file first.", "signature": "sig-abc"},
        {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}}]},
    {"content": [{"type": "text", "text": "found it"}]},
]}


def test_max_thinking_tokens_sends_thinking_and_keeps_signed_blocks_for_the_next_request(tmp_path: Path) -> None:
    with AnthropicTestServer(THINKING_SCRIPT) as server:
        done = run(tmp_path, server, "--max-thinking-tokens", "4000", "--output-format", "stream-json",
                   "--verbose", "--include-partial-messages")
        first, second = server.bodies()
    assert done.returncode == 0, done.stderr
    for body in (first, second):
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
        assert "temperature" not in body
    sent_back = second["messages"][1]
    assert sent_back["role"] == "assistant"
    assert sent_back["content"][0] == {"type": "thinking", "thinking": "I should look at the file first.",
                                       "signature": "sig-abc"}
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assistant_blocks = [b for e in events if e.get("type") == "assistant" for b in e["message"]["content"]]
    assert {"type": "thinking", "thinking": "I should look at the file first.", "signature": "sig-abc"} in (
        assistant_blocks)
    deltas = [e["event"]["delta"] for e in events if e.get("type") == "stream_event"
              and e["event"].get("type") == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas if d["type"] == "thinking_delta") == (
        "I should look at the file first.")


def test_max_thinking_tokens_env_applies_to_the_main_agent_not_to_children(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"system_contains": "You answer plainly."}, "content": [{"type": "text", "text": "plain"}]},
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "t1", "name": "Agent",
             "input": {"description": "plain", "prompt": "plain", "subagent_type": "plain"}}]},
        {"content": [{"type": "text", "text": "all done"}]},
    ]}
    with AnthropicTestServer(script) as server:
        done = run(tmp_path, server, MAX_THINKING_TOKENS="2048")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    child = [b for b in bodies if "You answer plainly." in json.dumps(b["system"])]
    main = [b for b in bodies if b not in child]
    assert len(child) == 1 and "thinking" not in child[0]
    assert main and all(b["thinking"] == {"type": "enabled", "budget_tokens": 2048} for b in main)


def test_zero_thinking_tokens_on_the_command_line_beats_the_environment(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server, "--max-thinking-tokens", "0", MAX_THINKING_TOKENS="2048")
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    assert "thinking" not in body


def test_bad_values_are_one_line_errors(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        bad_flag = run(tmp_path, server, "--effort", "extreme")
        small_budget = run(tmp_path, server, "--max-thinking-tokens", "100")
        bad_env = run(tmp_path, server, MAX_THINKING_TOKENS="lots")
        assert server.bodies() == []
    for done in (bad_flag, small_budget, bad_env):
        assert done.returncode == 1
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert bad_flag.stderr.startswith("catui: --effort: effort 'extreme' is not one of low, medium, high, xhigh, max")
    assert "--max-thinking-tokens: thinking budget 100 is below the API's minimum of 1024" in small_budget.stderr
    assert "MAX_THINKING_TOKENS: thinking budget 'lots' is not a whole number" in bad_env.stderr


def test_a_bad_effort_setting_is_a_warning_naming_the_file_and_is_ignored(tmp_path: Path) -> None:
    repo = project(tmp_path)
    settings = repo / ".claude" / "settings.json"
    settings.write_text(json.dumps({"effortLevel": "turbo"}))
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server)
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    assert "output_config" not in body
    assert f"catui: warning: {settings}: effortLevel: effort 'turbo' is not one of low" in done.stderr


def test_openai_compatible_provider_gets_reasoning_effort(tmp_path: Path) -> None:
    with OpenAITestServer(DONE) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "hello", "--model", "openai:gpt-5", "--effort", "max"],
            cwd=project(tmp_path), env={**cli_env(tmp_path, server), **server.env()},
            capture_output=True, text=True, timeout=60,
        )
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    assert body["reasoning_effort"] == "max"
    assert "output_config" not in body and "thinking" not in body
