"""Background agents through the real CLI (``python -m catui -p``) against the loopback Anthropic server.

Print mode waiting for background agents, stream-json task events, ``catui
tasks`` (list, show, stop from another process), and a kill -9 of catui while
background agents run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from catui.models.replay.scripted import RequestView
from catui.state.db import StateDB
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.cli_env import run_catui as run_catui_in
from tests.support.loopback import Fault, RecordedRequest

ROOT = Path(__file__).resolve().parents[1]
GUARD_S = 30  # a broken scenario fails here instead of hanging (not a timing assertion)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def catui(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_catui_in(repo, env, *args, timeout=GUARD_S)


def bg_call(tool_id: str, prompt: str, **extra: Any) -> dict[str, Any]:
    args = {"description": f"job {tool_id}", "prompt": prompt, "subagent_type": "general-purpose",
            "run_in_background": True, **extra}
    return {"type": "tool_use", "id": tool_id, "name": "Agent", "input": args}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def last_user_text(body: dict[str, Any]) -> str:
    message = body["messages"][-1]
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


class SecondAgentWaitsServer(AnthropicTestServer):
    """Answers "Look at main.py" only after the parent was asked about the other agent's notification.

    So the two agents finish one after the other, in a known order, on a machine of any speed (fixed
    delays of 100 and 300 ms could swap or merge the two notifications on a loaded one).
    """

    def __init__(self, script: Any) -> None:
        super().__init__(script)
        self.first_notified = threading.Event()

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        view = RequestView.from_anthropic(body)
        if "<task-notification>" in view.last_user_text and "toolu_bg2" in view.last_user_text:
            self.first_notified.set()
        if "Look at main.py" in view.first_user_text:
            self.first_notified.wait(GUARD_S)  # a guard against a hang, not a delay
        super().handle_post(handler, request, fault)


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_print_mode_waits_then_answers_the_notification(tmp_path: Path, repo: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("Both agents reported."),
         "repeat": True},
        {"match": {"first_user_contains": "Survey", "last_is_tool_result": False},
         "content": [bg_call("toolu_bg1", "Look at main.py"), bg_call("toolu_bg2", "Count the files")]},
        {"match": {"first_user_contains": "Survey", "last_is_tool_result": True},
         "content": text("Two agents are working on it.")},
        {"match": {"first_user_contains": "Look at main.py"}, "content": text("main.py prints hi.")},
        {"match": {"first_user_contains": "Count the files"}, "content": text("One file.")},
    ]
    with SecondAgentWaitsServer({"turns": turns}) as server:
        env = cli_env(tmp_path, server)
        done = catui(repo, env, "-p", "Survey the repo", "--output-format", "stream-json", "--verbose")
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        bodies = server.bodies()
    systems = [(m["subtype"], m.get("task_id")) for m in lines if m.get("type") == "system"]
    started = [t for s, t in systems if s == "task_started"]
    notified = [t for s, t in systems if s == "task_notification"]
    assert len(started) == 2 and sorted(notified) == sorted(started)
    results = [m for m in lines if m.get("type") == "result"]
    assert [r["result"] for r in results] == ["Two agents are working on it.", "Both agents reported.",
                                              "Both agents reported."]
    # The parent was asked once per notification, in the order the agents finished (the counting one first).
    notes = [last_user_text(b) for b in bodies if "<task-notification>" in last_user_text(b)]
    assert len(notes) == 2
    assert "<tool-use-id>toolu_bg2</tool-use-id>" in notes[0] and "<result>One file.</result>" in notes[0]
    assert "<tool-use-id>toolu_bg1</tool-use-id>" in notes[1] and "<result>main.py prints hi.</result>" in notes[1]
    launch = next(m for m in lines if m.get("type") == "user" and "tool_use_result" in m
                  and m["tool_use_result"].get("status") == "async_launched")
    assert set(launch["tool_use_result"]) == {"status", "agentId", "description", "prompt", "outputFile",
                                              "canReadOutputFile", "modelResolution"}

    with AnthropicTestServer({"turns": turns}) as server:
        done = catui(repo, cli_env(tmp_path, server), "-p", "Survey the repo", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Both agents reported."

    listing = catui(repo, cli_env(tmp_path, server), "tasks")
    assert listing.returncode == 0 and listing.stdout.count("completed") == 4
    agent_id = started[0]
    shown = catui(repo, cli_env(tmp_path, server), "tasks", "show", agent_id)
    assert shown.returncode == 0 and f"id:           {agent_id}" in shown.stdout
    assert "status:       completed" in shown.stdout and "result:\n" in shown.stdout
    missing = catui(repo, cli_env(tmp_path, server), "tasks", "show", "nope")
    assert missing.returncode == 1 and "no task matches 'nope'" in missing.stderr


def test_kill_9_keeps_output_lines_and_tasks_become_interrupted(tmp_path: Path, repo: Path) -> None:
    turns = [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call(f"toolu_k{i}", f"Job {i} please") for i in range(3)]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": "please", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}], "repeat": True},
        {"match": {"first_user_contains": "please", "last_is_tool_result": True}, "content": text("late"),
         "delay_ms": 20_000, "repeat": True},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        env = cli_env(tmp_path, server)
        proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", "Start"], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            tasks_dir = repo / ".catui" / "tasks"

            def three_lines_each() -> bool:
                files = list(tasks_dir.glob("*.output"))
                return len(files) == 3 and all(len(f.read_bytes().splitlines()) >= 3 for f in files)

            wait_for(three_lines_each, "three output files with the child's first round")
            before = {f: f.read_bytes() for f in tasks_dir.glob("*.output")}
            assert {r["status"] for r in StateDB(repo).list_tasks()} == {"running"}
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        for path, data in before.items():
            after = path.read_bytes()
            assert after.startswith(data) and after.endswith(b"\n")
            records = [json.loads(line) for line in after.splitlines()]
            assert [r["type"] for r in records][:3] == ["user", "assistant", "user"]
        listing = catui(repo, env, "tasks")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.count("interrupted") == 3 and "running" not in listing.stdout
    rows = StateDB(repo).list_tasks()
    assert [r["status"] for r in rows] == ["interrupted"] * 3
    assert all(f"catui process {proc.pid} exited" in r["error"] for r in rows)


def test_tasks_stop_from_another_process(tmp_path: Path, repo: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("It was stopped.")},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call("toolu_s1", "Slow job please")]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": "Slow job"}, "content": text("too late"), "delay_ms": 20_000},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        env = cli_env(tmp_path, server)
        proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", "Start", "--output-format", "json"],
                                cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: (repo / ".catui" / "state.db").exists() and StateDB(repo).list_tasks(status="running"),
                     "a running task")
            [row] = StateDB(repo).list_tasks(status="running")
            stopped = catui(repo, env, "tasks", "stop", row["id"][:8])
            assert stopped.returncode == 0, stopped.stderr
            assert stopped.stdout.strip() == f"Task {row['id']} stopped."
            out, err = proc.communicate(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    assert json.loads(out)["result"] == "It was stopped."
    final = StateDB(repo).get_task(row["id"])
    assert final is not None and final["status"] == "stopped"
    again = catui(repo, env, "tasks", "stop", row["id"])
    assert again.returncode == 0 and "is not running (status: stopped)" in again.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_stops_background_agents_and_records_them(tmp_path: Path, repo: Path, signum: int) -> None:
    turns = [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call("toolu_t1", "Endless job please"), bg_call("toolu_t2", "Other endless job please")]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": "please"}, "content": text("too late"), "delay_ms": 20_000,
         "repeat": True},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        env = cli_env(tmp_path, server)
        proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", "Start"], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: (repo / ".catui" / "state.db").exists()
                     and len(StateDB(repo).list_tasks(status="running")) == 2, "two running tasks")
            wait_for(lambda: len(server.requests) >= 4, "both children waiting on the model")
            proc.send_signal(signum)  # SIGINT: Ctrl-C
            _out, err = proc.communicate(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert [r["status"] for r in StateDB(repo).list_tasks()] == ["stopped", "stopped"], err
    assert "Traceback" not in err
