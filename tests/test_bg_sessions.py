"""Issue 31: whole sessions in the background (catui --bg, sessions, logs, stop, rm, respawn, attach) through the
real CLI against the loopback Anthropic server; crashes are real SIGKILLs."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import (
    GUARD_S,
    catui,
    kill_all,
    main_bodies,
    session_row,
    sessions_json,
    wait_for,
)
from tests.support.cli_env import cli_env, git_repo


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    folder = git_repo(tmp_path)
    yield folder
    kill_all(tmp_path / "catui-home")


def start(repo: Path, env: dict[str, str], prompt: str, *args: str) -> str:
    done = catui(repo, env, "--bg", prompt, *args)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("backgrounded · ")
    return first.split(" · ")[1]


def user_texts(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts.append(content if isinstance(content, str) else
                     "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict)))
    return "\n".join(parts)


def test_bg_runs_detached_lists_logs_stops_and_removes(tmp_path: Path, repo: Path) -> None:
    script = {"turns": [{"match": {"last_user_contains": "count"}, "content": text("one two three")}]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "count to three", "--name", "counter")
        assert len(session) == 8 and int(session, 16) >= 0
        row = wait_for("the turn to end", session_row(repo, env, session, status="idle", state="done"))
        assert row["name"] == "counter" and row["kind"] == "background" and row["cwd"] == str(repo)
        assert row["permissionMode"] == "default" and isinstance(row["pid"], int)
        # its own session and process group: it outlives the command that started it
        assert os.getsid(row["pid"]) == row["pid"] and os.getpgid(row["pid"]) == row["pid"]
        logs = catui(repo, env, "logs", "counter")
        assert logs.returncode == 0 and "> count to three" in logs.stdout and "one two three" in logs.stdout
        # a prefix of the id is accepted too
        assert catui(repo, env, "logs", session[:4]).stdout == logs.stdout

        stopped = catui(repo, env, "stop", session)
        assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped {session}"
        assert sessions_json(repo, env) == []
        (listed,) = sessions_json(repo, env, "--all")
        assert listed["state"] == "stopped" and "pid" not in listed and "status" not in listed

        removed = catui(repo, env, "rm", "counter")
        assert removed.returncode == 0 and removed.stdout.strip() == f"removed {session}"
        assert sessions_json(repo, env, "--all") == []


def test_unknown_session_is_one_line_and_exit_1(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer({"turns": []}) as server:
        env = cli_env(tmp_path, server)
        for command in ("logs", "stop", "rm", "respawn", "attach"):
            done = catui(repo, env, command, "nosuch")
            assert done.returncode == 1, command
            assert done.stderr == "No session matching 'nosuch'. Run 'catui sessions' to list running sessions.\n"
        conflict = catui(repo, env, "--bg", "hi", "-p")
        assert conflict.returncode == 1 and conflict.stderr.startswith("catui: --bg and --print conflict")
        assert catui(repo, env, "sessions", "--json").stdout.strip() == "[]"


def test_sigkilled_session_shows_stopped_and_respawn_resumes_it(tmp_path: Path, repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "remember"}, "content": text("noted: plum")},
        {"match": {"last_user_contains": "which fruit"}, "content": text("it was plum")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "remember the fruit plum")
        row = wait_for("the first turn", session_row(repo, env, session, state="done"))
        os.killpg(row["pid"], signal.SIGKILL)
        wait_for("the crash to show", session_row(repo, env, session, state="stopped"))
        attach = catui(repo, env, "attach", session)
        assert attach.returncode == 0 and "is not running" in attach.stdout
        # a message sent while it is down waits in its inbox (from Python, as the SDK sends it)
        monkeypatch.setenv("CATUI_HOME", env["CATUI_HOME"])
        import catui as sdk

        assert sdk.message_bg_session(session, "which fruit was it?")
        assert catui(repo, env, "rm", session).returncode == 1  # an unread message would be lost

        restarted = catui(repo, env, "respawn", session)
        assert restarted.returncode == 0 and restarted.stdout.strip() == f"restarted {session}"
        wait_for("the resumed turn", lambda: len(main_bodies(server)) >= 2 and
                 session_row(repo, env, session, state="done", status="idle")())
        resumed = main_bodies(server)[-1]
        assert "remember the fruit plum" in user_texts(resumed) and "noted: plum" in json.dumps(resumed)
        assert "which fruit was it?" in user_texts(resumed)
        assert "it was plum" in catui(repo, env, "logs", session).stdout


def test_blocked_on_permission_says_which_call_and_attach_answers(tmp_path: Path, repo: Path) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "write it"}, "content": [
            {"type": "tool_use", "id": "toolu_w", "name": "Write",
             "input": {"file_path": str(repo / "out.txt"), "content": "hello\n"}}]},
        {"match": {"last_is_tool_result": True}, "content": text("written")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "write it")
        row = wait_for("the permission request", session_row(repo, env, session, state="blocked"))
        assert row["needs"].startswith("permission for Write(") and "out.txt" in row["needs"]
        text_list = catui(repo, env, "sessions").stdout
        assert "blocked" in text_list and "permission for Write(" in text_list
        assert "Write(" in catui(repo, env, "logs", session).stdout
        assert not (repo / "out.txt").exists()

        attach = subprocess.Popen([sys.executable, "-m", "catui", "attach", session], cwd=repo, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert attach.stdin is not None
        attach.stdin.write("y\n")
        attach.stdin.flush()
        wait_for("the answered turn", session_row(repo, env, session, state="done"))
        attach.stdin.close()  # Ctrl-D: detach
        assert attach.stdout is not None
        out = attach.stdout.read()
        assert attach.wait(timeout=GUARD_S) == 0
        assert "[blocked] needs permission for Write(" in out and "[answered allow]" in out
        assert f"detached · {session} keeps running" in out
        assert (repo / "out.txt").read_text() == "hello\n"
        assert session_row(repo, env, session, status="idle")() is not None  # still running after detaching


def test_a_message_in_flight_survives_a_crash_and_python_drives_sessions(tmp_path: Path, repo: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "wait here"}, "content": text("ready")},
        {"match": {"last_user_contains": "slow job"}, "content": text("too late"), "delay_ms": 3000},
        {"match": {"last_user_contains": "slow job"}, "content": text("finished the slow job")},
    ]}
    with AnthropicTestServer(script) as server:
        for key, value in cli_env(tmp_path, server).items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(repo)
        import catui as sdk

        started = sdk.start_bg_session("wait here", name="py")
        session = started["id"]
        assert started["name"] == "py" and started["state"] == "working"
        wait_for("the first turn", lambda: sdk.get_bg_session("py").get("status") == "idle")
        assert [row["id"] for row in sdk.list_bg_sessions()] == [session]

        sdk.message_bg_session("py", "do the slow job")
        wait_for("the slow request", lambda: len(main_bodies(server)) >= 2)
        os.killpg(sdk.get_bg_session(session)["pid"], signal.SIGKILL)  # dies in the middle of the message's turn
        wait_for("the crash", lambda: sdk.get_bg_session(session)["state"] == "stopped")
        assert sdk.list_bg_sessions() == [] and len(sdk.list_bg_sessions(include_stopped=True)) == 1

        sdk.respawn_bg_session(session)
        wait_for("the message read again", lambda: "finished the slow job" in sdk.bg_session_logs(session))
        assert sum("do the slow job" in user_texts(b) for b in main_bodies(server)) == 2
        with pytest.raises(sdk.BackgroundSessionError, match="No session matching 'nope'"):
            sdk.stop_bg_session("nope")

        async def follow() -> list[str]:
            lines = []
            async for line in sdk.follow_bg_session("py"):
                lines.append(line)
                if line == "finished the slow job":
                    sdk.stop_bg_session("py")  # the iteration ends once the session is not running
            return lines

        followed = asyncio.run(follow())
        assert followed[0] == "> wait here" and "finished the slow job" in followed and followed[-1] == "[stopped]"
        assert sdk.get_bg_session("py")["state"] == "stopped"
        sdk.remove_bg_session("py")
        assert sdk.list_bg_sessions(include_stopped=True) == []


def read_until(fd: int, needle: str) -> str:
    """What the terminal showed until ``needle`` appeared."""
    seen = ""
    deadline = time.monotonic() + GUARD_S
    while needle not in seen:
        assert time.monotonic() < deadline, f"no {needle!r} in {seen!r}"
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            seen += os.read(fd, 4096).decode("utf-8", errors="replace")
    return seen


def test_attach_in_a_terminal_answers_and_ctrl_d_detaches(tmp_path: Path, repo: Path) -> None:
    import pty

    script = {"turns": [
        {"match": {"last_user_contains": "make it"}, "content": [
            {"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"match": {"last_is_tool_result": True}, "content": text("made")},
        {"match": {"last_user_contains": "typed here"}, "content": text("got your line")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "make it")
        wait_for("the permission request", session_row(repo, env, session, state="blocked"))
        controller, terminal = pty.openpty()
        attach = subprocess.Popen([sys.executable, "-m", "catui", "attach", session], cwd=repo, env=env,
                                  stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True)
        os.close(terminal)
        try:
            read_until(controller, "needs permission for Bash(")
            os.write(controller, b"y\n")
            read_until(controller, "made")
            os.write(controller, b"typed here\n")
            read_until(controller, "got your line")
            os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
            read_until(controller, "keeps running")
            assert attach.wait(timeout=GUARD_S) == 0
        finally:
            if attach.poll() is None:
                attach.kill()
            os.close(controller)
        assert (repo / "made.txt").exists()
        assert session_row(repo, env, session, status="idle")() is not None


def test_rm_removes_a_worktree_only_when_nothing_would_be_lost(tmp_path: Path, repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm",
                    "start"], check=True)
    script = {"turns": [
        {"match": {"last_user_contains": "look only"}, "content": text("looked")},
        {"match": {"last_user_contains": "change it"}, "content": [
            {"type": "tool_use", "id": "toolu_e", "name": "Bash", "input": {"command": "echo changed > main.py"}}]},
        {"match": {"last_is_tool_result": True}, "content": text("changed")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        clean = start(repo, env, "look only", "--worktree")
        row = wait_for("the clean turn", session_row(repo, env, clean, state="done"))
        clean_tree = Path(row["cwd"])
        assert clean_tree == repo / ".catui" / "worktrees" / f"bg-{clean}" and (clean_tree / "main.py").exists()
        assert catui(repo, env, "rm", clean).returncode == 0
        assert not clean_tree.exists()

        changing = start(repo, env, "change it", "--worktree", "--permission-mode", "bypassPermissions")
        tree = repo / ".catui" / "worktrees" / f"bg-{changing}"
        wait_for("the change", lambda: (tree / "main.py").read_text() == "changed\n")
        wait_for("the turn", session_row(repo, env, changing, state="done"))
        refused = catui(repo, env, "rm", changing)
        assert refused.returncode == 1 and "holds changes" in refused.stderr and "--force" in refused.stderr
        assert (tree / "main.py").read_text() == "changed\n"
        assert session_row(repo, env, changing, state="stopped")() is not None
        assert catui(repo, env, "rm", changing, "--force").returncode == 0
        assert not tree.exists() and sessions_json(repo, env, "--all") == []


def test_a_failed_turn_is_logged_and_the_session_stays(tmp_path: Path, repo: Path) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "break it"},
         "error": {"status": 400, "type": "invalid_request_error", "message": "this prompt is refused"}},
        {"match": {"last_user_contains": "try again"}, "content": text("worked this time")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "break it")
        wait_for("the failed turn", lambda: "[error]" in catui(repo, env, "logs", session).stdout)
        # an API error blocks it, as Claude Code's sessions are, saying where to look
        row = wait_for("idle again", session_row(repo, env, session, status="idle", state="blocked"))
        assert row["needs"] == f"API error — see catui logs {session}"
        assert "this prompt is refused" in catui(repo, env, "logs", session).stdout
        attach = subprocess.run([sys.executable, "-m", "catui", "attach", session], cwd=repo, env=env,
                                input="try again\n", capture_output=True, text=True, timeout=GUARD_S)
        assert attach.returncode == 0
        wait_for("the next turn", lambda: "worked this time" in catui(repo, env, "logs", session).stdout)
        wait_for("unblocked", session_row(repo, env, session, status="idle", state="done"))
