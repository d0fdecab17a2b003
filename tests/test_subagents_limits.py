"""Per-agent limits (maxBudgetUsd, maxTokens, timeout, stallTimeout) through the real CLI.

The parent and its child talk to the loopback Anthropic server (priced Claude models) or to the
scripted provider (no price: tokens only). Each test gives the child a tiny limit and checks the
structured result the parent receives, the stream-json task events and the child's requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)


class NoServer:
    """For runs on the scripted provider: no loopback server, no API settings."""

    def env(self, api_key: str) -> dict[str, str]:
        return {}


def make_repo(tmp_path: Path, frontmatter: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "limited.md").write_text(
        f"---\nname: limited\ndescription: A worker with limits.\nmodel: sonnet\n{frontmatter}---\nYou are LIMITED.\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def run_cli(repo: Path, env: dict[str, str], prompt: str, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", prompt, "--output-format", "stream-json", "--verbose", *args],
        cwd=repo, env=env, capture_output=True, text=True, timeout=GUARD_S,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def agent_call(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_parent", "name": "Agent",
            "input": {"description": "limited job", "prompt": prompt, "subagent_type": "limited", **extra}}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def parent_turns(prompt: str, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False}, "content": [agent_call(prompt, **extra)]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True}, "content": text("parent done")},
    ]


def child_bash_turn(usage: dict[str, int], **extra: Any) -> dict[str, Any]:
    """The child's first turn: a line of text and a harmless tool call (it would go on without a limit)."""
    return {"match": {"system_contains": "You are LIMITED", "last_is_tool_result": False},
            "content": [{"type": "text", "text": "Looking around first."},
                        {"type": "tool_use", "name": "Bash", "input": {"command": "echo probe"}}],
            "usage": usage, **extra}


