"""Background agents in process: a real app (build_app) on the scripted provider, driven like print mode.

Children wait on a ``Gate`` tool the test opens, so every ordering below is
decided by the test, not by timing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import Field

from catui.app import AgentApp, RunOptions, build_app
from catui.cli.run import conversation_events
from catui.messages import blocks_of
from catui.models.resolve import clear_provider_cache
from catui.session.events import Event, ResultEvent, SystemEvent, ToolEndEvent
from catui.state.db import StateDB
from catui.subagents.send_message import SendMessageTool
from catui.subagents.send_message_input import SendMessageInput
from catui.tools.base import TeamMembership, Tool, ToolContext, ToolInput, ToolResult

GUARD_S = 20  # a broken scenario fails here instead of hanging (not a timing assertion)
WORKER = {"description": "Does one job.", "prompt": "You are the worker agent.", "tools": ["Gate", "Read"]}
NOTIFICATION_RE = re.compile(
    r"^<task-notification>\n<task-id>(?P<id>a[0-9a-f]{16})</task-id>\n<tool-use-id>(?P<tool>[^<]+)</tool-use-id>\n"
    r"<output-file>(?P<file>[^<]+)</output-file>\n<status>(?P<status>\w+)</status>\n"
    r"<summary>(?P<summary>[^\n]+)</summary>\n(?:<result>(?P<result>.*?)</result>\n)?"
    r"<usage><total_tokens>\d+</total_tokens><tool_uses>(?P<tools>\d+)</tool_uses>"
    r"<duration_ms>\d+</duration_ms></usage>\n(?:<worktree>.*</worktree>\n)?</task-notification>$",
    re.S,
)


class Gates:
    """Named events the Gate tool waits on; ``entered`` records who is waiting."""

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.entered: dict[str, asyncio.Event] = {}
        self.cancelled: list[str] = []

    def gate(self, key: str) -> asyncio.Event:
        return self.events.setdefault(key, asyncio.Event())

    def entry(self, key: str) -> asyncio.Event:
        return self.entered.setdefault(key, asyncio.Event())

    async def wait_entered(self, key: str) -> None:
        await asyncio.wait_for(self.entry(key).wait(), GUARD_S)


class GateInput(ToolInput):
    key: str = Field(description="which gate")


class GateTool(Tool):
    name: ClassVar[str] = "Gate"
    input_model: ClassVar[type[ToolInput]] = GateInput
    read_only: ClassVar[bool] = True

    def __init__(self, gates: Gates) -> None:
        self.gates = gates

    @property
    def description(self) -> str:
        return "Waits until the test opens the gate."

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.gates.entry(args.key).set()
        try:
            await self.gates.gate(args.key).wait()
        except asyncio.CancelledError:
            self.gates.cancelled.append(args.key)
            raise
        return ToolResult(f"gate {args.key} open")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CATUI_AUTO_BACKGROUND_MS", "CATUI_DISABLE_BACKGROUND_TASKS", "CATUI_AGENT_TEAMS"):
        monkeypatch.delenv(name, raising=False)
    yield
    clear_provider_cache()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    return folder


def make_app(tmp_path: Path, project: Path, turns: list[dict[str, Any]], gates: Gates, *,
             env: dict[str, str] | None = None, write_transcript: bool = True,
             worker: dict[str, Any] | None = None, permission_mode: str | None = None) -> AgentApp:
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    options = RunOptions(cwd=project, model=f"scripted:{script}", flag_agents={"worker": worker or WORKER},
                         extra_tools=[GateTool(gates)], env=env or {}, write_transcript=write_transcript,
                         permission_mode=permission_mode)
    return build_app(options)


def agent_call(key: str, *, background: bool = True, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"description": f"Job {key}", "prompt": f"Do {key}", "subagent_type": "worker", **extra}
    if background:
        args["run_in_background"] = True
    return {"type": "tool_use", "name": "Agent", "input": args}


def worker_turns(*keys: str) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for key in keys:
        turns.append({"match": {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}",
                                "last_is_tool_result": False},
                      "content": [{"type": "tool_use", "name": "Gate", "input": {"key": key}}]})
        turns.append({"match": {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}",
                                "last_is_tool_result": True},
                      "content": [{"type": "text", "text": f"Finished {key}."}]})
    return turns


NOTED = {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True}


def parent_turns(calls: list[dict[str, Any]], after: str = "Launched.") -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True},
         "content": [{"type": "text", "text": after}]},
    ]


class Driver:
    """Runs the print-mode conversation loop in a task and keeps its events."""

    def __init__(self, app: AgentApp, prompt: str = "Start") -> None:
        self.app = app
        self.events: list[Event] = []
        self.task = asyncio.create_task(self._run(prompt))

    async def _run(self, prompt: str) -> None:
        async for event in conversation_events(self.app, prompt):
            self.events.append(event)

    async def done(self) -> list[Event]:
        await asyncio.wait_for(self.task, GUARD_S)
        return self.events

    def results(self) -> list[ResultEvent]:
        return [e for e in self.events if isinstance(e, ResultEvent) and e.agent_id is None]

    def system(self, subtype: str) -> list[SystemEvent]:
        return [e for e in self.events if isinstance(e, SystemEvent) and e.subtype == subtype]


def launched(events: list[Event]) -> list[ToolEndEvent]:
    return [e for e in events if isinstance(e, ToolEndEvent) and e.name == "Agent" and e.agent_id is None]


def parent_notifications(app: AgentApp) -> list[re.Match[str]]:
    out = []
    for message in app.session.messages:
        if message.get("role") != "user":
            continue
        for block in blocks_of(message):
            text = block.get("text") if block.get("type") == "text" else None
            if text and text.startswith("<task-notification>"):
                match = NOTIFICATION_RE.match(text)
                assert match is not None, text
                out.append(match)
    return out


async def until(predicate: Any) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), GUARD_S)


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- launching, output file, notification --------------------------------------------------------


async def test_launch_text_output_file_and_notification(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    app = make_app(tmp_path, project, [NOTED, *parent_turns([agent_call("one")]), *worker_turns("one")], gates)
    driver = Driver(app)
    await gates.wait_entered("one")

    [end] = launched(driver.events)
    lines = str(end.content).split("\n")
    task_id = end.data["agentId"]
    output = project / ".catui" / "tasks" / f"{task_id}.output"
    assert len(lines) == 6
    assert lines[0] == "Async agent launched successfully."
    assert lines[1] == (f"agentId: {task_id} (internal ID - do not mention to user. Use SendMessage with to: "
                        f"'{task_id}' to continue this agent.)")
    assert lines[4] == f"output_file: {output}"
    trace = end.data.pop("modelResolution")  # catui's model-resolution trace (issue 18)
    assert trace["reason"] == "parent" and trace["model"] == app.session.config.model
    assert end.data == {"status": "async_launched", "agentId": task_id, "description": "Job one",
                        "prompt": "Do one", "outputFile": str(output), "canReadOutputFile": True}

    # While the child waits at its gate, its output file already holds its first messages.
    before = jsonl(output)
    assert [r["type"] for r in before] == ["user", "assistant"]
    first = before[0]
    assert set(first) == {"parentUuid", "isSidechain", "agentId", "type", "message", "uuid", "timestamp", "cwd",
                          "sessionId", "version", "gitBranch"}
    assert first["isSidechain"] is True and first["agentId"] == task_id and first["parentUuid"] is None
    assert before[1]["parentUuid"] == first["uuid"]
    meta = json.loads(output.with_name(f"{task_id}.meta.json").read_text())
    assert meta == {"agentType": "worker", "description": "Job one"}
    row = StateDB(project).get_task(task_id)
    assert row is not None and row["status"] == "running" and row["type"] == "local_agent"

    gates.gate("one").set()
    await driver.done()
    after = jsonl(output)
    assert after[:2] == before and [r["type"] for r in after] == ["user", "assistant", "user", "assistant"]

    [note] = parent_notifications(app)
    assert note["id"] == task_id and note["tool"] == end.tool_use_id and note["file"] == str(output)
    assert (note["status"], note["summary"], note["result"]) == ("completed", 'Agent "Job one" completed',
                                                                 "Finished one.")
    assert note["tools"] == "1"
    assert [r.result for r in driver.results()] == ["Launched.", "Noted."]
    [started] = driver.system("task_started")
    assert started.data["task_type"] == "local_agent" and started.data["task_id"] == task_id
    [finished] = driver.system("task_notification")
    assert finished.data["status"] == "completed" and finished.data["output_file"] == str(output)
    assert finished.data["summary"] == 'Agent "Job one" completed'
    # The announcement comes in the notification turn, before its answer.
    assert driver.events.index(finished) > driver.events.index(driver.results()[0])
    task = app.tasks.get(task_id)
    assert task is not None and task.status == "completed" and task.result == "Finished one."
    row = StateDB(project).get_task(task_id)
    assert row is not None and row["status"] == "completed" and row["result"] == "Finished one."
    assert row["tool_uses"] == 1
    await app.aclose()


async def test_several_agents_notify_in_finishing_order_exactly_once(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    keys = ["one", "two", "three"]
    turns = [NOTED, *parent_turns([agent_call(k) for k in keys]), *worker_turns(*keys)]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    for key in keys:
        await gates.wait_entered(key)
    ids = {e.data["description"]: e.data["agentId"] for e in launched(driver.events)}
    order = ["two", "three", "one"]
    for key in order:
        gates.gate(key).set()
        await until(lambda k=key: app.tasks.get(ids[f"Job {k}"]).status == "completed")
    await driver.done()
    notes = parent_notifications(app)
    assert [n["id"] for n in notes] == [ids[f"Job {k}"] for k in order]
    assert [n["result"] for n in notes] == [f"Finished {k}." for k in order]
    assert app.tasks.notifications.delivered == [ids[f"Job {k}"] for k in order]
    assert [r.result for r in driver.results()] == ["Launched.", "Noted.", "Noted.", "Noted."]
    assert len(driver.system("task_notification")) == 3
    await app.aclose()


async def test_notification_joins_the_running_parent_turn(tmp_path: Path, project: Path) -> None:
    """A child that ends while the parent is mid-turn is reported with the parent's next tool round."""
    gates = Gates()
    turns = [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False}, "content": [agent_call("one")]},
        {"match": {"first_user_contains": "Start", "last_user_contains": "Async agent launched"},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "parent"}}]},
        {"match": {"first_user_contains": "Start", "last_user_contains": "<task-notification>"},
         "content": [{"type": "text", "text": "Saw it mid-turn."}]},
        *worker_turns("one"),
    ]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    await gates.wait_entered("parent")
    await gates.wait_entered("one")
    gates.gate("one").set()
    [end] = launched(driver.events)
    await until(lambda: not app.tasks.get(end.data["agentId"]).is_running)
    gates.gate("parent").set()
    await driver.done()
    assert [r.result for r in driver.results()] == ["Saw it mid-turn."]
    [note] = parent_notifications(app)
    holder = next(m for m in app.session.messages if m["role"] == "user" and "<task-notification>" in json.dumps(m))
    assert any(b.get("type") == "tool_result" for b in blocks_of(holder))  # the tool_result round carried it
    assert note["status"] == "completed"
    # The parent was mid-turn all along, so the child's progress reached its stream.
    progress = driver.system("task_progress")
    assert [p.data["last_tool_name"] for p in progress] == ["Gate", "Gate"]
    assert set(progress[0].data["usage"]) == {"total_tokens", "tool_uses", "duration_ms"}
    assert progress[0].data["description"] == "Job one"
    await app.aclose()


