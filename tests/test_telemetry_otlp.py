"""OpenTelemetry export end to end: the real CLI (``python -m catui -p``) against the loopback Anthropic
server, exporting over OTLP/HTTP to a real receiver (tests/support/otlp_receiver.py, official protobufs).

One run starts a foreground agent that starts a nested agent, and a background agent; the span tree is
checked parent by parent, and the metrics and events are checked for Claude Code's names and attributes.
The Ray agent's span is checked in tests/test_telemetry_ray.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.git_repos import GIT_ENV
from tests.support.otlp_receiver import OtlpReceiver

AGENTS = {
    "lead": {"description": "Leads the work.", "prompt": "You lead.", "tools": ["Agent", "Write"]},
    "helper": {"description": "Helps.", "prompt": "You help.", "tools": ["Bash", "Write"]},
}
SCRIPT: dict[str, Any] = {"turns": [
    {"name": "main starts two agents", "match": {"first_user_contains": "Start the work", "last_is_tool_result": False},
     "content": [
         {"type": "text", "text": "Starting."},
         {"type": "tool_use", "id": "toolu_lead", "name": "Agent",
          "input": {"description": "Lead work", "prompt": "LEAD: do the work", "subagent_type": "lead"}},
         {"type": "tool_use", "id": "toolu_side", "name": "Agent",
          "input": {"description": "Side work", "prompt": "SIDE: look around", "subagent_type": "helper",
                    "run_in_background": True}}],
     "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 7}},
    {"name": "main commits", "match": {"first_user_contains": "Start the work", "last_is_tool_result": True},
     "content": [{"type": "tool_use", "id": "toolu_commit", "name": "Bash",
                  "input": {"command": "git add -A && git commit -qm 'from the agents'"}}]},
    {"name": "main answers", "match": {"first_user_contains": "Start the work"}, "repeat": True,
     "content": [{"type": "text", "text": "All done."}]},
    {"name": "lead nests", "match": {"first_user_contains": "LEAD:", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_nested", "name": "Agent",
                  "input": {"description": "Nested work", "prompt": "NESTED: write it", "subagent_type": "helper"}}]},
    {"name": "lead done", "match": {"first_user_contains": "LEAD:"}, "repeat": True,
     "content": [{"type": "text", "text": "lead done"}]},
    {"name": "nested writes", "match": {"first_user_contains": "NESTED:", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_write", "name": "Write",
                  "input": {"file_path": "__REPO__/made.py", "content": "a = 1\nb = 2\nc = 3\n"}}]},
    {"name": "nested done", "match": {"first_user_contains": "NESTED:"}, "repeat": True,
     "content": [{"type": "text", "text": "nested done"}]},
    {"name": "side looks", "match": {"first_user_contains": "SIDE:", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_side_bash", "name": "Bash", "input": {"command": "echo side"}}]},
    {"name": "side done", "match": {"first_user_contains": "SIDE:"}, "repeat": True,
     "content": [{"type": "text", "text": "side done"}]},
]}


def script_for(repo: Path) -> dict[str, Any]:
    return json.loads(json.dumps(SCRIPT).replace("__REPO__", str(repo)))


def telemetry_run(tmp_path: Path, receiver: OtlpReceiver, **extra: str) -> tuple[Path, Any]:
    repo = git_repo(tmp_path)
    with AnthropicTestServer(script_for(repo)) as server:
        env = cli_env(tmp_path, server, **receiver.env(), **GIT_ENV, CATUI_MAX_SUBAGENT_SPAWN_DEPTH="2",
                      GIT_CONFIG_GLOBAL=str(tmp_path / "gitconfig"), **extra)
        done = run_catui(repo, env, "-p", "Start the work", "--agents", json.dumps(AGENTS),
                         "--permission-mode", "bypassPermissions", "--effort", "high", timeout=120)
    assert done.returncode == 0, done.stderr
    return repo, done


@pytest.fixture
def receiver() -> Any:
    with OtlpReceiver() as rx:
        yield rx


def by_id(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {span["span_id"]: span for span in spans}


def parent_of(span: dict[str, Any], spans: list[dict[str, Any]]) -> dict[str, Any]:
    return by_id(spans)[span["parent_span_id"]]


def agent_span(spans: list[dict[str, Any]], agent_type: str, description: str) -> dict[str, Any]:
    [span] = [s for s in spans if s["name"] == "catui.agent" and s["attributes"].get("catui.agent.type") == agent_type
              and s["attributes"].get("catui.agent.description") == description]
    return span


def tool_span(spans: list[dict[str, Any]], tool_use_id: str) -> dict[str, Any]:
    [span] = [s for s in spans if s["name"] == "claude_code.tool" and s["attributes"]["tool_use_id"] == tool_use_id]
    return span


def test_the_span_tree_of_a_run_with_foreground_nested_and_background_agents(tmp_path: Path,
                                                                           receiver: OtlpReceiver) -> None:
    telemetry_run(tmp_path, receiver)
    # Everything was flushed before the process exited: no waiting for an export interval here.
    receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) == 3, "three agent spans")
    spans = receiver.spans
    turn = parent_of(tool_span(spans, "toolu_lead"), spans)
    assert turn["name"] == "claude_code.interaction" and turn["parent_span_id"] is None
    # A second turn may follow (the background agent's notification, when it ends after the first): a trace
    # of its own. Every agent's spans are in the first turn's trace.
    traces = {s["trace_id"] for s in spans if s["name"] == "claude_code.interaction"}
    assert turn["trace_id"] in traces and len(traces) == sum(s["name"] == "claude_code.interaction" for s in spans)

    lead, side = agent_span(spans, "lead", "Lead work"), agent_span(spans, "helper", "Side work")
    nested = agent_span(spans, "helper", "Nested work")
    # each agent hangs under the Agent call that started it, which hangs under its caller's run
    assert parent_of(lead, spans) is tool_span(spans, "toolu_lead")
    assert parent_of(tool_span(spans, "toolu_lead"), spans) is turn
    assert parent_of(side, spans) is tool_span(spans, "toolu_side")
    assert parent_of(tool_span(spans, "toolu_side"), spans) is turn
    assert parent_of(nested, spans) is tool_span(spans, "toolu_nested")
    assert parent_of(tool_span(spans, "toolu_nested"), spans) is lead
    assert {lead["trace_id"], side["trace_id"], nested["trace_id"]} == {turn["trace_id"]}
    assert side["attributes"]["catui.agent.is_async"] is True and lead["attributes"]["catui.agent.is_async"] is False
    assert nested["attributes"]["parent_agent_id"] == lead["attributes"]["catui.agent.id"]
    assert lead["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert lead["attributes"]["gen_ai.agent.name"] == "lead"

    # each agent's own model requests and tool calls hang under its span
    assert parent_of(tool_span(spans, "toolu_write"), spans) is nested
    assert parent_of(tool_span(spans, "toolu_side_bash"), spans) is side
    requests = [s for s in spans if s["name"] == "claude_code.llm_request"]
    under = {parent_of(s, spans)["span_id"] for s in requests if s["trace_id"] == turn["trace_id"]}
    assert under == {turn["span_id"], lead["span_id"], side["span_id"], nested["span_id"]}
    [first] = [s for s in requests if s["attributes"].get("gen_ai.usage.input_tokens") == 100]
    assert first["attributes"]["gen_ai.system"] == "anthropic"
    assert first["attributes"]["gen_ai.usage.output_tokens"] == 20
    assert first["attributes"]["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert first["attributes"]["gen_ai.request.model"] == first["attributes"]["gen_ai.response.model"]
    write = tool_span(spans, "toolu_write")["attributes"]
    assert write["decision"] == "accept" and write["decision_source"] == "config" and write["success"] is True
    assert "tool_input" not in write  # tool details only with OTEL_LOG_TOOL_DETAILS=1
    assert turn["attributes"]["user_prompt"] == "<REDACTED>"  # prompts only with OTEL_LOG_USER_PROMPTS=1
    assert turn["resource"]["service.name"] == "catui" and turn["resource"]["service.version"]


def test_metrics_and_events_have_claude_codes_names_and_attributes(tmp_path: Path, receiver: OtlpReceiver) -> None:
    telemetry_run(tmp_path, receiver, OTEL_RESOURCE_ATTRIBUTES="team=tools,cost_center=42",
                  OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20t0ken")
    receiver.wait_for(lambda rx: rx.metric("claude_code.token.usage") and rx.events("subagent_completed"),
                      "token metrics and subagent_completed events")
    session_ids = {r["attributes"]["session.id"] for r in receiver.logs}
    assert len(session_ids) == 1
    # the prompt, and perhaps a second turn for the background agent's notification (see above)
    prompt, *_later = receiver.events("user_prompt")
    prompt_ids = {r["attributes"]["prompt.id"] for r in receiver.events("user_prompt")}
    for record in receiver.logs + receiver.points:
        attributes = record["attributes"]
        assert attributes["session.id"] in session_ids and attributes["prompt.id"] in prompt_ids, record
        assert attributes["catui.agent.id"] and attributes["catui.agent.type"], record
        assert record["resource"]["team"] == "tools" and record["resource"]["service.name"] == "catui"
    assert all(h.get("authorization") == "Bearer t0ken" for h in receiver.headers)
    assert prompt["body"] == "claude_code.user_prompt" and prompt["attributes"]["prompt"] == "<REDACTED>"
    assert prompt["attributes"]["prompt_length"] == len("Start the work")

    tokens = receiver.metric("claude_code.token.usage")
    main_input = [p for p in tokens if p["attributes"]["type"] == "input" and p["attributes"]["catui.agent.type"] == "main"]
    assert sum(p["value"] for p in main_input) > 100 and {p["unit"] for p in tokens} == {"tokens"}  # 100 + 2 turns
    assert main_input[0]["attributes"]["effort"] == "high" and main_input[0]["attributes"]["query_source"] == "main"
    assert {p["attributes"]["type"] for p in tokens} >= {"input", "output", "cacheRead"}
    assert {p["attributes"]["query_source"] for p in tokens} >= {"main", "agent:lead", "agent:helper"}
    assert sum(p["value"] for p in receiver.metric("claude_code.session.count")) == 1
    assert receiver.metric("claude_code.cost.usage")[0]["unit"] == "USD"
    assert sum(p["value"] for p in receiver.metric("claude_code.commit.count")) == 1
    lines = receiver.metric("claude_code.lines_of_code.count")
    assert [(p["attributes"]["type"], p["value"]) for p in lines] == [("added", 3)]
    [decision] = receiver.metric("claude_code.code_edit_tool.decision")
    assert decision["attributes"].items() >= {"tool_name": "Write", "decision": "accept", "source": "config",
                                              "language": "Python", "catui.agent.type": "helper"}.items()
    assert receiver.metric("claude_code.active_time.total")[0]["unit"] == "s"

    requests = receiver.events("api_request")
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for record in requests:
        by_agent.setdefault(record["attributes"]["catui.agent.type"], []).append(record)
    counts = {k: len(v) for k, v in by_agent.items()}
    assert counts.pop("main") in (3, 4) and counts == {"lead": 2, "helper": 4}
    # the agents' requests belong to the first prompt
    assert {r["attributes"]["prompt.id"] for r in by_agent["lead"] + by_agent["helper"]} == {
        prompt["attributes"]["prompt.id"]}
    first = next(r for r in requests if r["attributes"]["input_tokens"] == 100)
    assert first["attributes"]["cache_read_tokens"] == 7 and first["attributes"]["duration_ms"] >= 0
    assert "ttft_ms" in first["attributes"] and "cost_usd" in first["attributes"]
    assert first["trace_id"]  # events inside a span carry its trace
    assert len(receiver.events("assistant_response")) == len(requests)
    decisions = receiver.events("tool_decision")
    assert {d["attributes"]["tool_use_id"] for d in decisions} >= {"toolu_lead", "toolu_side", "toolu_write"}
    results = {r["attributes"]["tool_use_id"]: r["attributes"] for r in receiver.events("tool_result")}
    assert results["toolu_write"]["success"] is True and results["toolu_write"]["decision_source"] == "config"
    completed = {r["attributes"]["subagent_type"] for r in receiver.events("subagent_completed")}
    assert completed == {"lead", "helper"} and len(receiver.events("subagent_completed")) == 3


def test_prompts_and_tool_details_only_when_asked_for(tmp_path: Path, receiver: OtlpReceiver) -> None:
    telemetry_run(tmp_path, receiver, OTEL_LOG_USER_PROMPTS="1", OTEL_LOG_TOOL_DETAILS="1")
    receiver.wait_for(lambda rx: bool(rx.events("tool_result")) and "claude_code.interaction" in rx.span_names(),
                      "tool results and the turn span")
    assert receiver.events("user_prompt")[0]["attributes"]["prompt"] == "Start the work"
    write = tool_span(receiver.spans, "toolu_write")["attributes"]
    assert json.loads(write["tool_input"])["content"] == "a = 1\nb = 2\nc = 3\n"
    results = {r["attributes"]["tool_use_id"]: r["attributes"] for r in receiver.events("tool_result")}
    assert json.loads(results["toolu_commit"]["tool_parameters"])["command"].startswith("git add -A")
