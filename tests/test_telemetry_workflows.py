"""Telemetry and the Workflow tool together (issue 32: "a span per agent nested under the Agent (or Workflow)
tool call that started it"): the real CLI (``python -m catui -p --output-format stream-json``) against the
loopback Anthropic server, with workflows on in the project settings, exporting over OTLP/HTTP to the real
receiver (tests/support/otlp_receiver.py). The model calls the Workflow tool with a script that awaits one
``agent()`` alone and one inside ``parallel``; each workflow agent's span is checked parent by parent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import stream_run, text
from tests.support.otlp_receiver import OtlpReceiver

WORKFLOW = """export const meta = { name: "two-asks", description: "Ask twice" }
const first = await agent("Question alpha")
const [second] = await parallel([() => agent("Question beta", {label: "beta"})])
return {first, second}
"""
SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
    {"match": {"first_user_contains": "Question alpha"}, "content": text("alpha answer"), "repeat": True},
    {"match": {"first_user_contains": "Question beta"}, "content": text("beta answer"), "repeat": True},
    {"match": {"first_user_contains": "Run it", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": WORKFLOW}}],
     "repeat": True},
    {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
     "repeat": True},
]}


@pytest.fixture
def receiver() -> Any:
    with OtlpReceiver() as rx:
        yield rx


def parent_of(span: dict[str, Any], spans: list[dict[str, Any]]) -> dict[str, Any]:
    assert span["parent_span_id"] is not None, f"{span['name']} is a root span"
    [parent] = [s for s in spans if s["span_id"] == span["parent_span_id"]]
    return parent


def request_spans_of(agent: dict[str, Any], spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"] == "claude_code.llm_request" and s["parent_span_id"] == agent["span_id"]]


def test_workflow_agents_hang_under_the_workflow_tool_call(tmp_path: Path, receiver: OtlpReceiver) -> None:
    repo = git_repo(tmp_path)
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"workflows": True}))
    with AnthropicTestServer(SCRIPT) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **receiver.env()), "Run it",
                                 "--permission-mode", "bypassPermissions")
    assert done.returncode == 0, done.stderr
    assert any(x.get("subtype") == "task_notification" and x.get("status") == "completed" for x in lines), lines

    receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) >= 2, "two workflow agent spans")
    spans = receiver.spans
    [workflow_call] = [s for s in spans if s["name"] == "claude_code.tool" and s["attributes"].get("tool_use_id") == "toolu_wf"]
    turn = parent_of(workflow_call, spans)
    assert turn["name"] == "claude_code.interaction" and turn["parent_span_id"] is None
    assert workflow_call["attributes"]["tool_name"] == "Workflow"

    agents = [s for s in spans if s["name"] == "catui.agent"]
    # one agent awaited alone, one inside parallel (its label is its description)
    assert sorted(a["attributes"]["catui.agent.description"] for a in agents) == ["Question alpha", "beta"]
    assert len({a["attributes"]["catui.agent.id"] for a in agents}) == 2
    for agent in agents:
        assert agent["attributes"]["catui.agent.type"] == "workflow-subagent"
        # each workflow agent hangs under the Workflow call (which ended at launch), in the turn's trace
        assert agent["trace_id"] == turn["trace_id"]
        assert parent_of(agent, spans) is workflow_call
        # and its model request hangs under it
        [request] = request_spans_of(agent, spans)
        assert request["trace_id"] == turn["trace_id"]
        assert request["attributes"]["gen_ai.system"] == "anthropic"
        assert request["attributes"]["query_source"] != "main"