async def test_progress_reaches_the_stream_while_the_parent_waits(tmp_path: Path, project: Path) -> None:
    """Print mode's parent is idle while its background agents work: their progress still goes out."""
    gates = Gates()
    app = make_app(tmp_path, project, [NOTED, *parent_turns([agent_call("idle")]), *worker_turns("idle")], gates)
    driver = Driver(app)
    await gates.wait_entered("idle")
    await until(lambda: len(driver.results()) == 1)  # the parent's turn is over; print mode waits
    first_result = driver.events.index(driver.results()[0])
    gates.gate("idle").set()
    await driver.done()
    [end] = launched(driver.events)
    after = [e for e in driver.events[first_result:] if isinstance(e, SystemEvent) and e.subtype == "task_progress"]
    assert after and after[-1].data["task_id"] == end.data["agentId"]
    assert after[-1].data["usage"]["tool_uses"] == 1 and after[-1].data["last_tool_name"] == "Gate"
    # The child's own final message went out too, tagged with the Agent call that started it.
    child_answers = [e for e in driver.events[first_result:] if getattr(e, "parent_tool_use_id", None) == end.tool_use_id
                     and "Finished idle." in json.dumps(getattr(e, "message", None))]
    assert child_answers
    finished = driver.system("task_notification")
    assert len(finished) == 1 and driver.events.index(finished[0]) > driver.events.index(after[-1])
    await app.aclose()


