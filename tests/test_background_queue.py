"""The cap on running background agents (issue 13): launches past it queue, then start as places free.

The real CLI runs five background agents with ``CATUI_MAX_CONCURRENT_SUBAGENTS=2``
against a loopback server that holds the children's requests until the test
lets them go, so the queue is looked at while it certainly exists.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from catui.state.db import StateDB
from tests.support.cli_env import cli_env
from tests.support.inflight_server import InFlightServer

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)
CHILD = "QUEUED-CHILD"


def bg_call(index: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_q{index}", "name": "Agent",
            "input": {"description": f"job {index}", "prompt": f"{CHILD} {index} please",
                      "subagent_type": "general-purpose", "run_in_background": True}}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text("print('hi')\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def statuses(repo: Path) -> list[str]:
    if not (repo / ".catui" / "state.db").exists():
        return []
    return sorted(str(row["status"]) for row in StateDB(repo).list_tasks())


def test_background_agents_past_the_cap_queue_then_run_and_each_notifies_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("Noted."), "repeat": True},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call(i) for i in range(5)]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": CHILD}, "content": text("child done"), "repeat": True},
    ]
    # hold_until above the cap: the two running children are held until release().
    server = InFlightServer({"turns": turns}, marker=CHILD, hold_until=3, hold_timeout_s=GUARD_S)
    with server:
        env = cli_env(tmp_path, server, CATUI_MAX_CONCURRENT_SUBAGENTS="2", CATUI_TELEMETRY="0")
        proc = subprocess.Popen(
            [sys.executable, "-m", "catui", "-p", "Start", "--output-format", "stream-json", "--verbose"],
            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            wait_for(lambda: server.in_flight == 2 and statuses(repo) == ["queued"] * 3 + ["running"] * 2,
                     "two running agents (held at the server) and three queued")
            listing = subprocess.run([sys.executable, "-m", "catui", "tasks"], cwd=repo, env=env,
                                     capture_output=True, text=True, timeout=GUARD_S)
            assert listing.returncode == 0, listing.stderr
            assert listing.stdout.count("queued") == 3 and listing.stdout.count("running") == 2
            server.release()
            out, err = proc.communicate(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    assert server.max_in_flight == 2  # never more than the cap at once
    assert statuses(repo) == ["completed"] * 5
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    system = [e for e in events if e.get("type") == "system"]
    started = [e for e in system if e["subtype"] == "task_started"]
    assert len(started) == 5
    queued_ids = [e["task_id"] for e in started if e.get("status") == "queued"]
    assert len(queued_ids) == 3
    assert [e["tool_use_id"] for e in started if e.get("status") == "queued"] == ["toolu_q2", "toolu_q3", "toolu_q4"]
    now_running = [e["task_id"] for e in system if e["subtype"] == "task_progress" and e.get("status") == "running"]
    assert sorted(now_running) == sorted(queued_ids)
    notified = [e["task_id"] for e in system if e["subtype"] == "task_notification"]
    assert sorted(notified) == sorted(e["task_id"] for e in started)  # exactly once each
    # Each status change is a task_updated too: queued → running, then running → completed, once each.
    updates = [(e["task_id"], e["patch"]["status"]) for e in system if e["subtype"] == "task_updated"]
    assert sorted(t for t, status in updates if status == "running") == sorted(queued_ids)
    assert sorted(t for t, status in updates if status == "completed") == sorted(notified)
    assert len(updates) == len(queued_ids) + len(notified)
    notes = [e for e in server.bodies() if "<task-notification>" in json.dumps(e["messages"][-1])]
    told = "".join(json.dumps(body["messages"]) for body in notes[-1:])
    assert all(f"toolu_q{i}" in told for i in range(5))  # the last request carries every notification


def test_a_queued_agent_can_be_stopped_and_notifies_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("Noted."), "repeat": True},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call(i) for i in range(2)]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": CHILD}, "content": text("child done"), "repeat": True},
    ]
    server = InFlightServer({"turns": turns}, marker=CHILD, hold_until=2, hold_timeout_s=GUARD_S)
    with server:
        env = cli_env(tmp_path, server, CATUI_MAX_CONCURRENT_SUBAGENTS="1", CATUI_TELEMETRY="0")
        proc = subprocess.Popen(
            [sys.executable, "-m", "catui", "-p", "Start", "--output-format", "stream-json", "--verbose"],
            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            wait_for(lambda: server.in_flight == 1 and statuses(repo) == ["queued", "running"],
                     "one running agent and one queued")
            queued = next(r for r in StateDB(repo).list_tasks() if r["status"] == "queued")
            stopped = subprocess.run([sys.executable, "-m", "catui", "tasks", "stop", queued["id"]], cwd=repo,
                                     env=env, capture_output=True, text=True, timeout=GUARD_S)
            assert stopped.returncode == 0, stopped.stderr
            server.release()
            out, err = proc.communicate(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    assert statuses(repo) == ["completed", "stopped"]
    assert server.max_in_flight == 1
    assert sum(CHILD in json.dumps(b["messages"][0]) for b in server.bodies()) == 1  # the stopped one never ran
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    notified = [e["task_id"] for e in events if e.get("type") == "system" and e["subtype"] == "task_notification"]
    assert sorted(notified) == sorted({*notified}) and queued["id"] in notified and len(notified) == 2
    updates = {e["task_id"]: e["patch"]["status"] for e in events if e.get("subtype") == "task_updated"}
    assert updates[queued["id"]] == "killed"  # a stopped task is "killed" in task_updated, as in Claude Code


def test_a_bad_cap_warns_and_keeps_the_default(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    turns = [{"content": text("Fine."), "repeat": True}]
    with InFlightServer({"turns": turns}, marker=CHILD) as server:
        env = cli_env(tmp_path, server, CATUI_MAX_CONCURRENT_SUBAGENTS="0")
        done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr
    assert "CATUI_MAX_CONCURRENT_SUBAGENTS='0' is not a positive whole number; using 20" in done.stderr
    assert done.stdout.strip() == "Fine."
