"""Crash-safe background agents through the real CLI: kill -9 during a background agent, then a new catui.

The first ``catui -p`` starts a background agent against the loopback Anthropic
server; the agent's second model request is held (scripted delay) and the
process is killed with SIGKILL while it waits. What the next process does
depends on ``resumeInterruptedAgents``: ``auto`` resumes the agent from its
output file to completion with exactly one notification; ``off`` (print mode's
default) leaves it interrupted and says so; ``catui tasks resume ID`` resumes it
by hand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from catui.state.db import StateDB
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.test_background_cli import GUARD_S, bg_call, catui, last_user_text, text, wait_for
from tests.test_cli_interactive_pty import PtyProcess

INTERRUPTED = "previous run was interrupted"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def set_mode(repo: Path, mode: str) -> None:
    settings = repo / ".catui" / "settings.local.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"resumeInterruptedAgents": mode}), encoding="utf-8")


def kill_during_agent(tmp_path: Path, repo: Path) -> tuple[str, bytes]:
    """Run ``catui -p Start`` until its background agent waits on its second request, then SIGKILL it.

    Returns the agent's id and its output file's bytes as they were just before the kill.
    """
    turns = [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False},
         "content": [bg_call("toolu_crash", "Crash job please")]},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True}, "content": text("Started.")},
        {"match": {"first_user_contains": "please", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"first_user_contains": "please", "last_is_tool_result": True}, "content": text("too late"),
         "delay_ms": 20_000, "repeat": True},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", "Start"], cwd=repo,
                                env=cli_env(tmp_path, server), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            tasks_dir = repo / ".catui" / "tasks"

            def waiting_on_second_request() -> bool:
                files = list(tasks_dir.glob("*.output"))
                return len(files) == 1 and len(files[0].read_bytes().splitlines()) >= 3 and len(server.requests) >= 4

            wait_for(waiting_on_second_request, "the agent's first tool round and its second request")
            [output] = list(tasks_dir.glob("*.output"))
            before = output.read_bytes()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    [row] = StateDB(repo).list_tasks()
    assert row["status"] == "running"  # as the dead process left it
    return str(row["id"]), before


def resumed_turns() -> list[dict[str, Any]]:
    return [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("Noted the job."), "repeat": True},
        {"match": {"first_user_contains": "please", "last_user_contains": INTERRUPTED},
         "content": text("Job done after the crash.")},
        {"match": {"first_user_contains": "please"}, "content": text("unexpected child request"), "repeat": True},
        {"match": {"first_user_contains": "Anything new"}, "content": text("Nothing yet."), "repeat": True},
    ]


def notifications(bodies: list[dict[str, Any]]) -> list[str]:
    return [last_user_text(b) for b in bodies if "<task-notification>" in last_user_text(b)]


def test_auto_resumes_the_killed_agent_with_one_notification(tmp_path: Path, repo: Path) -> None:
    agent_id, before = kill_during_agent(tmp_path, repo)
    set_mode(repo, "auto")
    with AnthropicTestServer({"turns": resumed_turns()}) as server:
        env = cli_env(tmp_path, server)
        done = catui(repo, env, "-p", "Anything new?", "--output-format", "stream-json", "--verbose")
        bodies = server.bodies()
        assert done.returncode == 0, done.stderr
        assert f"resuming interrupted background agent {agent_id}" in done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        # A third process finds nothing to resume and tells nobody again.
        again = catui(repo, env, "-p", "Anything new?")
        bodies_after = server.bodies()[len(bodies):]
    events = [(m["subtype"], m.get("task_id")) for m in lines if m.get("type") == "system"]
    assert [t for s, t in events if s == "task_notification"] == [agent_id]
    [note] = notifications(bodies)
    assert f"<task-id>{agent_id}</task-id>" in note and "<tool-use-id>toolu_crash</tool-use-id>" in note
    assert "<status>completed</status>" in note and "<result>Job done after the crash.</result>" in note
    # The child continued from its transcript (its Glob round is in the request) with catui's note.
    [child] = [b for b in bodies if INTERRUPTED in last_user_text(b)]
    assert any(block.get("type") == "tool_use" and block.get("name") == "Glob"
               for m in child["messages"] if isinstance(m["content"], list) for block in m["content"])
    assert [m["result"] for m in lines if m.get("type") == "result"] == ["Nothing yet.", "Noted the job."]
    row = StateDB(repo).get_task(agent_id)
    assert row is not None and row["status"] == "completed" and row["result"] == "Job done after the crash."
    after = (repo / ".catui" / "tasks" / f"{agent_id}.output").read_bytes()
    assert after.startswith(before) and len(after.splitlines()) > len(before.splitlines())
    assert again.returncode == 0 and again.stdout.strip() == "Nothing yet." and "interrupted" not in again.stderr
    assert notifications(bodies_after) == [] and not any(INTERRUPTED in last_user_text(b) for b in bodies_after)


def test_off_leaves_it_interrupted_then_tasks_resume_by_hand(tmp_path: Path, repo: Path) -> None:
    agent_id, before = kill_during_agent(tmp_path, repo)
    with AnthropicTestServer({"turns": resumed_turns()}) as server:
        env = cli_env(tmp_path, server)
        done = catui(repo, env, "-p", "Anything new?")  # print mode: off by default
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Nothing yet."
        assert f"background agent {agent_id}" in done.stderr and "was interrupted" in done.stderr
        assert f"catui tasks resume {agent_id}" in done.stderr
        assert not any(INTERRUPTED in last_user_text(b) for b in server.bodies())
        row = StateDB(repo).get_task(agent_id)
        assert row is not None and row["status"] == "interrupted"
        listing = catui(repo, env, "tasks")
        assert "interrupted" in listing.stdout and "running" not in listing.stdout
        # Said once: the next run does not repeat it.
        quiet = catui(repo, env, "-p", "Anything new?")
        assert quiet.returncode == 0 and "was interrupted" not in quiet.stderr

        by_hand = catui(repo, env, "tasks", "resume", agent_id[:8])
        assert by_hand.returncode == 0, by_hand.stderr
        assert by_hand.stdout.strip() == "Job done after the crash."
        bodies = server.bodies()
        twice = catui(repo, env, "tasks", "resume", agent_id)
    assert [b for b in bodies if INTERRUPTED in last_user_text(b)] != []
    assert notifications(bodies) == []  # the notification went to this command, not to a model
    row = StateDB(repo).get_task(agent_id)
    assert row is not None and row["status"] == "completed"
    after = (repo / ".catui" / "tasks" / f"{agent_id}.output").read_bytes()
    assert after.startswith(before) and after.endswith(b"\n")
    assert twice.returncode == 1 and f"task {agent_id} is completed, not interrupted" in twice.stderr


def test_an_agent_whose_notification_was_posted_is_not_resumed(tmp_path: Path, repo: Path) -> None:
    agent_id, _before = kill_during_agent(tmp_path, repo)
    # As the dying process leaves it when it posted the notification just before the status was written.
    state = StateDB(repo)
    state.upsert_task(agent_id, meta={"notification_posted": True})
    state.close()
    set_mode(repo, "auto")
    with AnthropicTestServer({"turns": resumed_turns()}) as server:
        done = catui(repo, cli_env(tmp_path, server), "-p", "Anything new?")
        bodies = server.bodies()
    assert done.returncode == 0 and done.stdout.strip() == "Nothing yet.", done.stderr
    assert notifications(bodies) == [] and not any(INTERRUPTED in last_user_text(b) for b in bodies)
    row = StateDB(repo).get_task(agent_id)
    assert row is not None and row["status"] == "interrupted"


def test_a_bad_setting_is_a_one_line_warning_and_the_default_applies(tmp_path: Path, repo: Path) -> None:
    agent_id, _before = kill_during_agent(tmp_path, repo)
    set_mode(repo, "sometimes")
    with AnthropicTestServer({"turns": resumed_turns()}) as server:
        done = catui(repo, cli_env(tmp_path, server), "-p", "Anything new?")
        bodies = server.bodies()
    assert done.returncode == 0 and done.stdout.strip() == "Nothing yet.", done.stderr
    assert ("catui: warning: setting resumeInterruptedAgents='sometimes' is not one of auto, ask, off; fix it in "
            "your settings.json (using off meanwhile)") in done.stderr
    assert f"catui tasks resume {agent_id}" in done.stderr  # off: said, not resumed
    assert not any(INTERRUPTED in last_user_text(b) for b in bodies)


def test_ask_in_the_terminal_resumes_on_yes(tmp_path: Path, repo: Path) -> None:
    agent_id, _before = kill_during_agent(tmp_path, repo)
    with AnthropicTestServer({"turns": resumed_turns()}) as server:
        env = {**cli_env(tmp_path, server), "TERM": "xterm-256color"}
        term = PtyProcess([sys.executable, "-m", "catui"], cwd=repo, env=env)
        try:
            term.expect(rf"Background agent {agent_id} \(general-purpose: job toolu_crash\) was interrupted\. "
                        r"Resume it\? \[y/N\]")
            term.send("y\r")
            term.expect(f"resuming interrupted background agent {agent_id}")
            term.expect("Noted the job.")  # its notification became a turn of the interactive session
            term.send("\x04")
            term.wait_exit()
        finally:
            term.close()
        bodies = server.bodies()
    assert len(notifications(bodies)) == 1
    row = StateDB(repo).get_task(agent_id)
    assert row is not None and row["status"] == "completed"