# -- moving foreground agents -------------------------------------------------------------------


@pytest.mark.parametrize("write_transcript", [True, False])
async def test_auto_background_moves_a_slow_foreground_agent(tmp_path: Path, project: Path,
                                                             write_transcript: bool) -> None:
    gates = Gates()
    turns = [NOTED, *parent_turns([agent_call("slow", background=False)]), *worker_turns("slow")]
    app = make_app(tmp_path, project, turns, gates, env={"CATUI_AUTO_BACKGROUND_MS": "50"},
                   write_transcript=write_transcript)
    driver = Driver(app)
    await gates.wait_entered("slow")
    await until(lambda: bool(launched(driver.events)))
    [end] = launched(driver.events)
    assert end.data["status"] == "async_launched"
    task_id = end.data["agentId"]
    output = Path(end.data["outputFile"])
    assert [r["type"] for r in jsonl(output)] == ["user", "assistant"]  # the lines from before the move
    gates.gate("slow").set()
    await driver.done()
    records = jsonl(output)
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant"]
    assert records[0]["message"]["content"][-1]["text"] == "Do slow"
    [note] = parent_notifications(app)
    assert note["id"] == task_id and note["result"] == "Finished slow."
    assert [r.result for r in driver.results()] == ["Launched.", "Noted."]
    assert len(driver.system("task_started")) == 1
    await app.aclose()


