"""Where forked and resumed agents' spans hang, exported to a real OTLP receiver from an app in this process.

An agent finishes in the foreground; in the next turn SendMessage resumes it (in the background): its
second run's span hangs under that SendMessage call, in the second turn's trace. A fork (an Agent call
without a type) hangs under its Agent call. A teammate's runs (one per message it gets) hang under the
Agent call that spawned it. The model is the loopback Anthropic server.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from catui.app import RunOptions, build_app
from catui.cli.run import conversation_events
from catui.models.replay.scripted import ScriptEngine
from catui.session.events import ToolEndEvent
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.otlp_receiver import OtlpReceiver
from tests.test_teams_cli import lifecycle_turns
from tests.test_telemetry_otlp import parent_of, tool_span

GUARD_S = 60

FIRST = {"turns": [
    {"match": {"last_user_contains": "FORKED:"}, "content": [{"type": "text", "text": "forked done"}], "repeat": True},
    {"match": {"first_user_contains": "HELP:"}, "content": [{"type": "text", "text": "help done"}], "repeat": True},
    {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_named", "name": "Agent", "input": {
         "description": "Helper", "prompt": "HELP: first", "subagent_type": "general-purpose"}}]},
    {"match": {"first_user_contains": "Start", "last_is_tool_result": True},
     "content": [{"type": "tool_use", "id": "toolu_fork", "name": "Agent",
                  "input": {"description": "Fork it", "prompt": "FORKED: go"}}]},
    {"content": [{"type": "text", "text": "Done."}], "repeat": True},
]}


def second(agent_id: str) -> dict[str, Any]:
    """The second prompt's script: SendMessage to the helper (whose id the first prompt told), which resumes it."""
    return {"turns": [
        {"match": {"last_user_contains": "AGAIN:"}, "content": [{"type": "text", "text": "again done"}], "repeat": True},
        {"match": {"last_user_contains": "Resume it", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_send", "name": "SendMessage",
                      "input": {"to": agent_id, "message": "AGAIN: more"}}]},
        {"content": [{"type": "text", "text": "Done."}], "repeat": True},
    ]}


async def test_forked_and_resumed_agents_hang_under_the_calls_that_started_them(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with OtlpReceiver() as receiver, AnthropicTestServer(FIRST) as server:
        app = build_app(RunOptions(cwd=project, permission_mode="bypassPermissions", setting_sources=(),
                                   env={**receiver.env(), **server.env(), "CATUI_FORK_SUBAGENT": "1",
                                        "CATUI_HOME": str(tmp_path / "catui-home")}))
        try:
            async def drive(prompt: str) -> list[Any]:
                return [event async for event in conversation_events(app, prompt)]

            events = await asyncio.wait_for(drive("Start"), GUARD_S)
            [helper_end] = [e for e in events if isinstance(e, ToolEndEvent) and e.tool_use_id == "toolu_named"]
            agent_id = re.findall(r"agentId: (\w+)", json.dumps(helper_end.content))[0]
            server.engine = ScriptEngine(second(agent_id))
            await asyncio.wait_for(drive("Resume it"), GUARD_S)
        finally:
            await app.aclose()
        receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) == 3, "three agent spans")
        spans = list(receiver.spans)
    agents = [s for s in spans if s["name"] == "catui.agent"]
    first, resumed = sorted((s for s in agents if s["attributes"]["catui.agent.description"] == "Helper"),
                            key=lambda s: s["attributes"]["catui.agent.is_resume"])
    assert first["attributes"]["catui.agent.id"] == resumed["attributes"]["catui.agent.id"] == agent_id
    assert parent_of(first, spans) is tool_span(spans, "toolu_named")
    assert resumed["attributes"]["catui.agent.is_resume"] is True
    assert parent_of(resumed, spans) is tool_span(spans, "toolu_send")  # under the call that resumed it
    [fork] = [s for s in agents if s["attributes"]["catui.agent.is_fork"]]
    assert fork["attributes"]["catui.agent.type"] == "fork"
    assert parent_of(fork, spans) is tool_span(spans, "toolu_fork")
    first_turn = parent_of(tool_span(spans, "toolu_named"), spans)
    second_turn = parent_of(tool_span(spans, "toolu_send"), spans)
    assert first_turn["name"] == second_turn["name"] == "claude_code.interaction"
    assert first_turn["trace_id"] != second_turn["trace_id"]  # a trace per turn
    assert {first["trace_id"], fork["trace_id"]} == {first_turn["trace_id"]}
    assert resumed["trace_id"] == second_turn["trace_id"]


def test_teammates_runs_hang_under_the_agent_call_that_spawned_them(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    with OtlpReceiver() as receiver, AnthropicTestServer({"turns": lifecycle_turns()}) as server:
        done = run_catui(repo, cli_env(tmp_path, server, CATUI_AGENT_TEAMS="1", **receiver.env()),
                         "-p", "Lead the team", timeout=GUARD_S)
        assert done.returncode == 0, done.stderr
        receiver.wait_for(lambda rx: any(s["name"] == "catui.agent" and s["attributes"].get("catui.agent.tool_use_id")
                                         == "toolu_spawn_w" for s in rx.spans), "the worker's span")
        spans = list(receiver.spans)
    worker_runs = [s for s in spans if s["name"] == "catui.agent"
                   and s["attributes"].get("catui.agent.tool_use_id") == "toolu_spawn_w"]
    # a teammate runs once per message it is given; every run hangs under the Agent call that spawned it
    assert worker_runs and {parent_of(s, spans)["span_id"] for s in worker_runs} == {
        tool_span(spans, "toolu_spawn_w")["span_id"]}
    assert len({s["attributes"]["catui.agent.id"] for s in worker_runs}) == 1
    # its own SendMessage calls hang under its runs
    assert parent_of(tool_span(spans, "toolu_w_lead"), spans) in worker_runs
