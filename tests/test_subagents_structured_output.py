"""Typed results (``outputSchema``) through the real CLI against the loopback Anthropic server.

The child is offered a ``StructuredOutput`` tool whose input schema is the definition's schema;
its calls are validated with jsonschema (bad calls are error tool_results it can fix, three at
most) and the accepted object is the parent's result: JSON text and ``structured_output`` data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.test_subagents_limits import NoServer, agent_result, block_text, notification, text

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)
SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["ok", "bad"]},
                                           "count": {"type": "integer"}},
          "required": ["verdict", "count"], "additionalProperties": False}


def make_repo(tmp_path: Path, schema_line: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "typed.md").write_text(
        f"---\nname: typed\ndescription: Answers in JSON.\nmodel: sonnet\n{schema_line}\n---\nYou are TYPED.\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def run_cli(repo: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "stream-json", "--verbose"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=GUARD_S,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def parent_turns(**extra: Any) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "toolu_parent", "name": "Agent",
            "input": {"description": "typed job", "prompt": "CHILD check", "subagent_type": "typed", **extra}}
    return [
        {"match": {"first_user_contains": "PARENT", "last_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [call]},
        {"match": {"first_user_contains": "PARENT", "last_user_contains": "<task-notification>"},
         "content": text("noted")},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True}, "content": text("parent done")},
    ]


def output_call(value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": "StructuredOutput", "input": value}


def child_turns(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    """The child's turns: one StructuredOutput call each, then a closing line of text."""
    turns = [{"match": {"system_contains": "You are TYPED"}, "content": [output_call(value)]} for value in calls]
    return [*turns, {"match": {"system_contains": "You are TYPED"}, "content": text("finished")}]


def parent_block(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The parent's Agent tool_result block (an error result carries no ``tool_use_result`` data)."""
    return next(b for line in lines if line["type"] == "user" and line.get("parent_tool_use_id") is None
                for b in line["message"]["content"] if b.get("tool_use_id") == "toolu_parent")


def child_requests(server: AnthropicTestServer) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if "You are TYPED" in json.dumps(b.get("system"))]


def tool_results_seen_by_child(server: AnthropicTestServer) -> list[dict[str, Any]]:
    return [b for body in child_requests(server)[-1:] for m in body["messages"] if m["role"] == "user"
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_the_child_gets_the_tool_and_the_parent_gets_the_object(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"outputSchema: {json.dumps(SCHEMA)}")
    script = {"turns": [*parent_turns(), *child_turns({"verdict": "ok", "count": 2})]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server))
        first = child_requests(server)[0]
    offered = next(t for t in first["tools"] if t["name"] == "StructuredOutput")
    assert offered["input_schema"] == SCHEMA
    assert "call the StructuredOutput tool exactly once" in json.dumps(first["system"])
    block, data = agent_result(lines)
    assert block.get("is_error") is not True
    assert block_text(block).startswith('{"verdict": "ok", "count": 2}')
    assert data["structured_output"] == {"verdict": "ok", "count": 2}
    assert data["content"] == text('{"verdict": "ok", "count": 2}')


def test_a_bad_call_is_an_error_the_child_fixes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"output_schema: {json.dumps(SCHEMA)}")
    script = {"turns": [*parent_turns(), *child_turns({"verdict": "maybe", "count": 2}, {"verdict": "bad", "count": 0})]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server))
        results = tool_results_seen_by_child(server)
    rejected = results[0]
    assert rejected["is_error"] is True
    assert "at 'verdict': 'maybe' is not one of ['ok', 'bad']" in json.dumps(rejected["content"])
    assert "2 attempts left" in json.dumps(rejected["content"])
    assert results[1].get("is_error") is not True
    _, data = agent_result(lines)
    assert data["structured_output"] == {"verdict": "bad", "count": 0}


def test_three_bad_calls_fail_the_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"outputSchema: {json.dumps(SCHEMA)}")
    script = {"turns": [*parent_turns(), *child_turns({"verdict": "ok"}, {"count": 1}, {"verdict": 3, "count": 1},
                                                      {"verdict": "ok", "count": 1})]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server))
        assert len(child_requests(server)) == 3  # stopped after the third bad call: no fourth turn
    block = parent_block(lines)
    assert block["is_error"] is True
    assert "none of its 3 StructuredOutput calls matched its outputSchema" in block_text(block)
    assert "3 is not of type 'string'" in block_text(block)


def test_a_child_that_never_calls_the_tool_fails_with_a_reason(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"outputSchema: {json.dumps(SCHEMA)}")
    script = {"turns": [*parent_turns(), {"match": {"system_contains": "You are TYPED"}, "content": text("prose")}]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server))
    block = parent_block(lines)
    assert block["is_error"] is True and "finished without calling StructuredOutput" in block_text(block)


def test_a_schema_file_next_to_the_definition_and_a_background_notification(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "outputSchema: schemas/verdict.json")
    (repo / ".claude" / "agents" / "schemas").mkdir()
    (repo / ".claude" / "agents" / "schemas" / "verdict.json").write_text(json.dumps(SCHEMA))
    script = {"turns": [*parent_turns(run_in_background=True), *child_turns({"verdict": "ok", "count": 7})]}
    with AnthropicTestServer(script) as server:
        lines = run_cli(repo, cli_env(tmp_path, server))
        offered = next(t for t in child_requests(server)[0]["tools"] if t["name"] == "StructuredOutput")
        told = [b for b in server.bodies() if "<task-notification>" in json.dumps(b["messages"][-1])]
    assert offered["input_schema"] == SCHEMA
    assert told, "the parent never received the notification"
    assert '<result>{\\"verdict\\": \\"ok\\", \\"count\\": 7}</result>' in json.dumps(told[0]["messages"][-1])
    assert notification(lines)["status"] == "completed"


def test_a_bad_schema_is_a_load_error_naming_the_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "outputSchema: broken.json")
    (repo / ".claude" / "agents" / "broken.json").write_text('{"type": "object", "properties": {"a": {"type": 5}}}')
    done = subprocess.run([sys.executable, "-m", "catui", "agents", "validate"], cwd=repo,
                          env=cli_env(tmp_path, NoServer()), capture_output=True, text=True, timeout=GUARD_S)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "typed.md" in out and "broken.json" in out and "is not a valid JSON Schema" in out