async def test_background_all_foreground_is_ctrl_b(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    turns = [NOTED, *parent_turns([agent_call("fg", background=False)], after="Carrying on."), *worker_turns("fg")]
    app = make_app(tmp_path, project, turns, gates)
    runtime = app.services.subagents.runtime
    assert await runtime.background_all_foreground() == []
    driver = Driver(app)
    await gates.wait_entered("fg")
    moved = await asyncio.wait_for(runtime.background_all_foreground(), GUARD_S)
    await until(lambda: len(driver.results()) == 1)
    assert driver.results()[0].result == "Carrying on."
    [end] = launched(driver.events)
    assert moved == [end.data["agentId"]] and app.tasks.get(moved[0]).is_running
    gates.gate("fg").set()
    await driver.done()
    assert [n["result"] for n in parent_notifications(app)] == ["Finished fg."]
    assert gates.cancelled == []
    await app.aclose()


# -- stopping, failing, aborting ----------------------------------------------------------------


async def test_task_stop_mid_run_keeps_the_partial_transcript(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    app = make_app(tmp_path, project, [NOTED, *parent_turns([agent_call("long")]), *worker_turns("long")], gates)
    driver = Driver(app)
    await gates.wait_entered("long")
    [end] = launched(driver.events)
    task_id = end.data["agentId"]
    from catui.tools.task_stop import TaskStopTool
    from catui.tools.task_stop_input import TaskStopInput

    result = await TaskStopTool().call(TaskStopInput(task_id=task_id), app.session.ctx)
    assert not result.is_error and "status: stopped" in str(result.content)
    assert gates.cancelled == ["long"]
    await driver.done()
    [note] = parent_notifications(app)
    assert (note["status"], note["summary"]) == ("stopped", 'Agent "Job long" was stopped')
    assert [r["type"] for r in jsonl(Path(end.data["outputFile"]))][:2] == ["user", "assistant"]
    row = StateDB(project).get_task(task_id)
    assert row is not None and row["status"] == "stopped"
    await app.aclose()


async def test_a_failing_child_is_reported_failed_with_its_error(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    turns = [NOTED, *parent_turns([agent_call("bad")]),
             {"match": {"system_contains": "You are the worker agent"},
              "error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}}]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    await driver.done()
    [note] = parent_notifications(app)
    assert note["status"] == "failed" and note["result"] is None
    assert note["summary"].startswith('Agent "Job bad" failed: ') and "prompt is too long" in note["summary"]
    [finished] = driver.system("task_notification")
    assert finished.data["status"] == "failed"
    task = app.tasks.get(note["id"])
    assert task is not None and task.status == "failed" and "prompt is too long" in (task.error or "")
    await app.aclose()


async def test_parent_abort_stops_background_agents_and_records_them(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    app = make_app(tmp_path, project, [NOTED, *parent_turns([agent_call("a"), agent_call("b")]),
                                       *worker_turns("a", "b")], gates)
    driver = Driver(app)
    await gates.wait_entered("a")
    await gates.wait_entered("b")
    await until(lambda: len(driver.results()) == 1)  # the parent's turn is over; print mode waits
    app.session.abort()  # what SIGTERM does in print mode
    await driver.done()
    await app.aclose()
    assert sorted(gates.cancelled) == ["a", "b"]
    rows = StateDB(project).list_tasks()
    assert [r["status"] for r in rows] == ["stopped", "stopped"]
    assert all(t.status == "stopped" for t in app.tasks.list())


# -- names and SendMessage ----------------------------------------------------------------------


async def test_send_message_queue_resume_mailbox_and_unknown(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    turns: list[dict[str, Any]] = [
        NOTED,
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [agent_call("scout", name="scout")]},
        {"match": {"first_user_contains": "Start", "last_user_contains": "Async agent launched"},
         "content": [{"type": "tool_use", "name": "SendMessage",
                      "input": {"to": "scout", "summary": "more work", "message": "Also look at the tests."}}]},
        {"match": {"first_user_contains": "Start", "last_user_contains": "Message queued"},
         "content": [{"type": "text", "text": "Told it."}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "Follow-up question"},
         "content": [{"type": "text", "text": "Answered the follow-up."}]},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "scout"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "coordinator sent you"},
         "content": [{"type": "text", "text": "Handled the tests too."}]},
    ]
    app = make_app(tmp_path, project, turns, gates, env={"CATUI_AGENT_TEAMS": "1"})
    assert "SendMessage" in [t.name for t in app.session.tools]
    schema = next(t for t in app.session.tools if t.name == "SendMessage").input_schema()
    assert schema["required"] == ["to", "message"]
    driver = Driver(app)
    await gates.wait_entered("scout")
    await until(lambda: len(driver.results()) == 1)
    reply = next(e for e in driver.events if isinstance(e, ToolEndEvent) and e.name == "SendMessage")
    assert reply.content == '{"success":true,"message":"Message queued for delivery to scout at its next tool round."}'
    manager = app.services.subagents.messaging
    agent_id = manager.names.live("scout")
    assert agent_id is not None and StateDB(project).names(app.session.session_id) == {"scout": agent_id}
    gates.gate("scout").set()
    await driver.done()
    [note] = parent_notifications(app)
    assert note["result"] == "Handled the tests too."
    child_messages = app.services.subagents.live.finished[agent_id].messages
    reminder = json.dumps(child_messages[2])
    assert "coordinator sent you a message" in reminder and "Also look at the tests." in reminder
    assert manager.names.live("scout") is None and StateDB(project).names(app.session.session_id) == {}

    tool = SendMessageTool(app.services.subagents.messaging)
    ctx = app.session.ctx
    # By name after it finished: the mailbox, nothing resumes.
    boxed = await tool.call(SendMessageInput(to="scout", message="For the record."), ctx)
    assert not boxed.is_error and boxed.data["success"] is True
    mailbox = project / ".catui" / "mailboxes" / "scout.jsonl"
    [letter] = jsonl(mailbox)
    assert letter["message"] == "For the record." and letter["agentId"] == agent_id
    assert not app.tasks.get(agent_id).is_running
    # Unknown recipients get the list of those that exist.
    unknown = await tool.call(SendMessageInput(to="nobody", message="hi"), ctx)
    assert unknown.is_error and "scout" in str(unknown.content) and agent_id in str(unknown.content)
    # By id after it finished: it resumes in the background, and a notification follows.
    resumed = await tool.call(SendMessageInput(to=agent_id, message="Follow-up question: anything else?"), ctx)
    assert not resumed.is_error and app.tasks.get(agent_id).is_running
    content = await asyncio.wait_for(app.tasks.next_notification(), GUARD_S)
    assert content is not None
    second = NOTIFICATION_RE.match(content[0]["text"])
    assert second is not None and second["id"] == agent_id and second["result"] == "Answered the follow-up."
    output = jsonl(project / ".catui" / "tasks" / f"{agent_id}.output")
    assert [r["type"] for r in output][-2:] == ["user", "assistant"]
    assert await app.tasks.next_notification() is None
    await app.aclose()


async def test_team_rules_and_disabled_background(tmp_path: Path, project: Path) -> None:
    from catui.subagents.run import SpawnRequest
    from catui.subagents.team_rules import (
        IN_PROCESS_TEAMMATE_NO_BACKGROUND,
        TEAMMATE_CANNOT_SPAWN_TEAMMATE,
        team_rules,
    )

    ctx = ToolContext(cwd=project, project_root=project)
    named = SpawnRequest(description="d", prompt="p", name="helper", team_name="crew")
    assert team_rules(named, ctx) is None  # the lead: the teams path decides (catui.subagents.teams)
    teammate = ToolContext(cwd=project, project_root=project, team=TeamMembership("crew"))
    refusal = team_rules(SpawnRequest(description="d", prompt="p", name="x"), teammate)
    assert refusal is not None and refusal.content == TEAMMATE_CANNOT_SPAWN_TEAMMATE
    refusal = team_rules(SpawnRequest(description="d", prompt="p", run_in_background=True), teammate)
    assert refusal is not None and refusal.content == IN_PROCESS_TEAMMATE_NO_BACKGROUND
    assert team_rules(SpawnRequest(description="d", prompt="p", run_in_background=True), ctx) is None

    gates = Gates()
    gates.gate("fg").set()
    turns = [*parent_turns([agent_call("fg")], after="Done in the foreground."), *worker_turns("fg")]
    app = make_app(tmp_path, project, turns, gates, env={"CATUI_DISABLE_BACKGROUND_TASKS": "1"})
    agent = next(t for t in app.session.tools if t.name == "Agent")
    assert "run_in_background" not in agent.input_schema()["properties"]
    assert "SendMessage" not in [t.name for t in app.session.tools]
    driver = Driver(app)
    await driver.done()
    [end] = launched(driver.events)
    assert "Finished fg." in json.dumps(end.content) and not app.tasks.list()
    assert [r.result for r in driver.results()] == ["Done in the foreground."]
    await app.aclose()


# -- many at once -------------------------------------------------------------------------------


async def test_two_hundred_background_agents_each_notify_once(tmp_path: Path, project: Path) -> None:
    count = 200
    calls = [agent_call(f"n{i:03d}") for i in range(count)]
    turns = [NOTED, *parent_turns(calls),
             {"match": {"system_contains": "You are the worker agent"}, "delay_ms": 5, "repeat": True,
              "content": [{"type": "text", "text": "Child done."}]}]
    app = make_app(tmp_path, project, turns, Gates(), write_transcript=False)
    driver = Driver(app)
    await asyncio.wait_for(driver.task, 120)
    ids = [e.data["agentId"] for e in launched(driver.events)]
    assert len(set(ids)) == count
    notes = parent_notifications(app)
    assert sorted(n["id"] for n in notes) == sorted(ids)  # every one, and none twice
    assert sorted(app.tasks.notifications.delivered) == sorted(ids)
    assert all(n["status"] == "completed" and n["result"] == "Child done." for n in notes)
    for agent_id in ids:
        records = jsonl(project / ".catui" / "tasks" / f"{agent_id}.output")
        assert [r["type"] for r in records] == ["user", "assistant"] and {r["agentId"] for r in records} == {agent_id}
    rows = StateDB(project).list_tasks()
    assert len(rows) == count and {r["status"] for r in rows} == {"completed"}
    await app.aclose()


async def test_task_output_reports_status_and_result_so_far(tmp_path: Path, project: Path) -> None:
    from catui.tools.task_output import TaskOutputTool
    from catui.tools.task_output_input import TaskOutputInput

    gates = Gates()
    turns = [NOTED, *parent_turns([agent_call("peek")]),
             {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
              "content": [{"type": "text", "text": "Looking around first."},
                          {"type": "tool_use", "name": "Gate", "input": {"key": "peek"}}]},
             {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": True},
              "content": [{"type": "text", "text": "All seen."}]}]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    await gates.wait_entered("peek")
    [end] = launched(driver.events)
    task_id = end.data["agentId"]
    await until(lambda: app.tasks.get(task_id).result is not None)
    tool = TaskOutputTool()
    now = await tool.call(TaskOutputInput(task_id=task_id, block=False), app.session.ctx)
    assert "<retrieval_status>not_ready</retrieval_status>" in str(now.content)
    assert "<status>running</status>" in str(now.content) and "Looking around first." in str(now.content)
    assert now.data["tool_uses"] == 1 and now.data["last_tool"] == "Gate"
    gates.gate("peek").set()
    final = await tool.call(TaskOutputInput(task_id=task_id, block=True, timeout=GUARD_S * 1000), app.session.ctx)
    assert "<retrieval_status>success</retrieval_status>" in str(final.content)
    assert "<status>completed</status>" in str(final.content) and "<result>\nAll seen.\n</result>" in str(final.content)
    await driver.done()
    await app.aclose()


async def test_send_message_continues_a_finished_foreground_agent(tmp_path: Path, project: Path) -> None:
    """The result trailer says "use SendMessage with to: '<id>' to continue this agent": that works."""
    gates = Gates()
    gates.gate("fg").set()
    turns: list[dict[str, Any]] = [
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "One more thing"},
         "content": [{"type": "text", "text": "Here is the one more thing."}]},
        NOTED, *parent_turns([agent_call("fg", background=False)], after="Done."), *worker_turns("fg"),
    ]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    await driver.done()
    [end] = launched(driver.events)
    agent_id = end.data["agentId"]
    assert f"use SendMessage with to: '{agent_id}'" in json.dumps(end.content)
    resumed = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=agent_id, message="One more thing, please."),
                                           app.session.ctx)
    assert not resumed.is_error, resumed.content
    content = await asyncio.wait_for(app.tasks.next_notification(), GUARD_S)
    assert content is not None
    note = NOTIFICATION_RE.match(content[0]["text"])
    assert note is not None and note["id"] == agent_id and note["result"] == "Here is the one more thing."
    records = jsonl(project / ".catui" / "tasks" / f"{agent_id}.output")
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    await app.aclose()


