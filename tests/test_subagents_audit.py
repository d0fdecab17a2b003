"""Audit of issue 5: pieces of the foreground Agent path not covered elsewhere (a real spawn's span)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.telemetry.switch import start_telemetry
from tests.support.otlp_receiver import OtlpReceiver
from tests.test_subagents_runtime import build, run, spawn, tool_results


async def test_each_foreground_agent_runs_in_its_own_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "EXPLORE JOB", "Explore"), spawn("toolu_2", "GP JOB", model="opus")]},
        {"match": {"first_user_contains": "EXPLORE JOB", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_c1", "name": "Glob", "input": {"pattern": "*.md"}}]},
        {"match": {"first_user_contains": "EXPLORE JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "found it"}]},
        {"match": {"first_user_contains": "GP JOB"}, "content": [{"type": "text", "text": "done it"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "all done"}]},
    ])
    with OtlpReceiver() as receiver:
        telemetry = start_telemetry(receiver.env())
        app.session.config.telemetry = telemetry  # children inherit it
        events = await run(app, "PARENT")
        assert telemetry is not None
        telemetry.flush()
        receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) == 2, "two agent spans")
        spans = list(receiver.spans)
    results = tool_results(events)
    assert not results["toolu_1"].get("is_error") and not results["toolu_2"].get("is_error")
    agents = [s for s in spans if s["name"] == "catui.agent"]
    by_type = {s["attributes"]["catui.agent.type"]: s for s in agents}
    assert set(by_type) == {"Explore", "general-purpose"}
    explore, general = by_type["Explore"], by_type["general-purpose"]
    assert explore["attributes"]["catui.agent.model_reason"] == "definition"
    assert general["attributes"]["catui.agent.model_reason"] == "call"
    assert explore["attributes"]["catui.agent.tool_use_id"] == "toolu_1"
    [glob] = [s for s in spans if s["name"] == "claude_code.tool" and s["attributes"]["tool_name"] == "Glob"]
    assert glob["parent_span_id"] == explore["span_id"]  # the child's tool call, inside the child's span
    assert explore["attributes"]["catui.run.subtype"] == "success"
    agent_ids = {s["attributes"]["catui.agent.id"] for s in agents}
    assert all(len(i) == 17 and i.startswith("a") for i in agent_ids) and len(agent_ids) == 2
