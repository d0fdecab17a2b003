"""What an SDK user sees of a workflow the model launches: claude-agent-sdk driving the catui CLI, and catui's
own in-process ``catui.query`` / ``CatuiClient``, against the loopback Anthropic server. The workflow is one task
(``local_workflow``): started, progress with ``workflow_progress``, its notification and ``task_updated``; its
agents are no tasks of their own, and their transcripts are found by the SDK's session readers in the run's
folder. ``stop_task`` with the run's task id stops it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

import catui  # noqa: E402
from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.sdk_backend import isolated_sdk_home  # noqa: E402,F401 - a fixture

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)
CATUI = str(Path(sys.executable).with_name("catui"))
SCRIPT = """export const meta = {name: "pair", description: "Ask two things", phases: [{title: "Ask"}]}
phase("Ask")
const [a, b] = await parallel([() => agent("Question alpha"), () => agent("Question beta", {label: "beta"})])
return {a, b}
"""


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def turns(script: str = SCRIPT, **slow: Any) -> list[dict[str, Any]]:
    return [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
        {"match": {"first_user_contains": "Question alpha"}, "content": text("alpha answer"), "repeat": True},
        {"match": {"first_user_contains": "Question beta"}, "content": text("beta answer"), "repeat": True, **slow},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "repeat": True,
         "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": script}}]},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
         "repeat": True},
    ]


def check_task_messages(messages: list[Any], sdk: Any) -> str:
    """The workflow's task messages, as either SDK types them; returns its task id."""
    started = [m for m in messages if isinstance(m, sdk.TaskStartedMessage)]
    assert [m.task_type for m in started] == ["local_workflow"]  # its agents are no tasks of their own
    task_id = started[0].task_id
    assert started[0].description == "Ask two things" and started[0].tool_use_id == "toolu_wf"
    assert started[0].data["workflow_name"] == "pair" and started[0].data["prompt"] == SCRIPT
    progress = [m for m in messages if isinstance(m, sdk.TaskProgressMessage)]
    assert progress and {m.task_id for m in progress} == {task_id}
    entries = progress[-1].data["workflow_progress"]
    assert {"type": "workflow_phase", "title": "Ask"} in entries
    assert sorted(e["label"] for e in entries if e["type"] == "workflow_agent" and e["state"] == "done") == [
        "Question alpha", "beta"]
    assert progress[-1].usage["total_tokens"] > 0
    (ended,) = [m for m in messages if isinstance(m, sdk.TaskNotificationMessage)]
    assert ended.task_id == task_id and ended.status == "completed"
    assert ended.summary == 'Dynamic workflow "Ask two things" completed'
    updated = [m for m in messages if isinstance(m, sdk.TaskUpdatedMessage)]
    assert [(m.task_id, m.status) for m in updated] == [(task_id, "completed")]
    # the notification's turn: the model was told the result
    results = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    assert results[-1].result == "workflow noted"
    return task_id


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_claude_agent_sdk_sees_one_workflow_task_and_reads_its_agents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))  # where the SDK's readers look
    monkeypatch.setenv("CATUI_LINK_CLAUDE_SESSIONS", "1")
    with AnthropicTestServer({"turns": turns()}) as server:
        options = claude_agent_sdk.ClaudeAgentOptions(
            cli_path=CATUI, cwd=str(work), model="claude-sonnet-4-6", permission_mode="bypassPermissions",
            env={**server.env(), "CATUI_COMPAT": "2.1.332"})

        async def gather() -> list[Any]:
            return [m async for m in claude_agent_sdk.query(prompt="Run it", options=options)]

        messages = await asyncio.wait_for(gather(), GUARD_S)
    check_task_messages(messages, claude_agent_sdk)
    session_id = messages[-1].session_id
    # The session readers of claude-agent-sdk find the workflow's agents in the run's folder.
    agent_ids = claude_agent_sdk.list_subagents(session_id, directory=str(work))
    assert len(agent_ids) == 2
    answers = set()
    for agent_id in agent_ids:
        for message in claude_agent_sdk.get_subagent_messages(session_id, agent_id, directory=str(work)):
            answers.add(json.dumps(message.message))
    assert any("alpha answer" in a for a in answers) and any("beta answer" in a for a in answers)


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_catui_query_sees_the_same_task_messages(tmp_path: Path) -> None:
    with AnthropicTestServer({"turns": turns()}) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat="2.1.332",
                                     permission_mode="bypassPermissions", setting_sources=[])

        async def gather() -> list[Any]:
            return [m async for m in catui.query("Run it", options)]

        messages = await asyncio.wait_for(gather(), GUARD_S)
    check_task_messages(messages, catui)
    session_id = messages[-1].session_id
    agent_ids = catui.list_subagents(session_id, directory=str(tmp_path))
    assert len(agent_ids) == 2


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_catui_client_stops_a_running_workflow_by_its_task_id(tmp_path: Path) -> None:
    with AnthropicTestServer({"turns": turns(delay_ms=20000)}) as server:  # beta still runs when it is stopped
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat="2.1.332",
                                     permission_mode="bypassPermissions", setting_sources=[])

        async def drive() -> list[Any]:
            seen: list[Any] = []
            async with catui.CatuiClient(options) as client:
                await client.query("Run it")
                async for message in client.receive_messages():
                    seen.append(message)
                    if isinstance(message, catui.TaskProgressMessage) and any(
                            e.get("label") == "Question alpha" and e.get("state") == "done"
                            for e in message.data["workflow_progress"]):
                        await client.stop_task(message.task_id)
                    if isinstance(message, catui.ResultMessage) and any(
                            isinstance(m, catui.TaskNotificationMessage) for m in seen):
                        break
            return seen

        messages = await asyncio.wait_for(drive(), GUARD_S)
    (ended,) = [m for m in messages if isinstance(m, catui.TaskNotificationMessage)]
    assert ended.status == "stopped" and ended.summary == 'Dynamic workflow "Ask two things" was stopped'
    assert [m.status for m in messages if isinstance(m, catui.TaskUpdatedMessage)] == ["killed"]
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "catui-home").glob("projects/*/*/workflows/wf_*.json")]
    assert record["status"] == "stopped"