async def test_background_agent_in_a_worktree_reports_the_kept_worktree(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.git_repos import isolate_git, make_repo

    isolate_git(monkeypatch, tmp_path / "githome")
    repo = make_repo(tmp_path / "wt-repo")
    gates = Gates()
    worker = {"description": "Edits.", "prompt": "You are the worker agent.", "tools": ["Gate", "Write"]}
    turns: list[dict[str, Any]] = [
        NOTED, *parent_turns([agent_call("wt", isolation="worktree")]),
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "wt"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "gate wt open"},
         "content": [{"type": "text", "text": "Left a change."}]},
    ]
    app = make_app(tmp_path, repo, turns, gates, worker=worker, permission_mode="acceptEdits")
    driver = Driver(app)
    await gates.wait_entered("wt")
    [end] = launched(driver.events)
    agent_id = end.data["agentId"]
    meta = json.loads((repo / ".catui" / "tasks" / f"{agent_id}.meta.json").read_text())
    worktree = Path(meta["worktreePath"])
    assert meta["agentType"] == "worker" and worktree.is_dir() and worktree.name == f"agent-{agent_id[:8]}"
    (worktree / "change.txt").write_text("changed\n", encoding="utf-8")  # the child's edit, made for it
    gates.gate("wt").set()
    await driver.done()
    [note] = parent_notifications(app)
    assert note["status"] == "completed"
    text = next(json.dumps(m) for m in app.session.messages if "<task-notification>" in json.dumps(m))
    assert f"<worktree><worktreePath>{worktree}</worktreePath><worktreeBranch>worktree-agent-{agent_id[:8]}" in text
    await app.aclose()


