"""Progress summaries of background agents (spec 8.2), through the real CLI on the loopback server.

A tiny threshold and interval (milliseconds) stand in for Claude Code's ~30 s;
the loopback server plays the small model. While the agent waits on its slow
model turn, ``catui tasks`` (another process, reading state.db) shows the line;
stream-json carries it in ``task_progress.summary``. A failing summary model
leaves the agent untouched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from catui.tools.task_output import TaskOutputTool
from catui.tools.task_output_input import TaskOutputInput
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.test_background_agents import (
    NOTED,
    Driver,
    Gates,
    _isolated,  # noqa: F401  (autouse fixture: CATUI_HOME and HOME in tmp, provider cache cleared)
    agent_call,
    make_app,
    parent_turns,
    until,
    worker_turns,
)

GUARD_S = 30  # a broken scenario fails here instead of hanging (not a timing assertion)
FAST = {"CATUI_AGENT_PROGRESS_SUMMARY_AFTER_MS": "50", "CATUI_AGENT_PROGRESS_SUMMARY_EVERY_MS": "50"}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def script(with_summary: bool) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "SUM-MAIN", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_slow", "name": "Agent", "input": {
             "description": "slow survey", "prompt": "SLOW-JOB", "subagent_type": "general-purpose",
             "run_in_background": True}}]},
        {"match": {"first_user_contains": "SUM-MAIN", "last_is_tool_result": True}, "content": text("launched")},
        {"match": {"first_user_contains": "SLOW-JOB", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_glob", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"first_user_contains": "SLOW-JOB", "last_is_tool_result": True},
         "content": text("survey finished"), "delay_ms": 4000},
    ]
    if with_summary:
        turns.insert(0, {"name": "summary", "match": {"system_contains": "You watch a coding agent"},
                         "content": text("Globbing the Python files of the repo"), "repeat": True})
    return {"turns": turns}


def start(tmp_path: Path, server: AnthropicTestServer, **env: str) -> tuple[Path, subprocess.Popen[str], dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    environ = cli_env(tmp_path, server, **env)
    proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", "SUM-MAIN", "--output-format", "stream-json",
                             "--verbose"], cwd=repo, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    return repo, proc, environ


def tasks_listing(repo: Path, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "catui", "tasks"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=GUARD_S)
    return done.stdout


def test_a_long_background_agent_gets_a_one_line_summary(tmp_path: Path) -> None:
    with AnthropicTestServer(script(True)) as server:
        repo, proc, env = start(tmp_path, server, **FAST)
        try:
            deadline = time.monotonic() + GUARD_S
            listing = ""
            while time.monotonic() < deadline and "Globbing the Python files" not in listing:
                listing = tasks_listing(repo, env)
                time.sleep(0.1)
            assert "slow survey — Globbing the Python files of the repo" in listing
            out, err = proc.communicate(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        reviews = [b for b in server.bodies() if "You watch a coding agent" in json.dumps(b.get("system"))]
    assert reviews and all(b["model"] == "claude-haiku-4-5-20251001" for b in reviews)
    assert "SLOW-JOB" in json.dumps(reviews[0]["messages"]) or "Glob" in json.dumps(reviews[0]["messages"])
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    progress = [m for m in lines if m.get("type") == "system" and m.get("subtype") == "task_progress"
                and "summary" in m]
    assert progress and progress[0]["summary"] == "Globbing the Python files of the repo"
    notes = [m for m in lines if m.get("type") == "system" and m.get("subtype") == "task_notification"]
    assert [n["status"] for n in notes] == ["completed"]
    assert "Globbing" not in tasks_listing(repo, env)  # a finished agent shows no progress line


def test_a_failing_summary_model_leaves_the_agent_alone(tmp_path: Path) -> None:
    # No turn answers the summary requests: the server refuses them; the agent finishes as if nothing happened.
    with AnthropicTestServer(script(False)) as server:
        _, proc, _ = start(tmp_path, server, **FAST)
        out, err = proc.communicate(timeout=GUARD_S * 2)
        asked = [b for b in server.bodies() if "You watch a coding agent" in json.dumps(b.get("system"))]
    assert proc.returncode == 0, err
    assert asked  # summaries were attempted ...
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert not [m for m in lines if m.get("subtype") == "task_progress" and "summary" in m]  # ... none came
    note = next(m for m in lines if m.get("subtype") == "task_notification")
    assert note["status"] == "completed"
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "noted"


def test_summaries_can_be_turned_off(tmp_path: Path) -> None:
    with AnthropicTestServer(script(True)) as server:
        _, proc, _ = start(tmp_path, server, CATUI_AGENT_PROGRESS_SUMMARIES="0", **FAST)
        _, err = proc.communicate(timeout=GUARD_S * 2)
        asked = [b for b in server.bodies() if "You watch a coding agent" in json.dumps(b.get("system"))]
    assert proc.returncode == 0, err
    assert asked == []


async def test_task_output_shows_the_running_agents_summary(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    gates = Gates()
    summary = {"match": {"system_contains": "You watch a coding agent"},
               "content": text("Waiting at gate g"), "repeat": True}
    app = make_app(tmp_path, project, [NOTED, summary, *parent_turns([agent_call("g")]), *worker_turns("g")], gates,
                   env={"CATUI_AGENT_PROGRESS_SUMMARY_AFTER_MS": "10", "CATUI_AGENT_PROGRESS_SUMMARY_EVERY_MS": "10"})
    driver = Driver(app)
    await gates.wait_entered("g")
    [task] = app.tasks.list()
    await until(lambda: task.metadata.get("progress_summary") == "Waiting at gate g")
    shown = await TaskOutputTool().call(TaskOutputInput(task_id=task.id, block=False), app.session.ctx)
    assert "<progress_summary>Waiting at gate g</progress_summary>" in str(shown.content)
    gates.gate("g").set()
    await driver.done()
    finished = await TaskOutputTool().call(TaskOutputInput(task_id=task.id, block=False), app.session.ctx)
    assert "<progress_summary>" not in str(finished.content)
    await app.aclose()
