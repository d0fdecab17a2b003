"""The SDK's AgentDefinition limits and outputSchema, end to end on the scripted provider and the loopback server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.sdk_backend import (  # noqa: F401 - backend_fixture and isolated_sdk_home are fixtures
    Backend,
    backend_fixture,
    collect,
    isolated_sdk_home,
)

SCHEMA = {"type": "object", "properties": {"files": {"type": "integer"}}, "required": ["files"]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


def parent_turns(agent: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "name": "Agent",
            "input": {"description": "Count", "prompt": "Count the files", "subagent_type": agent}}
    return [
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}]},
    ]


def agent_tool_result(messages: list[Any]) -> dict[str, Any]:
    return next(m.tool_use_result for m in messages if isinstance(m, catui.UserMessage)
                and m.parent_tool_use_id is None and m.tool_use_result)


async def test_max_tokens_from_the_sdk_stops_the_child(backend: Backend, project: Path) -> None:
    counter = catui.AgentDefinition(description="Counts.", prompt="You are the counter.", tools=["Glob"],
                                    maxTokens=100)
    turns = [*parent_turns("counter"),
             {"match": {"system_contains": "You are the counter", "last_is_tool_result": False},
              "content": [{"type": "text", "text": "Globbing."},
                          {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}],
              "usage": {"input_tokens": 90, "output_tokens": 20}},
             {"match": {"system_contains": "You are the counter"},
              "content": [{"type": "text", "text": "SHOULD NOT HAPPEN"}]}]
    messages = await collect("Go", backend.options(turns, cwd=project, agents={"counter": counter}))
    result = agent_tool_result(messages)
    assert result["status"] == "budget_exceeded" and result["spent"]["totalTokens"] == 110
    assert result["partialResult"] == "Globbing."
    ended = next(m for m in messages if isinstance(m, catui.TaskNotificationMessage))
    assert ended.status == "budget_exceeded"


async def test_output_schema_from_the_sdk_gives_structured_output(backend: Backend, project: Path) -> None:
    counter = catui.AgentDefinition(description="Counts.", prompt="You are the counter.", tools=["Glob"],
                                    output_schema=SCHEMA)
    turns = [*parent_turns("counter"),
             {"match": {"system_contains": "You are the counter", "last_is_tool_result": False},
              "content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"files": 1}}]},
             {"match": {"system_contains": "You are the counter", "last_is_tool_result": True},
              "content": [{"type": "text", "text": "done"}]}]
    messages = await collect("Go", backend.options(turns, cwd=project, agents={"counter": counter}))
    result = agent_tool_result(messages)
    assert result["status"] == "completed" and result["structured_output"] == {"files": 1}


def test_sdk_definitions_reject_bad_limits_naming_the_field() -> None:
    with pytest.raises(catui.ConfigurationError, match="stallTimeout: 'later' is not a duration"):
        catui.AgentDefinition(description="d", prompt="p", stallTimeout="later")
    with pytest.raises(catui.ConfigurationError, match="maxBudgetUsd: Input should be greater than 0"):
        catui.AgentDefinition(description="d", prompt="p", maxBudgetUsd=-1)
