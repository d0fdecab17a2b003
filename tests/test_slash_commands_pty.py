"""The interactive slash commands end to end: ``catui`` in a pseudo-terminal on the scripted model, typed into.

/cost, /status, /model, /compact (the transcript gets a manual boundary and the next request starts from the
summary), /agents (list, create from the short form, show), /tasks, /clear (a new session id) and /resume (the
picker, then the next request carries the old conversation)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catui.session.compaction import SUMMARISER_SYSTEM
from tests.test_cli_interactive_pty import PROMPT_READY, PtyProcess, start_catui

MARKER = SUMMARISER_SYSTEM[:40]
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"system_contains": MARKER}, "repeat": True,
     "content": [{"type": "text", "text": "SUMMARY-TEXT of the greeting"}]},
    {"match": {"last_user_contains": "after compact", "first_user_contains": "SUMMARY-TEXT"},
     "content": [{"type": "text", "text": "Continuing from the summary."}]},
    {"match": {"last_user_contains": "hello"}, "repeat": True, "content": [{"type": "text", "text": "Hi from the model."}]},
    {"match": {"last_user_contains": "back again"}, "repeat": True,
     "content": [{"type": "text", "text": "Welcome back."}]},
]}


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    return {"home": tmp_path / "home", "catui_home": tmp_path / "home" / ".catui", "project": tmp_path / "project",
            "tmp": tmp_path}


@pytest.fixture
def tui(workspace: dict[str, Path]) -> Iterator[PtyProcess]:
    proc = start_catui(workspace, SCRIPT)
    yield proc
    proc.close()


def session_lines(ws: dict[str, Path], session_id: str) -> list[dict[str, Any]]:
    (path,) = (ws["catui_home"] / "projects").glob(f"*/{session_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_slash_commands_in_a_terminal(tui: PtyProcess, workspace: dict[str, Path]) -> None:
    tui.expect(PROMPT_READY)
    tui.send("hello there\r")
    tui.expect(r"Hi from the model\.")
    tui.expect(PROMPT_READY)

    tui.send("/cost\r")
    tui.expect(r"Total cost: \$[\d.]+ \(the main agent and its sub-agents\)")
    tui.expect(r"input, [\d.k]+ output")
    tui.send("/status\r")
    session_id = tui.expect(rf"Session: ({UUID})").group(1)
    tui.expect(r"Context: ~[\d.k]+ of 200\.0k tokens \(\d+%\), auto-compaction on")
    tui.send("/model\r")
    tui.expect(r"Model: .*/model NAME switches")
    tui.send("/model no such model\r")
    tui.expect(r"/model: .*'no'")  # one line naming it; the session goes on
    tui.send("/model haiku\r")
    tui.expect(r"Model set to .* \(claude-haiku-[\w-]+\)\.")
    tui.send("/status\r")
    tui.expect(r"Model: .* \(claude-haiku-[\w-]+\)")
    tui.send("/help\r")
    tui.expect(r"/compact \[instructions\]\s+summarise the conversation")

    tui.send("/compact keep the greeting\r")
    tui.expect(r"Compacted: 1 earlier messages summarised, 1 kept")
    tui.send("after compact, go on\r")
    tui.expect(r"Continuing from the summary\.")
    lines = session_lines(workspace, session_id)
    (boundary,) = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "manual"

    tui.send("/agents\r")
    tui.expect(r"active agents")
    tui.expect(r"general-purpose")
    tui.send("/agents create\r")
    tui.expect(r"Name \(")
    tui.send("reviewer\r")
    tui.expect(r"When should it be used")
    tui.send("Reviews diffs: before a commit.\r")
    tui.expect(r"Tools, comma-separated")
    tui.send("Read, Grep\r")
    tui.expect(r"Model \(")
    tui.send("\r")
    tui.expect(r"Save for \[p\]roject or \[u\]ser")
    tui.send("p\r")
    tui.expect(r"Its system prompt")
    tui.send("You review code.\r")
    tui.expect(r"Created .*reviewer\.md")
    agent_file = workspace["project"] / ".claude" / "agents" / "reviewer.md"
    assert "You review code." in agent_file.read_text()
    tui.send("/agents show reviewer\r")
    tui.expect(r"Reviews diffs: before a commit\.")
    tui.send("/tasks\r")
    tui.expect(r"No background tasks in this session\.")
    tui.send("/tasks stop nothing\r")
    tui.expect(r"/tasks: no task in this session match")

    tui.send("/clear\r")
    new_id = tui.expect(rf"Started a new conversation \(({UUID})\)").group(1)
    assert new_id != session_id
    tui.send("/resume\r")
    tui.expect(r"Sessions of this project")
    tui.expect(r"Resume which\?")
    tui.send("1\r")
    tui.expect(rf"Resumed session {session_id} \(\d+ earlier messages\)")
    tui.send("back again\r")
    tui.expect(r"Welcome back\.")
    tui.send("/exit\r")
    assert tui.wait_exit() == 0
    prompts = [json.dumps(line["message"]) for line in session_lines(workspace, session_id) if line["type"] == "user"]
    assert any("back again" in p for p in prompts) and any("after compact" in p for p in prompts)


BACKGROUND_SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "repeat": True,
     "content": [{"type": "text", "text": "Noted the stop."}]},
    {"match": {"first_user_contains": "SLOW JOB"}, "delay_ms": 60_000, "content": [{"type": "text", "text": "late"}]},
    {"match": {"last_user_contains": "start the survey", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
                  "input": {"description": "slow survey", "prompt": "SLOW JOB: survey everything",
                            "subagent_type": "general-purpose", "run_in_background": True}}]},
    {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Survey started."}]},
]}


def test_tasks_lists_and_stops_a_running_background_agent(workspace: dict[str, Path]) -> None:
    tui = start_catui(workspace, BACKGROUND_SCRIPT)
    try:
        tui.expect(PROMPT_READY)
        tui.send("please start the survey\r")
        tui.expect(r"Survey started\.")
        tui.expect(PROMPT_READY)
        tui.send("/tasks\r")
        agent_id = tui.expect(r"(a[0-9a-f]{16})\s+running\s+general-purpose.*slow survey").group(1)
        tui.send("/tasks show " + agent_id[:6] + "\r")
        tui.expect(r"status:\s+running")
        tui.send("/tasks resume " + agent_id + "\r")
        tui.expect(r"/tasks: no single interrupted agent matches")
        tui.send("/tasks stop " + agent_id[:6] + "\r")
        tui.expect(rf"Stopped {agent_id} \(stopped\)\.")
        tui.expect(r"Noted the stop\.")  # the notification of the stop reaches the model once
        tui.send("/exit\r")
        assert tui.wait_exit() == 0
    finally:
        tui.close()