def agent_result(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parent's Agent tool_result block and its ``tool_use_result`` data."""
    line = next(line for line in lines if line["type"] == "user" and line.get("parent_tool_use_id") is None
                and "tool_use_result" in line)
    block = next(b for b in line["message"]["content"] if b.get("tool_use_id") == "toolu_parent")
    return block, line["tool_use_result"]


def block_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def notification(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(line for line in lines if line["type"] == "system" and line.get("subtype") == "task_notification")


def child_requests(server: AnthropicTestServer) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if "You are LIMITED" in json.dumps(b.get("system"))]


def test_max_tokens_stops_the_child_after_the_turn_that_crosses_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "maxTokens: 100\n")
    script = {"turns": [*parent_turns("CHILD do the work"),
                        child_bash_turn({"input_tokens": 80, "output_tokens": 30}),
                        {"match": {"system_contains": "You are LIMITED"}, "content": text("SHOULD NOT HAPPEN")}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
        assert len(child_requests(server)) == 1  # stopped: no second model turn
    block, data = agent_result(lines)
    assert block["is_error"] is True
    assert data["status"] == "budget_exceeded"
    assert data["limit"] == {"field": "maxTokens", "value": 100.0}
    # claude-sonnet-4-6: $3 per million input tokens, $15 per million output tokens.
    assert data["spent"]["totalTokens"] == 110 and data["spent"]["costKnown"] is True
    assert data["spent"]["costUsd"] == pytest.approx(80 * 3e-6 + 30 * 15e-6)
    assert data["partialResult"] == "Looking around first."
    body = block_text(block)
    assert "(budget_exceeded)" in body and "maxTokens" in body and "110 tokens" in body
    assert "Looking around first." in body and "SHOULD NOT HAPPEN" not in json.dumps(lines)
    note = notification(lines)
    assert note["status"] == "budget_exceeded" and note["spent"]["total_tokens"] == 110


def test_max_budget_usd_counts_the_price_of_the_childs_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "max_budget_usd: 0.001\n")  # snake_case works as well as camelCase
    script = {"turns": [*parent_turns("CHILD spend"),
                        child_bash_turn({"input_tokens": 100, "output_tokens": 100}),
                        {"match": {"system_contains": "You are LIMITED"}, "content": text("SHOULD NOT HAPPEN")}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
        assert len(child_requests(server)) == 1
    block, data = agent_result(lines)
    assert data["status"] == "budget_exceeded" and data["limit"]["field"] == "maxBudgetUsd"
    assert data["spent"]["costUsd"] == pytest.approx(100 * 3e-6 + 100 * 15e-6)
    assert "$0.0018" in block_text(block)
    assert notification(lines)["status"] == "budget_exceeded"


def test_a_budget_under_its_limit_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "maxBudgetUsd: 5\nmaxTokens: 100000\ntimeout: 10m\nstallTimeout: 5m\n")
    script = {"turns": [*parent_turns("CHILD small"),
                        child_bash_turn({"input_tokens": 10, "output_tokens": 5}),
                        {"match": {"system_contains": "You are LIMITED", "last_is_tool_result": True},
                         "content": text("all done")}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
    block, data = agent_result(lines)
    assert block.get("is_error") is not True and data["status"] == "completed"
    assert data["content"] == text("all done")
    assert notification(lines)["status"] == "completed"


def test_timeout_stops_a_child_waiting_on_a_slow_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "timeout: 300ms\n")
    script = {"turns": [*parent_turns("CHILD slow"),
                        {"match": {"system_contains": "You are LIMITED"}, "content": text("SHOULD NOT HAPPEN"),
                         "delay_ms": 4000}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
    block, data = agent_result(lines)
    assert data["status"] == "timed_out" and data["limit"] == {"field": "timeout", "value": 0.3}
    assert data["spent"]["totalTokens"] == 0 and data["partialResult"] is None
    assert "(timed_out)" in block_text(block) and "It had written no text yet." in block_text(block)
    assert notification(lines)["status"] == "timed_out"


def test_stall_timeout_stops_a_child_whose_next_turn_never_comes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "stallTimeout: 300ms\n")
    script = {"turns": [*parent_turns("CHILD stall"),
                        child_bash_turn({"input_tokens": 10, "output_tokens": 5}),
                        {"match": {"system_contains": "You are LIMITED", "last_is_tool_result": True},
                         "content": text("SHOULD NOT HAPPEN"), "delay_ms": 4000}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
    block, data = agent_result(lines)
    assert data["status"] == "stalled" and data["limit"]["field"] == "stallTimeout"
    assert data["partialResult"] == "Looking around first." and data["totalToolUseCount"] == 1
    assert "stallTimeout" in block_text(block)
    assert notification(lines)["status"] == "stalled"


def test_a_model_without_a_price_reports_tokens_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "maxTokens: 50\n")
    (repo / ".claude" / "agents" / "limited.md").write_text(
        (repo / ".claude" / "agents" / "limited.md").read_text().replace("model: sonnet\n", "")
    )
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps({"turns": [*parent_turns("CHILD scripted"),
                                                 child_bash_turn({"input_tokens": 40, "output_tokens": 20})]}))
    env = cli_env(tmp_path, NoServer())  # the scripted provider answers
    lines = run_cli(repo, env, "PARENT go", "--model", f"scripted:{script_file}")
    block, data = agent_result(lines)
    assert data["status"] == "budget_exceeded"
    assert data["spent"] == {"totalTokens": 60, "costUsd": None, "costKnown": False}
    assert "cost unknown" in block_text(block)


def test_a_background_child_at_its_limit_notifies_with_the_status(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "maxTokens: 100\n")
    script = {"turns": [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False,
                   "last_user_contains": "PARENT"},
         "content": [agent_call("CHILD in background", run_in_background=True)]},
        {"match": {"first_user_contains": "PARENT", "last_user_contains": "<task-notification>"},
         "content": text("noted the limit")},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True}, "content": text("waiting")},
        child_bash_turn({"input_tokens": 80, "output_tokens": 30}),
    ]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server), "PARENT go")
        told = [b for b in server.bodies() if "<task-notification>" in json.dumps(b["messages"][-1])]
    assert told, "the parent never received the notification"
    last = json.dumps(told[0]["messages"][-1])
    assert "<status>budget_exceeded</status>" in last and "maxTokens" in last and "Looking around first." in last
    assert notification(lines)["status"] == "budget_exceeded"


def test_bad_limits_are_load_errors_naming_the_field(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "timeout: soon\n")
    env = cli_env(tmp_path, NoServer())
    done = subprocess.run([sys.executable, "-m", "catui", "agents", "validate"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode != 0
    assert "limited.md" in done.stdout + done.stderr
    assert "timeout 'soon' is not a positive duration" in done.stdout + done.stderr


def test_agents_show_prints_the_limits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "maxBudgetUsd: 0.25\nmax_tokens: 5000\ntimeout: 10m\nstallTimeout: 90s\n")
    done = subprocess.run([sys.executable, "-m", "catui", "agents", "show", "limited"], cwd=repo,
                          env=cli_env(tmp_path, NoServer()), capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr
    rows = dict(line.split(":", 1) for line in done.stdout.splitlines()[:20] if ":" in line)
    assert rows["Max budget"].strip() == "$0.25 (maxBudgetUsd)" and rows["Max tokens"].strip() == "5000"
    assert rows["Timeout"].strip() == "600s" and rows["Stall timeout"].strip() == "90s"