@pytest.mark.parametrize("background", [True, False])
async def test_send_message_resumes_a_finished_agent_after_a_restart(tmp_path: Path, project: Path,
                                                                   background: bool) -> None:
    """The conversation is gone with the process that ran the agent: it is read back from disk."""
    gates = Gates()
    gates.gate("keep").set()
    resumed_turn: dict[str, Any] = {"match": {"system_contains": "You are the worker agent",
                                              "first_user_contains": "Do keep",
                              "last_user_contains": "After the restart"},
                    "content": [{"type": "text", "text": "Picked up where I left off."}]}
    turns = [resumed_turn, NOTED, *parent_turns([agent_call("keep", background=background)]), *worker_turns("keep")]
    first = make_app(tmp_path, project, turns, gates)
    driver = Driver(first)
    await driver.done()
    [end] = launched(driver.events)
    agent_id = end.data["agentId"]
    await first.aclose()
    output = project / ".catui" / "tasks" / f"{agent_id}.output"
    assert output.exists() is background  # a foreground agent has only its session transcript

    second = make_app(tmp_path, project, [resumed_turn, NOTED], Gates())
    assert second.services.subagents.live.finished == {}
    from catui.tools.base import CURRENT_TOOL_USE_ID

    token = CURRENT_TOOL_USE_ID.set("toolu_send")
    try:
        reply = await SendMessageTool(second.services.subagents.messaging).call(SendMessageInput(to=agent_id, message="After the restart: go on."),
                                             second.session.ctx)
    finally:
        CURRENT_TOOL_USE_ID.reset(token)
    assert not reply.is_error, reply.content
    assert reply.data["success"] is True and second.tasks.get(agent_id).is_running
    content = await asyncio.wait_for(second.tasks.next_notification(), GUARD_S)
    assert content is not None
    note = NOTIFICATION_RE.match(content[0]["text"])
    assert note is not None and note["id"] == agent_id and note["status"] == "completed"
    assert note["result"] == "Picked up where I left off."
    # The row in state.db remembers the Agent call; a foreground agent has none: the SendMessage call.
    assert note["tool"] == (end.tool_use_id if background else "toolu_send")
    records = jsonl(output)
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert all(later["parentUuid"] == earlier["uuid"] for earlier, later in itertools.pairwise(records))
    assert {r["agentId"] for r in records} == {agent_id}
    row = StateDB(project).get_task(agent_id)
    assert row is not None and row["status"] == "completed" and row["result"] == "Picked up where I left off."
    await second.aclose()


