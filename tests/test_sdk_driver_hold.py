"""catui's SDK driver holds a background agent's messages that arrive while a turn of the client is under way
outside its session's run, and delivers them after that turn's result (``ClientDriver._held_in_turn``).

A manual ``/compact`` is such a turn: it asks the model for a summary outside ``Session.run``. The order is
set without sleeping: the loopback server holds the summary request (``LoopbackServer.hold``) while the
background agent, released from an in-process tool, hands back its tool result; the server also holds the
agent's next request, so its later messages cannot arrive before the test has read the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import catui
from catui.models.resolve import clear_provider_cache
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.loopback import RecordedRequest

GUARD_S = 30  # a broken order stops the test here instead of hanging the suite (not a timing assertion)
JOB_AGENT = "You are the job agent."

JOBBER = catui.AgentDefinition(description="Runs the long job.", prompt=JOB_AGENT, tools=["long_job"])


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield
    clear_provider_cache()


def turns() -> list[dict[str, Any]]:
    call = {"description": "Run the job", "prompt": "Run long_job", "subagent_type": "jobber",
            "run_in_background": True}
    return [
        {"match": {"system_contains": "working memory of a coding agent"},  # the /compact summary request
         "content": [{"type": "text", "text": "Summary: a job runs in the background."}]},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}]},
        {"match": {"system_contains": JOB_AGENT, "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "long_job", "input": {}}]},
        {"match": {"system_contains": JOB_AGENT, "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The job is done."}]},
        {"match": {"first_user_contains": "Do the job", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent", "input": call}]},
        {"match": {"first_user_contains": "Do the job", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The job runs on its own now."}]},
    ]


def system_text(request: RecordedRequest) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    system = body.get("system")
    return system if isinstance(system, str) else " ".join(str(block.get("text", "")) for block in system or [])


def is_summary_request(request: RecordedRequest) -> bool:
    return "working memory of a coding agent" in system_text(request)


def is_agents_request_after_its_tool(request: RecordedRequest) -> bool:
    body = request.body if isinstance(request.body, dict) else {}
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    return JOB_AGENT in system_text(request) and isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content)


async def next_messages(client: catui.CatuiClient, until: Any) -> list[Any]:
    """Messages from the client up to and including the first for which ``until`` is true."""
    async def read() -> list[Any]:
        received: list[Any] = []
        async for message in client.receive_messages():
            received.append(message)
            if until(message):
                return received
        raise AssertionError(f"the client closed before the expected message; got {received}")

    return await asyncio.wait_for(read(), GUARD_S)


def from_the_agent(message: Any) -> bool:
    return getattr(message, "parent_tool_use_id", None) is not None


async def test_a_background_agents_messages_during_a_compaction_come_after_its_result(tmp_path: Path) -> None:
    entered, release_tool = asyncio.Event(), asyncio.Event()

    @catui.tool("long_job", "A job that runs until released.", {}, read_only=True)
    async def long_job(args: dict[str, Any]) -> str:
        entered.set()
        await release_tool.wait()
        return "job done"

    work = tmp_path / "work"
    work.mkdir()
    with AnthropicTestServer({"turns": turns()}) as server:
        options = catui.CatuiOptions(model="claude-sonnet-4-6", env=server.env(), cwd=str(work), setting_sources=[],
                                     agents={"jobber": JOBBER}, tools=[long_job])
        async with catui.CatuiClient(options) as client:
            await client.query("Do the job")
            first = await next_messages(client, lambda m: isinstance(m, catui.ResultMessage))
            assert first[-1].result == "The job runs on its own now."
            await asyncio.wait_for(entered.wait(), GUARD_S)  # the agent waits inside long_job
            summary = server.hold(is_summary_request)
            agent_after_tool = server.hold(is_agents_request_after_its_tool)

            await client.query("/compact")
            await summary.wait_arrived(GUARD_S)  # the compaction turn is under way, outside the session's run
            release_tool.set()
            # the agent's tool result has been sent (as a message and in its next request) while the turn ran
            await agent_after_tool.wait_arrived(GUARD_S)
            summary.release()
            compaction = await next_messages(client, lambda m: isinstance(m, catui.ResultMessage))
            # nothing of the agent's inside the compaction turn
            assert [(type(m).__name__, getattr(m, "subtype", None)) for m in compaction] == [
                ("SystemMessage", "init"), ("SystemMessage", "compact_boundary"), ("ResultMessage", "success")]
            # then what the agent did meanwhile, held until now: its tool result
            held = await next_messages(client, lambda m: from_the_agent(m) and isinstance(m, catui.UserMessage))

            agent_after_tool.release()
            rest = await next_messages(client, lambda m: isinstance(m, catui.ResultMessage))

    tool_result = held[-1]
    assert isinstance(tool_result.content, list) and "job done" in str(tool_result.content)
    assert [m for m in held[:-1] if from_the_agent(m)] == []  # the tool result is the first of them
    notification = next(m for m in rest if isinstance(m, catui.TaskNotificationMessage))
    assert notification.status == "completed" and rest[-1].result == "Noted."
