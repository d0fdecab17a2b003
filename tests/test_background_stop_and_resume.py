"""Stopping a foreground sub-agent by id, and resumed agents that keep their task's history and worktree.

In process on the scripted provider, with the Gate tool of test_background_agents deciding every order.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from catui.session.events import ToolEndEvent
from catui.state.db import StateDB
from catui.subagents.send_message import SendMessageTool
from catui.subagents.send_message_input import SendMessageInput
from catui.tools.base import CURRENT_TOOL_USE_ID
from catui.tools.task_stop import TaskStopTool
from catui.tools.task_stop_input import TaskStopInput
from tests.test_background_agents import (
    GUARD_S,
    NOTED,
    NOTIFICATION_RE,
    Driver,
    Gates,
    _isolated,  # noqa: F401  (autouse fixture: CATUI_HOME and HOME in tmp)
    agent_call,
    make_app,
    parent_turns,
    worker_turns,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    return folder


def agent_ends(driver: Driver) -> dict[str, ToolEndEvent]:
    """The parent's Agent results by the description of the call."""
    calls = {e.tool_use_id: e for e in driver.events if isinstance(e, ToolEndEvent) and e.agent_id is None
             and e.name == "Agent"}
    started = {e.data["tool_use_id"]: e.data["description"] for e in driver.system("task_started")}
    return {started[tool_use_id]: end for tool_use_id, end in calls.items()}


def started_ids(driver: Driver) -> dict[str, str]:
    return {e.data["description"]: e.data["task_id"] for e in driver.system("task_started")}


def talking_worker(key: str) -> list[dict[str, Any]]:
    """A worker that writes a line of text, then waits at its gate."""
    return [
        {"match": {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}",
                   "last_is_tool_result": False},
         "content": [{"type": "text", "text": f"Started on {key}; halfway there."},
                     {"type": "tool_use", "name": "Gate", "input": {"key": key}}]},
        {"match": {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}",
                   "last_user_contains": f"gate {key} open"},
         "content": [{"type": "text", "text": f"Finished {key}."}]},
    ]


# -- stopping a foreground agent ------------------------------------------------------------------


async def test_task_stop_stops_one_foreground_agent_and_the_rest_carry_on(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    resumed: dict[str, Any] = {
        "match": {"system_contains": "You are the worker agent", "last_user_contains": "Pick it up"},
        "content": [{"type": "text", "text": "Picked it up again."}],
    }
    turns = [resumed, NOTED,
             *parent_turns([agent_call("a", background=False), agent_call("b", background=False)], after="Both back."),
             *talking_worker("a"), *worker_turns("b")]
    app = make_app(tmp_path, project, turns, gates)
    opened = time.time()
    driver = Driver(app)
    await gates.wait_entered("a")
    await gates.wait_entered("b")
    ids = started_ids(driver)
    runtime = app.services.subagents.runtime
    assert set(runtime.foreground_ids()) == {ids["Job a"], ids["Job b"]}

    stop = await asyncio.wait_for(TaskStopTool().call(TaskStopInput(task_id=ids["Job a"]), app.session.ctx),
                                  GUARD_S)
    assert not stop.is_error, stop.content
    assert f"Stopped agent {ids['Job a']} (Job a)" in str(stop.content) and stop.data["status"] == "stopped"
    assert gates.cancelled == ["a"]  # the child was aborted in the middle of its tool call
    assert set(runtime.foreground_ids()) == {ids["Job b"]}
    stopped_at = time.time()

    gates.gate("b").set()  # the sibling was not touched: it finishes normally
    await driver.done()
    ends = agent_ends(driver)
    text_a = str(ends["Job a"].content)
    assert ends["Job a"].is_error
    assert text_a.startswith('Agent "Job a" (worker) was stopped before it finished.')
    assert "Started on a; halfway there." in text_a
    assert f"use SendMessage with to: '{ids['Job a']}'" in text_a
    assert ends["Job a"].data["status"] == "stopped"
    assert ends["Job a"].data["partialResult"] == "Started on a; halfway there."
    assert ends["Job a"].data["totalToolUseCount"] == 1  # its Gate call, even if stopped before it was read
    assert not ends["Job b"].is_error and "Finished b." in json.dumps(ends["Job b"].content)
    finished = {e.data["task_id"]: e.data["status"] for e in driver.system("task_notification")}
    assert finished == {ids["Job a"]: "stopped", ids["Job b"]: "completed"}
    assert [r.result for r in driver.results()] == ["Both back."]  # the parent carried on

    unknown = await TaskStopTool().call(TaskStopInput(task_id="a0000000000000000"), app.session.ctx)
    assert unknown.is_error and "No task found with ID 'a0000000000000000'" in str(unknown.content)

    # The stopped agent can be continued; its task covers its whole life (start time, tool calls).
    reply = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=ids["Job a"], message="Pick it up, please."),
                                         app.session.ctx)
    assert not reply.is_error, reply.content
    content = await asyncio.wait_for(app.tasks.next_notification(), GUARD_S)
    assert content is not None
    note = NOTIFICATION_RE.match(content[0]["text"])
    assert note is not None and note["status"] == "completed" and note["result"] == "Picked it up again."
    task = app.tasks.get(ids["Job a"])
    assert task is not None and task.tool_uses == 1  # the Gate call of its first run
    assert opened <= task.started_at <= stopped_at
    await app.aclose()