async def test_resuming_from_disk_refuses_clearly(tmp_path: Path, project: Path) -> None:
    from catui.subagents.resume_state import resumable_history

    app = make_app(tmp_path, project, [NOTED], Gates())
    tool = SendMessageTool(app.services.subagents.messaging)
    ghost = "a0123456789abcdef"
    tasks = project / ".catui" / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / f"{ghost}.output").write_text("", encoding="utf-8")
    empty = await tool.call(SendMessageInput(to=ghost, message="hi"), app.session.ctx)
    assert empty.is_error and "holds no messages" in str(empty.content)
    line = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Do ghost"}}
    (tasks / f"{ghost}.output").write_text(json.dumps(line) + "\n", encoding="utf-8")
    untyped = await tool.call(SendMessageInput(to=ghost, message="hi"), app.session.ctx)
    assert untyped.is_error and "agent type is not recorded" in str(untyped.content)
    (tasks / f"{ghost}.meta.json").write_text(json.dumps({"agentType": "gone", "description": "d"}))
    gone = await tool.call(SendMessageInput(to=ghost, message="hi"), app.session.ctx)
    assert gone.is_error and "Agent type 'gone' not found" in str(gone.content)
    # Still running in another catui process: it is not started a second time here.
    other = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        StateDB(project).upsert_task(ghost, type="local_agent", status="running", description="d", pid=other.pid)
        busy = await tool.call(SendMessageInput(to=ghost, message="hi"), app.session.ctx)
        assert busy.is_error and f"another catui process (pid {other.pid})" in str(busy.content)
    finally:
        other.kill()
        await other.wait()

    # A stopped agent's last message may call a tool that never ran: that call is left out.
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Do it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Gate", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Next:"},
                                          {"type": "tool_use", "id": "t2", "name": "Gate", "input": {}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "Gate", "input": {}}]},
    ]
    cleaned = resumable_history(history)
    assert cleaned[:3] == history[:3]
    assert cleaned[3:] == [{"role": "assistant", "content": [{"type": "text", "text": "Next:"}]}]
    await app.aclose()


async def test_definition_background_and_a_parent_without_read_tools(tmp_path: Path, project: Path) -> None:
    """`background: true` in the definition starts it in the background without run_in_background;
    a parent with neither Read nor Bash is told it cannot read the output file."""
    gates = Gates()
    gates.gate("own").set()
    script = tmp_path / "own.yaml"
    turns = [NOTED, *parent_turns([agent_call("own", background=False)]), *worker_turns("own")]
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}",
                               flag_agents={"worker": {**WORKER, "background": True}}, extra_tools=[GateTool(gates)]))
    app.session.set_tools([t for t in app.session.tools if t.name not in ("Read", "Bash")])
    driver = Driver(app)
    await driver.done()
    [end] = launched(driver.events)
    assert end.data["status"] == "async_launched" and end.data["canReadOutputFile"] is False
    lines = str(end.content).split("\n")
    assert lines[0] == "Async agent launched successfully." and lines[-1].startswith("output_file: ")
    assert not any("Read" in line for line in lines)
    assert [n["result"] for n in parent_notifications(app)] == ["Finished own."]
    await app.aclose()


