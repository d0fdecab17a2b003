"""A resumed session's background tasks come back (issue 14): through the real CLI on the loopback Anthropic
server, a background agent of the first run is seen as finished history by TaskOutput in a ``-c`` run, and a
fork carries the old session's agent names."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import catui
from catui.state.db import StateDB
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.sdk_backend import collect

GUARD_S = 60


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


TURNS: list[dict[str, Any]] = [
    {"match": {"last_user_contains": "ASK OUTPUT", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_out", "name": "TaskOutput",
                  "input": {"task_id": "AGENT_ID", "block": False}}]},
    {"match": {"last_is_tool_result": True, "last_user_contains": "scout saw"}, "content": text("It said so."),
     "repeat": True},
    {"match": {"last_user_contains": "<task-notification>"}, "content": text("The agent reported."), "repeat": True},
    {"match": {"first_user_contains": "Survey", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
                  "input": {"description": "look around", "prompt": "BG CHILD: look at the files",
                            "subagent_type": "general-purpose", "run_in_background": True, "name": "scout"}}]},
    {"match": {"first_user_contains": "Survey", "last_is_tool_result": True, "last_user_contains": "Async agent"},
     "content": text("Started it.")},
    {"match": {"first_user_contains": "BG CHILD"}, "content": text("The scout saw one file.")},
]


def run(project: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "catui", *args, "--output-format", "json"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr + done.stdout
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_continue_sees_the_old_sessions_finished_background_agent(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    with AnthropicTestServer({"turns": TURNS}) as server:
        first = run(project, cli_env(tmp_path, server), "-p", "Survey the project")
    with StateDB(project) as state:
        (row,) = state.list_tasks(parent_session_id=first["session_id"])
        assert row["status"] == "completed"
        agent_id = str(row["id"])
    # The id is only known now: the resumed run's TaskOutput call asks for it.
    turns = json.loads(json.dumps(TURNS).replace("AGENT_ID", agent_id))
    with AnthropicTestServer({"turns": turns}) as server:
        second = run(project, cli_env(tmp_path, server), "-c", "-p", "ASK OUTPUT of the scout")
        bodies = server.bodies()
    assert second["session_id"] == first["session_id"]
    assert second["result"] == "It said so."
    answer = json.dumps(bodies[-1]["messages"][-1])
    assert "The scout saw one file." in answer and "completed" in answer


def test_a_fork_carries_the_old_sessions_agent_names(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with AnthropicTestServer({"turns": [{"repeat": True, "content": text("ok")}]}) as server:
        env = cli_env(tmp_path, server)
        first = run(project, env, "-p", "hello")
        with StateDB(project) as state:
            state.set_name(first["session_id"], "scout", "a0123456789abcdef")
        fork = run(project, env, "-r", first["session_id"], "--fork-session", "-p", "again")
    assert fork["session_id"] != first["session_id"]
    with StateDB(project) as state:
        assert state.names(fork["session_id"]) == {"scout": "a0123456789abcdef"}
        assert state.names(first["session_id"]) == {"scout": "a0123456789abcdef"}


def test_the_sdk_looks_for_interrupted_agents_at_connect(tmp_path: Path) -> None:
    project = tmp_path / "sdkproj"
    project.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now belongs to no process: the agent's owner died
    with StateDB(project) as state:
        state.upsert_task("a00000000000000aa", type="local_agent", status="running", pid=gone.pid,
                          description="long job", agent_type="general-purpose", parent_session_id="old-session",
                          output_file=str(project / ".catui" / "tasks" / "a00000000000000aa.output"))
    with AnthropicTestServer({"turns": [{"repeat": True, "content": text("ok")}]}) as server:
        env = {**server.env("test"), "CATUI_HOME": str(tmp_path / "catui-home")}
        options = catui.CatuiOptions(cwd=project, env=env)
        messages = asyncio.run(collect("hi", options))
    init = messages[0]
    assert any("a00000000000000aa" in w and "was interrupted" in w for w in init.data["warnings"])
    with StateDB(project) as state:
        row = state.get_task("a00000000000000aa")
        assert row is not None and row["status"] == "interrupted"  # never shown as running once its process is gone
