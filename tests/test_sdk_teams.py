"""Teams through the SDK: ``query()`` yields teammates' messages with their agent id, and a client's
team view; on the scripted provider and on the loopback Anthropic server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import catui
from tests.support.sdk_backend import GUARD_S, Backend, backend_fixture, collect, isolated_sdk_home

__all__ = ["backend_fixture", "isolated_sdk_home"]

TEAMS = {"CATUI_AGENT_TEAMS": "1"}


def tool(tool_name: str, tool_id: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": tool_name, "input": args}


def turns() -> list[dict[str, Any]]:
    lead = "Lead a team"
    return [
        {"match": {"first_user_contains": lead, "last_user_contains": lead},
         "content": [tool("TeamCreate", "toolu_c", team_name="sdkteam")]},
        {"match": {"first_user_contains": lead, "last_user_contains": "lead_agent_id"},
         "content": [tool("Agent", "toolu_s", description="count", prompt="TASK-COUNT", name="counter")]},
        {"match": {"first_user_contains": lead, "last_user_contains": "Spawned successfully"},
         "content": [{"type": "text", "text": "Started."}]},
        {"match": {"first_user_contains": lead, "last_user_contains": "still has active members"},
         "content": [{"type": "text", "text": "Final: 3 files."}]},
        {"match": {"first_user_contains": lead, "last_user_contains": "<teammate-message"},
         "content": [{"type": "text", "text": "Thanks."}], "repeat": True},
        {"match": {"first_user_contains": "TASK-COUNT", "last_user_contains": "TASK-COUNT"},
         "content": [tool("SendMessage", "toolu_m", to="team-lead", message="3 files", summary="count")]},
        {"match": {"first_user_contains": "TASK-COUNT"}, "content": [{"type": "text", "text": "done"}],
         "repeat": True},
    ]


async def test_query_yields_teammate_messages_with_their_agent_id(backend: Backend) -> None:
    messages = await collect("Lead a team", backend.options(turns(), env=TEAMS))
    started = [m for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "task_started"]
    assert [m.data["task_type"] for m in started] == ["in_process_teammate"]
    assert started[0].data["task_id"] == "counter@sdkteam"
    mine = [m for m in messages if isinstance(m, catui.AssistantMessage) and m.agent_id == "counter@sdkteam"]
    assert mine and all(m.parent_tool_use_id == "toolu_s" for m in mine)
    assert any("toolu_m" in str(m.content) for m in mine)
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    assert results[-1].result == "Final: 3 files."
    lead_turns = [m for m in messages if isinstance(m, catui.UserMessage) and m.agent_id is None
                  and '<teammate-message teammate_id="counter" color="blue">' in str(m.content)]
    assert lead_turns and "3 files" in str(lead_turns[0].content)


async def test_a_client_shows_its_team_and_stops_it_when_closed(backend: Backend) -> None:
    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with catui.CatuiClient(backend.options(turns(), env=TEAMS)) as client:
            await client.query("Lead a team")
            async for _ in client.receive_response():
                pass
            config = json.loads((Path(os.environ["CATUI_HOME"]) / "teams" / "sdkteam" / "config.json").read_text())
            return client.team(), config

    members, config = await asyncio.wait_for(run(), GUARD_S)
    assert [(m["name"], m["agentId"], m["color"], m["active"]) for m in members] == [
        ("counter", "counter@sdkteam", "blue", True)]
    lead, counter = config["members"]
    assert lead["agentId"] == "team-lead@sdkteam" and lead["name"] == "team-lead" and lead["agentType"] == "team-lead"
    assert set(counter) == {"agentId", "name", "agentType", "model", "prompt", "color", "planModeRequired",
                            "joinedAt", "cwd", "subscriptions", "backendType"}
    assert (counter["agentId"], counter["agentType"], counter["prompt"], counter["color"]) == (
        "counter@sdkteam", "general-purpose", "TASK-COUNT", "blue")
    assert counter["planModeRequired"] is False and counter["backendType"] == "in-process"
    assert "opus" in counter["model"] and counter["subscriptions"] == []
    assert config["leadAgentId"] == "team-lead@sdkteam" and isinstance(config["createdAt"], int)