@pytest.mark.parametrize(("settings", "env", "offered"), [
    ({}, {}, True),
    ({"sendMessage": False}, {}, False),
    ({"sendMessage": False}, {"CATUI_AGENT_TEAMS": "1"}, True),
    ({}, {"CATUI_DISABLE_BACKGROUND_TASKS": "1"}, False),
])
def test_send_message_is_offered_from_the_start_as_configured(tmp_path: Path, project: Path,
                                                              settings: dict[str, Any], env: dict[str, str],
                                                              offered: bool) -> None:
    script = tmp_path / "none.yaml"
    script.write_text(yaml.safe_dump({"turns": [NOTED]}), encoding="utf-8")
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}", settings_arg=json.dumps(settings), env=env))
    names = [t.name for t in app.session.tools]
    assert ("SendMessage" in names) is offered
    assert names == sorted(names)
    agent = next(t for t in app.session.tools if t.name == "Agent").input_schema()["properties"]
    assert ("name" in agent) is ("CATUI_AGENT_TEAMS" in env)


async def test_output_file_names_the_branch_without_a_session_transcript(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.git_repos import isolate_git, make_repo

    isolate_git(monkeypatch, tmp_path / "githome")
    repo = make_repo(tmp_path / "branch-repo")
    gates = Gates()
    gates.gate("br").set()
    app = make_app(tmp_path, repo, [NOTED, *parent_turns([agent_call("br")]), *worker_turns("br")], gates,
                   write_transcript=False)
    driver = Driver(app)
    await driver.done()
    [end] = launched(driver.events)
    records = jsonl(Path(end.data["outputFile"]))
    assert len(records) == 4 and {r["gitBranch"] for r in records} == {"main"}
    await app.aclose()


class HeldFinalRequest:
    """Stands in for a child's provider: its request after a tool round waits until the test lets it go."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.waiting = asyncio.Event()
        self.release = asyncio.Event()

    async def stream(self, request: Any) -> Any:
        last = request.messages[-1]
        if any(b.get("type") == "tool_result" for b in blocks_of(last)) and not self.release.is_set():
            self.waiting.set()
            await self.release.wait()
        async for event in self.inner.stream(request):
            yield event

    async def aclose(self) -> None:
        return None


async def test_a_message_queued_during_the_last_request_is_not_lost(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    turns: list[dict[str, Any]] = [
        NOTED, *parent_turns([agent_call("late")]),
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "Late news"},
         "content": [{"type": "text", "text": "Took the late news into account."}]},
        *worker_turns("late"),
    ]
    app = make_app(tmp_path, project, turns, gates)
    driver = Driver(app)
    await gates.wait_entered("late")
    [end] = launched(driver.events)
    agent_id = end.data["agentId"]
    manager = app.services.subagents.background
    child = manager.running_run(agent_id).session
    held = HeldFinalRequest(child.config.provider)
    child.config.provider = held
    gates.gate("late").set()
    await asyncio.wait_for(held.waiting.wait(), GUARD_S)  # its last tool round is over
    reply = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=agent_id, message="Late news: check the docs too."),
                                         app.session.ctx)
    assert "Message queued" in str(reply.content)
    held.release.set()
    await driver.done()
    notes = parent_notifications(app)
    assert [(n["id"], n["result"]) for n in notes] == [(agent_id, "Finished late."),
                                                      (agent_id, "Took the late news into account.")]
    await app.aclose()


async def test_an_agent_that_died_before_its_first_line_starts_over_on_its_task(tmp_path: Path, project: Path) -> None:
    started = {"match": {"first_user_contains": "Count the ghosts", "last_is_tool_result": False},
               "content": [{"type": "text", "text": "Three ghosts, and hello back."}]}
    app = make_app(tmp_path, project, [started, NOTED], Gates())
    ghost = "a00112233445566ff"
    tasks = project / ".catui" / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / f"{ghost}.output").write_text("", encoding="utf-8")  # created, then the process died
    (tasks / f"{ghost}.meta.json").write_text(json.dumps({"agentType": "worker", "description": "count"}))
    # Beside the session transcript catui also keeps the task (the transcript itself was never written).
    sessions = app.services.subagents.runtime.transcripts.sessions_dir  # type: ignore[union-attr]
    beside = Path(sessions) / "earlier-session" / "subagents"
    beside.mkdir(parents=True)
    (beside / f"agent-{ghost}.meta.json").write_text(json.dumps(
        {"agentType": "worker", "description": "count", "prompt": "Count the ghosts"}))
    from catui.tools.base import CURRENT_TOOL_USE_ID

    token = CURRENT_TOOL_USE_ID.set("toolu_send")
    try:
        reply = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=ghost, message="hello"), app.session.ctx)
    finally:
        CURRENT_TOOL_USE_ID.reset(token)
    assert not reply.is_error, reply.content
    content = await asyncio.wait_for(app.tasks.next_notification(), GUARD_S)
    assert content is not None
    note = NOTIFICATION_RE.match(content[0]["text"])
    assert note is not None and note["status"] == "completed" and note["result"] == "Three ghosts, and hello back."
    first = jsonl(tasks / f"{ghost}.output")[0]
    text = json.dumps(first["message"])
    assert text.index("Count the ghosts") < text.index("hello")  # its task, then the message
    await app.aclose()