async def test_stopping_a_foreground_agent_without_background_tasks(tmp_path: Path, project: Path) -> None:
    """With background tasks disabled there is no background layer; the runtime still stops the agent."""
    gates = Gates()
    turns = [*parent_turns([agent_call("a", background=False)], after="Went on."), *talking_worker("a")]
    app = make_app(tmp_path, project, turns, gates, env={"CATUI_DISABLE_BACKGROUND_TASKS": "1"})
    driver = Driver(app)
    await gates.wait_entered("a")
    [agent_id] = started_ids(driver).values()
    runtime = app.services.subagents.runtime
    assert runtime.foreground.handover is None and runtime.launcher is None
    stopped = await asyncio.wait_for(runtime.stop_foreground(agent_id), GUARD_S)
    assert stopped is not None and stopped.stop_requested
    assert await runtime.stop_foreground(agent_id) is None  # no longer running
    await driver.done()
    end = agent_ends(driver)["Job a"]
    assert end.is_error and "was stopped before it finished" in json.dumps(end.content)
    assert [e.data["status"] for e in driver.system("task_notification")] == ["stopped"]
    assert [r.result for r in driver.results()] == ["Went on."]
    await app.aclose()


# -- resumed agents: their task covers their whole life, and they continue in the worktree they kept --------


def send_message(app: Any, to: str, text: str) -> Any:
    token = CURRENT_TOOL_USE_ID.set("toolu_send")
    try:
        return SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=to, message=text), app.session.ctx)
    finally:
        CURRENT_TOOL_USE_ID.reset(token)


async def next_note(app: Any) -> re.Match[str]:
    """The next notification, parsed (``note.string`` is its whole text)."""
    content = await asyncio.wait_for(app.tasks.next_notification(), GUARD_S)
    assert content is not None
    note = NOTIFICATION_RE.match(content[0]["text"])
    assert note is not None, content
    return note


async def test_a_task_resumed_after_a_restart_keeps_its_start_and_adds_to_its_counts(
    tmp_path: Path, project: Path
) -> None:
    gates = Gates()
    gates.gate("keep").set()
    gates.gate("again").set()
    worker = [
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "keep"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "gate keep open"},
         "content": [{"type": "text", "text": "Kept at it."}], "usage": {"input_tokens": 100, "output_tokens": 5}},
    ]
    resumed = [
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "After the restart"},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "again"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "gate again open"},
         "content": [{"type": "text", "text": "Went on."}], "usage": {"input_tokens": 300, "output_tokens": 7}},
    ]
    first = make_app(tmp_path, project, [NOTED, *parent_turns([agent_call("keep")]), *worker], gates)
    await Driver(first).done()
    [row] = StateDB(project).list_tasks()
    agent_id = str(row["id"])
    assert (row["status"], row["tool_uses"], row["total_tokens"]) == ("completed", 1, 105)
    await first.aclose()

    second = make_app(tmp_path, project, [*resumed, NOTED], gates)
    reply = await send_message(second, agent_id, "After the restart: one more step.")
    assert not reply.is_error, reply.content
    running = StateDB(project).get_task(agent_id)
    assert running is not None and running["status"] == "running"
    assert running["created_at"] == row["created_at"] and running["tool_uses"] == 1
    note = await next_note(second)
    assert (note["status"], note["result"], note["tools"]) == ("completed", "Went on.", "1")  # this run's own
    after = StateDB(project).get_task(agent_id)
    assert after is not None and after["status"] == "completed"
    assert after["created_at"] == row["created_at"]
    assert (after["tool_uses"], after["total_tokens"]) == (2, 105 + 307)
    await second.aclose()


