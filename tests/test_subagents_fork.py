"""Fork mode: an Agent call without subagent_type runs a copy of the caller (switch on), else general-purpose.

In process on the scripted provider (a recording wrapper keeps every request as sent), and the real CLI
against the loopback Anthropic server with CATUI_FORK_SUBAGENT=1, asserting on the recorded requests.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.agents.builtin import builtin_agents
from catui.app import AgentApp, AppServices, RunOptions
from catui.config.settings import Settings
from catui.messages import Message, blocks_of
from catui.models.base import ModelRequest
from catui.models.resolve import create_provider, resolve_model
from catui.permissions.context import PermissionContext
from catui.session.events import Event, ResultEvent, SystemEvent, UserMessageEvent
from catui.session.session import Session, SessionConfig
from catui.session.transcript import TranscriptWriter
from catui.subagents.fork import (
    AGENT_CALL_PLACEHOLDER,
    FORK_QUERY_SOURCE,
    FORK_RECURSION_ERROR,
    OTHER_CALL_PLACEHOLDER,
    ForkPlanner,
    build_fork_messages,
    current_turn_start,
    fork_agent_definition,
)
from catui.subagents.install import SubagentHandle, SubagentParts, install_subagents
from catui.tools.base import ToolContext, ToolServices
from catui.tools.registry import builtin_tools
from tests.support.anthropic_server import AnthropicTestServer

ROOT = Path(__file__).resolve().parents[1]
FORK_ON = {"CATUI_FORK_SUBAGENT": "1"}


class StaticRegistry:
    def __init__(self) -> None:
        self.active = builtin_agents()
        self.version = 1

    def get(self, name: str) -> Any:
        return next((a for a in self.active if a.agent_type == name), None)

    def reload_if_changed(self) -> bool:
        return False


class RecordingProvider:
    """The scripted provider, keeping a copy of each request as it was when sent."""

    name = "scripted"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[dict[str, Any]]:
        self.requests.append(copy.deepcopy(request))
        async for event in self.inner.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()


def build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]],
          env: dict[str, str] | None = None) -> tuple[AgentApp, RecordingProvider]:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("hello\n")
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    resolved = resolve_model(f"scripted:{script}", {}, {})
    provider = RecordingProvider(create_provider(resolved, {}, {}))
    handle = SubagentHandle(lambda: system)  # the sub-agent system is installed below, over the session
    ctx = ToolContext(cwd=repo, project_root=repo, services=ToolServices(subagents=handle, output_review=handle),
                      permissions=PermissionContext(mode="default", working_directories=(repo,)))
    transcript = TranscriptWriter([tmp_path / "home" / "main.jsonl"], session_id="s-1", cwd=repo)
    session = Session(SessionConfig(provider=provider, model=resolved.model_id, tools=builtin_tools(),
                                    tool_context=ctx, session_id="s-1", transcript=transcript,
                                    system_prompt=[{"type": "text", "text": "PARENT SYSTEM PROMPT"}]))
    registry, env = StaticRegistry(), dict(FORK_ON if env is None else env)
    system = install_subagents(SubagentParts(
        session=session, registry=registry, settings={}, env=env, project_root=repo, cwd=repo,
        tasks=None, resolved_model=resolved))
    app = AgentApp(session=session, options=RunOptions(cwd=repo), settings=Settings.from_dict({}), registry=registry,
                   tasks=None, project_root=repo, transcript_path=None, model_display="scripted",
                   resolved_model=resolved, services=AppServices(env=env, subagents=system))
    return app, provider


async def run(app: AgentApp, prompt: str) -> list[Event]:
    return [event async for event in app.session.run(prompt)]


def agent_call(tool_id: str, prompt: str, subagent_type: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"description": f"job {tool_id}", "prompt": prompt}
    if subagent_type:
        args["subagent_type"] = subagent_type
    return {"type": "tool_use", "id": tool_id, "name": "Agent", "input": args}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def tool_results(events: list[Event]) -> dict[str, dict[str, Any]]:
    return {
        block["tool_use_id"]: block
        for event in events if isinstance(event, UserMessageEvent) and event.agent_id is None
        for block in blocks_of(event.message) if block.get("type") == "tool_result"
    }


def use_results(events: list[Event]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for event in events:
        if isinstance(event, UserMessageEvent) and event.agent_id is None and event.tool_use_results:
            out.update(event.tool_use_results)
    return out


def is_fork_request(request: ModelRequest) -> bool:
    return request.metadata.get("query_source") == FORK_QUERY_SOURCE


def directive_text(message: dict[str, Any]) -> str:
    last = blocks_of(message)[-1]
    assert last["type"] == "text"
    return str(last["text"])


PARENT_TURNS: list[dict[str, Any]] = [
    {"name": "parent-1", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
     "content": [{"type": "text", "text": "Looking first."},
                 {"type": "tool_use", "id": "toolu_look", "name": "Glob", "input": {"pattern": "*.txt"}}]},
    {"name": "parent-2", "match": {"first_user_contains": "PARENT", "last_user_contains": "notes.txt"},
     "content": [{"type": "text", "text": "Forking now."}, agent_call("toolu_fork", "FORK JOB: count lines"),
                 {"type": "tool_use", "id": "toolu_glob", "name": "Glob", "input": {"pattern": "*.md"}}]},
    {"name": "fork", "match": {"last_user_contains": "FORK JOB"}, "content": text("fork answer: 1 line")},
    {"name": "parent-final", "match": {"last_user_contains": "fork answer"}, "content": text("all done")},
]


async def test_fork_sends_the_parents_request_as_its_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, provider = build(tmp_path, monkeypatch, PARENT_TURNS)
    events = await run(app, "PARENT: look at notes")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"

    forks = [r for r in provider.requests if is_fork_request(r)]
    assert len(forks) == 1
    child = forks[0]
    index = provider.requests.index(child)
    parent_last = provider.requests[index - 1]
    assert not is_fork_request(parent_last)
    # Byte for byte what the parent last sent: system prompt, tools (Agent included), model, sampling.
    assert child.system == parent_last.system == [{"type": "text", "text": "PARENT SYSTEM PROMPT"}]
    assert json.dumps(child.tools) == json.dumps(parent_last.tools)
    assert "Agent" in [t["name"] for t in child.tools]
    assert (child.model, child.max_tokens, child.temperature, child.thinking) == (
        parent_last.model, parent_last.max_tokens, parent_last.temperature, parent_last.thinking)
    prefix = len(parent_last.messages)
    assert json.dumps(child.messages[:prefix]) == json.dumps(parent_last.messages)
    # Then the parent's assistant message with the pending calls, each closed by a placeholder result,
    # and the directive last in the same user message.
    assert len(child.messages) == prefix + 2
    pending = child.messages[prefix]
    assert pending["role"] == "assistant" and [b.get("id") for b in pending["content"] if b["type"] == "tool_use"] \
        == ["toolu_fork", "toolu_glob"]
    closing = child.messages[-1]
    assert closing["role"] == "user"
    results = [b for b in closing["content"] if b["type"] == "tool_result"]
    assert [(r["tool_use_id"], r["content"][0]["text"]) for r in results] == [
        ("toolu_fork", AGENT_CALL_PLACEHOLDER), ("toolu_glob", OTHER_CALL_PLACEHOLDER)]
    assert closing["content"][:2] == results
    assert "FORK JOB: count lines" in directive_text(closing)

    # The parent receives the worker's answer as for general-purpose: text plus the agentId/usage trailer.
    got = tool_results(events)["toolu_fork"]
    assert "is_error" not in got
    assert got["content"][0] == {"type": "text", "text": "fork answer: 1 line"}
    assert got["content"][1]["text"].startswith("agentId: a") and "<usage>total_tokens:" in got["content"][1]["text"]
    data = use_results(events)["toolu_fork"]
    assert data["status"] == "completed" and data["agentType"] == "fork"
    started = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "task_started"]
    assert [e.data["tool_use_id"] for e in started] == ["toolu_fork"]
    notified = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "task_notification"]
    assert [e.data["status"] for e in notified] == ["completed"]

    telemetry = [json.loads(line) for line in (tmp_path / "home" / "telemetry.jsonl").read_text().splitlines()]
    selected = [r for r in telemetry if r["event"] == "catui_agent_tool_selected"]
    assert [(r["agent_type"], r["is_fork"], r["model_reason"]) for r in selected] == [("fork", True, "parent")]
    # The worker's transcript holds everything it saw, the inherited messages first.
    transcript = next((tmp_path / "home").rglob(f"agent-{data['agentId']}.jsonl"))
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [line["message"] for line in lines[:prefix + 1]] == [*parent_last.messages, pending]
    assert all(line["isSidechain"] and line["agentId"] == data["agentId"] for line in lines)


async def test_turn_context_starts_at_the_last_real_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [
        {"name": "first", "match": {"last_user_contains": "EARLIER QUESTION"}, "content": text("earlier answer")},
        *[{**t, "match": {**t["match"], "first_user_contains": "EARLIER"}} if t["name"] != "fork" else t
          for t in PARENT_TURNS],
    ]
    turns[1]["match"] = {"last_user_contains": "PARENT", "last_is_tool_result": False}
    app, provider = build(tmp_path, monkeypatch, turns)
    runtime = app.services.subagents.runtime
    runtime.fork = ForkPlanner(runtime.deps, runtime.planner.worktrees, background_available=False,
                               definition=fork_agent_definition("turn"))
    await run(app, "EARLIER QUESTION")
    events = await run(app, "PARENT: look at notes")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"
    child = next(r for r in provider.requests if is_fork_request(r))
    parent_last = provider.requests[provider.requests.index(child) - 1]
    # The parent's history: EARLIER QUESTION, earlier answer, PARENT…, Read call, Read result, fork call.
    start = [m.get("content") for m in parent_last.messages].index([{"type": "text", "text": "PARENT: look at notes"}])
    assert start == 2
    assert json.dumps(child.messages[:-2]) == json.dumps(parent_last.messages[start:])
    assert "EARLIER" not in json.dumps(child.messages)
    assert "FORK JOB" in directive_text(child.messages[-1])


async def test_no_parent_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, provider = build(tmp_path, monkeypatch, PARENT_TURNS)
    runtime = app.services.subagents.runtime
    runtime.fork = ForkPlanner(runtime.deps, runtime.planner.worktrees, background_available=False,
                               definition=fork_agent_definition(None))
    events = await run(app, "PARENT: look at notes")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"
    child = next(r for r in provider.requests if is_fork_request(r))
    assert len(child.messages) == 1 and blocks_of(child.messages[0])[0]["type"] == "text"
    assert "FORK JOB" in directive_text(child.messages[0])
    assert child.system == [{"type": "text", "text": "PARENT SYSTEM PROMPT"}]


async def test_a_worker_cannot_fork_but_may_start_a_typed_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, provider = build(tmp_path, monkeypatch, [
        {"name": "parent", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("toolu_fork", "FORK JOB")]},
        {"name": "fork-1", "match": {"last_user_contains": "FORK JOB"},
         "content": [agent_call("toolu_again", "NESTED FORK"), agent_call("toolu_plan", "PLAN JOB", "Plan")]},
        {"name": "plan", "match": {"first_user_contains": "PLAN JOB"}, "content": text("the plan")},
        {"name": "fork-2", "match": {"last_user_contains": "the plan"}, "content": text("fork done")},
        {"name": "parent-final", "match": {"last_user_contains": "fork done"}, "content": text("all done")},
    ])
    events = await run(app, "PARENT")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"
    fork_round = next(r for r in provider.requests if is_fork_request(r) and "the plan" in json.dumps(r.messages[-1]))
    results = {b["tool_use_id"]: b for b in fork_round.messages[-1]["content"] if b["type"] == "tool_result"}
    assert results["toolu_again"] == {"type": "tool_result", "tool_use_id": "toolu_again", "is_error": True,
                                      "content": FORK_RECURSION_ERROR}
    assert "is_error" not in results["toolu_plan"]
    assert sum(1 for r in provider.requests if is_fork_request(r)) == 2  # no second worker was started
    assert tool_results(events)["toolu_fork"]["content"][0] == {"type": "text", "text": "fork done"}


async def test_switch_off_runs_general_purpose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, provider = build(tmp_path, monkeypatch, [
        {"name": "parent", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("toolu_gp", "GP JOB")]},
        {"name": "gp", "match": {"first_user_contains": "GP JOB"}, "content": text("gp answer")},
        {"name": "parent-final", "match": {"last_user_contains": "gp answer"}, "content": text("all done")},
    ], env={})
    assert app.services.subagents.runtime.fork is None
    events = await run(app, "PARENT")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"
    assert not any(is_fork_request(r) for r in provider.requests)
    child = next(r for r in provider.requests if r.metadata.get("query_source") == "agent:general-purpose")
    assert child.system != provider.requests[0].system and "Agent" not in [t["name"] for t in child.tools]
    assert use_results(events)["toolu_gp"]["agentType"] == "general-purpose"


def test_fork_messages_units() -> None:
    prompt: Message = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    call: Message = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    result: Message = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    forking: Message = {"role": "assistant", "content": [{"type": "text", "text": "fork"},
                                                {"type": "tool_use", "id": "t2", "name": "Task", "input": {}}]}
    history = [prompt, call, result, forking]
    assert current_turn_start(history) == 0
    assert current_turn_start([*history, result, {"role": "user", "content": "next"}, forking]) == 5
    inherited, first = build_fork_messages(history, "JOB", True)
    assert inherited == history and inherited is not history
    assert [b["type"] for b in first["content"]] == ["tool_result", "text"]
    assert first["content"][0]["tool_use_id"] == "t2"
    inherited, first = build_fork_messages(history, "JOB", None)
    assert inherited == [] and [b["type"] for b in first["content"]] == ["text"]
    definition = fork_agent_definition()
    assert definition.agent_type == "fork" and definition.forks_parent_context is True
    assert definition.is_built_in and "fork" not in [a.agent_type for a in builtin_agents()]


def test_real_cli_forks_with_the_parents_prefix(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    script = {"turns": [
        {"match": {"first_user_contains": "PARENT-F", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_read", "name": "Read",
                      "input": {"file_path": str(repo / "notes.txt")}}]},
        {"match": {"first_user_contains": "PARENT-F", "last_user_contains": "hello"},
         "content": [{"type": "text", "text": "Forking."}, agent_call("toolu_fork", "FORK-JOB-F")]},
        {"match": {"last_user_contains": "FORK-JOB-F"}, "content": text("forked result"),
         "usage": {"input_tokens": 10, "output_tokens": 5}},
        {"match": {"last_user_contains": "forked result"}, "content": text("ALL DONE")},
    ]}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CATUI_HOME": str(tmp_path / "catui-home"),
        "PYTHONPATH": str(ROOT / "src"),
        "CATUI_MAX_RETRIES": "1",
        "CATUI_FORK_SUBAGENT": "1",
    }
    server = AnthropicTestServer(script)
    with server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "PARENT-F: check notes", "--output-format", "stream-json",
             "--verbose"],
            cwd=repo, env={**env, **server.env("test")}, capture_output=True, text=True, timeout=60,
        )
    assert done.returncode == 0, done.stderr
    bodies = server.bodies()
    forks = [i for i, b in enumerate(bodies) if "<fork-directive>" in json.dumps(b["messages"][-1])]
    assert len(forks) == 1 and len(bodies) == 4
    child, parent_last = bodies[forks[0]], bodies[forks[0] - 1]
    assert child["system"] == parent_last["system"]
    assert child["tools"] == parent_last["tools"] and "Agent" in [t["name"] for t in child["tools"]]
    assert child["model"] == parent_last["model"]

    def plain(value: Any) -> Any:  # the cache breakpoint sits on each request's newest block; compare without it
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    prefix = len(parent_last["messages"])
    assert plain(child["messages"][:prefix]) == plain(parent_last["messages"])
    assert child["messages"][:prefix - 1] == parent_last["messages"][:prefix - 1]
    pending, closing = child["messages"][prefix:]
    assert pending["role"] == "assistant" and pending["content"][-1]["id"] == "toolu_fork"
    assert [b["type"] for b in closing["content"]] == ["tool_result", "text"]
    assert closing["content"][0]["tool_use_id"] == "toolu_fork"
    assert "FORK-JOB-F" in closing["content"][-1]["text"]
    # The parent's follow-up answers its Agent call with the worker's result.
    final = bodies[-1]["messages"][-1]["content"]
    assert final[0]["tool_use_id"] == "toolu_fork" and final[0]["content"][0]["text"] == "forked result"

    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "ALL DONE"
    kinds = [line.get("subtype") for line in lines if line["type"] == "system"]
    assert "task_started" in kinds and "task_notification" in kinds
    carrying = next(line for line in lines if line["type"] == "user" and "tool_use_result" in line
                    and line.get("parent_tool_use_id") is None and line["tool_use_result"].get("agentType"))
    assert carrying["tool_use_result"]["agentType"] == "fork"


def test_description_says_what_an_omitted_type_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    on, _ = build(tmp_path / "on", monkeypatch, [])
    off, _ = build(tmp_path / "off", monkeypatch, [], env={})
    on_text, off_text = (next(t for t in app.session.tools if t.name == "Agent").description for app in (on, off))
    assert "Leave it out to fork yourself" in on_text and "fork" not in off_text
    assert "when it is left out, general-purpose runs" in off_text
    assert "- fork:" not in on_text  # the fork agent is not offered as a type


async def test_a_deny_rule_on_fork_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catui.permissions.context import PermissionRule

    app, provider = build(tmp_path, monkeypatch, [
        {"name": "parent", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("toolu_fork", "FORK JOB")]},
        {"name": "parent-final", "match": {"last_user_contains": "denied"}, "content": text("all done")},
    ])
    ctx = app.session.ctx
    ctx.permissions = ctx.permissions.with_rules(
        PermissionRule(tool_name="Agent", content="fork", behavior="deny", source="projectSettings"))
    events = await run(app, "PARENT")
    got = tool_results(events)["toolu_fork"]
    assert got["is_error"] is True and got["content"].startswith("Agent type 'fork' has been denied")
    assert not any(is_fork_request(r) for r in provider.requests)


async def test_background_fork_reports_through_its_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catui.app import build_app
    from catui.cli.run import conversation_events
    from catui.models.resolve import clear_provider_cache

    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"name": "fork", "match": {"last_user_contains": "BG FORK JOB"}, "content": text("bg fork result")},
        {"name": "noted", "match": {"last_user_contains": "<task-notification>"}, "content": text("Noted.")},
        {"name": "parent-1", "match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
                      "input": {"description": "bg", "prompt": "BG FORK JOB", "run_in_background": True}}]},
        {"name": "parent-2", "match": {"first_user_contains": "Start", "last_is_tool_result": True},
         "content": text("Launched.")},
    ]}))
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}", env=dict(FORK_ON)))
    try:
        events = [e async for e in conversation_events(app, "Start")]
    finally:
        clear_provider_cache()
    results = [e for e in events if isinstance(e, ResultEvent) and e.agent_id is None]
    assert [r.result for r in results] == ["Launched.", "Noted."]
    launched = tool_results(events)["toolu_bg"]
    assert "is_error" not in launched and "async" in json.dumps(use_results(events)["toolu_bg"])
    notification = next(b["text"] for m in app.session.messages if m["role"] == "user" for b in blocks_of(m)
                        if b.get("type") == "text" and b["text"].startswith("<task-notification>"))
    assert "bg fork result" in notification and "completed" in notification
    # The output file holds the worker's own lines: the directive first, not the parent's context again.
    output = Path(use_results(events)["toolu_bg"]["outputFile"])
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert "BG FORK JOB" in directive_text(lines[0]["message"]) and "Start" not in json.dumps(lines)


@pytest.mark.parametrize(("setting", "env", "on"), [
    (True, {}, True), (None, {}, False), (True, {"CATUI_FORK_SUBAGENT": "0"}, False),
    (None, {"CLAUDE_CODE_FORK_SUBAGENT": "1"}, True),
])
def test_the_switch_through_project_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: Any,
                                             env: dict[str, str], on: bool) -> None:
    from catui.app import build_app

    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CATUI_FORK_SUBAGENT", "CLAUDE_CODE_FORK_SUBAGENT"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    (project / ".catui").mkdir(parents=True)
    if setting is not None:
        (project / ".catui" / "settings.json").write_text(json.dumps({"forkSubagent": setting}))
    script = tmp_path / "script.yaml"
    script.write_text("turns: []\n")
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}", env=env))
    assert isinstance(app.services.subagents.runtime.fork, ForkPlanner) is on


async def test_fork_in_its_own_worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, provider = build(tmp_path, monkeypatch, [
        {"name": "parent", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_wt", "name": "Agent",
                      "input": {"description": "wt", "prompt": "WT JOB", "isolation": "worktree"}}]},
        {"name": "fork-1", "match": {"last_user_contains": "WT JOB"},
         "content": [{"type": "tool_use", "id": "toolu_sh", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"name": "fork-2", "match": {"last_is_tool_result": True},
         "content": text("made it")},
        {"name": "parent-final", "match": {"last_user_contains": "made it"}, "content": text("all done")},
    ])
    repo = tmp_path / "repo"
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    app.session.ctx.permissions = app.session.ctx.permissions.with_mode("bypassPermissions")
    events = await run(app, "PARENT")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "all done"
    child = next(r for r in provider.requests if is_fork_request(r))
    directive = directive_text(child.messages[-1])
    worktree = Path(use_results(events)["toolu_wt"]["worktreePath"])
    assert worktree.parent == repo / ".catui" / "worktrees" and f"git worktree at {worktree}" in directive
    assert (worktree / "made.txt").is_file() and not (repo / "made.txt").exists()
    trailer = tool_results(events)["toolu_wt"]["content"][1]["text"]
    assert f"worktreePath: {worktree}" in trailer
