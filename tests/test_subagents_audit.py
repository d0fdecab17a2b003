"""Audit of issue 5: pieces of the foreground Agent path not covered elsewhere (a real spawn's span)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catui.telemetry import spans
from tests.test_subagents_runtime import build, run, spawn, tool_results


class RecordingSpan:
    def __init__(self, name: str, attributes: dict[str, Any]) -> None:
        self.name = name
        self.attributes = dict(attributes)
        self.open = True

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value


class RecordingTracer:
    """Stands in for an OpenTelemetry tracer with an SDK behind it (only the API is installed here)."""

    def __init__(self) -> None:
        self.spans: list[RecordingSpan] = []

    @contextlib.contextmanager
    def start_as_current_span(self, name: str, attributes: dict[str, Any]) -> Iterator[RecordingSpan]:
        span = RecordingSpan(name, attributes)
        self.spans.append(span)
        try:
            yield span
        finally:
            span.open = False


async def test_each_foreground_agent_runs_in_its_own_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tracer = RecordingTracer()
    monkeypatch.setattr(spans, "_tracer", tracer)
    monkeypatch.setattr(spans, "_checked", True)
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
    events = await run(app, "PARENT")
    results = tool_results(events)
    assert not results["toolu_1"].get("is_error") and not results["toolu_2"].get("is_error")
    by_type = {s.attributes["catui.agent.type"]: s for s in tracer.spans}
    assert set(by_type) == {"Explore", "general-purpose"} and all(s.name == "catui.agent" for s in tracer.spans)
    explore, general = by_type["Explore"], by_type["general-purpose"]
    assert explore.attributes["catui.agent.model_reason"] == "definition"
    assert general.attributes["catui.agent.model_reason"] == "call"
    assert explore.attributes["catui.agent.tool_uses"] == 1 and general.attributes["catui.agent.tool_uses"] == 0
    assert explore.attributes["catui.agent.error"] is False
    agent_ids = {s.attributes["catui.agent.id"] for s in tracer.spans}
    assert all(len(i) == 17 and i.startswith("a") for i in agent_ids) and len(agent_ids) == 2
    assert not any(s.open for s in tracer.spans)