@pytest.mark.parametrize("worktree_gone", [False, True])
async def test_an_agent_resumed_from_disk_continues_in_the_worktree_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worktree_gone: bool
) -> None:
    from tests.support.git_repos import git, isolate_git, make_repo

    isolate_git(monkeypatch, tmp_path / "githome")
    repo = make_repo(tmp_path / "wt-repo")
    gates = Gates()
    gates.gate("wt").set()
    worker = {"description": "Edits.", "prompt": "You are the worker agent.", "tools": ["Gate", "Write"],
              "isolation": "worktree"}
    first_turns: list[dict[str, Any]] = [
        NOTED, *parent_turns([agent_call("wt")]),
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "wt"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "gate wt open"},
         "content": [{"type": "text", "text": "Left a change."}]},
    ]

    def app_for(turns: list[dict[str, Any]]) -> Any:
        return make_app(tmp_path, repo, turns, gates, worker=worker, permission_mode="acceptEdits")

    first = app_for(first_turns)
    driver = Driver(first)
    await gates.wait_entered("wt")
    [end] = [e for e in driver.events if isinstance(e, ToolEndEvent) and e.name == "Agent"]
    agent_id = end.data["agentId"]
    worktree = Path(json.loads((repo / ".catui" / "tasks" / f"{agent_id}.meta.json").read_text())["worktreePath"])
    (worktree / "change.txt").write_text("changed\n", encoding="utf-8")  # the child's edit, made for it
    await driver.done()
    await first.aclose()
    recorded = StateDB(repo).get_worktree(agent_id)
    assert recorded is not None and recorded["status"] == "kept" and Path(recorded["path"]) == worktree
    if worktree_gone:
        git(repo, "worktree", "remove", "--force", str(worktree))  # the user threw it away
        git(repo, "branch", "-D", f"worktree-agent-{agent_id[:8]}")

    # The resumed turn matches only when the child works in the old worktree (its environment block names it).
    where = "worktrees/agent-" if worktree_gone else str(worktree)
    resumed_turn = {"match": {"system_contains": where, "last_user_contains": "Carry on"},
                    "content": [{"type": "text", "text": "Carried on."}]}
    second = app_for([resumed_turn, NOTED])
    reply = await send_message(second, agent_id, "Carry on where you left off.")
    assert not reply.is_error, reply.content
    note = await next_note(second)
    assert note["status"] == "completed"
    worktrees = sorted(p.name for p in (repo / ".catui" / "worktrees").iterdir())
    if worktree_gone:
        assert note["result"] == (f"Note: its worktree {worktree} no longer exists, so it continued in a new "
                                  "worktree.\n\nCarried on.")
        assert worktrees == []  # the new one was unchanged, so it was removed at the end
    else:
        assert note["result"] == "Carried on."
        assert worktrees == [worktree.name]  # no second worktree was made
        assert f"<worktreePath>{worktree}</worktreePath>" in note.string  # kept, and reported again
        row = StateDB(repo).get_worktree(agent_id)
        assert row is not None and row["status"] == "kept"
    await second.aclose()


async def test_an_agent_resumed_in_memory_reports_the_worktree_it_kept_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.git_repos import isolate_git, make_repo

    isolate_git(monkeypatch, tmp_path / "githome")
    repo = make_repo(tmp_path / "mem-repo")
    gates = Gates()
    gates.gate("wt").set()
    worker = {"description": "Edits.", "prompt": "You are the worker agent.", "tools": ["Gate", "Write"],
              "isolation": "worktree"}
    turns: list[dict[str, Any]] = [
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "Carry on"},
         "content": [{"type": "text", "text": "Carried on."}]},
        NOTED, *parent_turns([agent_call("wt")]),
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "wt"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_user_contains": "gate wt open"},
         "content": [{"type": "text", "text": "Left a change."}]},
    ]
    app = make_app(tmp_path, repo, turns, gates, worker=worker, permission_mode="acceptEdits")
    driver = Driver(app)
    await gates.wait_entered("wt")
    [end] = [e for e in driver.events if isinstance(e, ToolEndEvent) and e.name == "Agent"]
    agent_id = end.data["agentId"]
    worktree = Path(json.loads((repo / ".catui" / "tasks" / f"{agent_id}.meta.json").read_text())["worktreePath"])
    (worktree / "change.txt").write_text("changed\n", encoding="utf-8")
    await driver.done()
    assert agent_id in app.services.subagents.live.finished
    reply = await send_message(app, agent_id, "Carry on, please.")
    assert not reply.is_error, reply.content
    note = await next_note(app)
    assert (note["status"], note["result"]) == ("completed", "Carried on.")
    assert f"<worktreePath>{worktree}</worktreePath>" in note.string
    assert sorted(p.name for p in (repo / ".catui" / "worktrees").iterdir()) == [worktree.name]
    await app.aclose()
