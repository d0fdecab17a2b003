"""Issue 31 under attack: bad ids and names, ``rm`` racing ``respawn`` from two terminals, and a full disk under the
registry (a small tmpfs as the catui home) — one-line errors, no stray workers, no lost or half-written messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import (  # noqa: F401 - bg_repo: the repo fixture
    GUARD_S,
    bg_repo,
    catui,
    kill_all,
    session_row,
    sessions_json,
    start,
    wait_for,
)
from tests.support.cli_env import cli_env

WAIT = {"turns": [{"match": {"last_user_contains": "wait here"}, "content": [{"type": "text", "text": "ready"}],
                   "repeat": True},
                  {"match": {"last_user_contains": "hello"}, "content": [{"type": "text", "text": "hi back"}]}]}


def workers_of(session: str) -> list[int]:
    """Pids of running worker processes of ``session`` (from /proc, not from the registry)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"catui.bgsessions.worker" in command and session.encode() in command and state != "Z":
            found.append(int(pid))
    return found


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_bad_ids_and_names_are_one_line_errors(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer(WAIT) as server:
        env = cli_env(tmp_path, server)
        session = start(repo, env, "wait here", "--name", "keeper")
        wait_for("idle", session_row(repo, env, session, status="idle"))
        for ref in ("", "../..", "keeper/../x", "a b", session + "0"):
            assert one_line_error(catui(repo, env, "logs", ref)) == (
                f"No session matching '{ref.strip()}'. Run 'catui sessions' to list running sessions.")
        taken = one_line_error(catui(repo, env, "--bg", "other", "--name", "keeper"))
        assert taken == (f"catui: --name 'keeper' is taken by the running session {session}; give another name "
                         f"(or stop that one: catui stop {session}).")
        for bad in ("", "two\nlines", "bell\x07"):
            line = one_line_error(catui(repo, env, "--bg", "other", "--name", bad))
            assert line.startswith(f"catui: --name {bad!r}: a name is one line of visible text")
        assert [r["id"] for r in sessions_json(repo, env, "--all")] == [session]


def test_rm_racing_respawn_leaves_no_worker_and_no_folder(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer(WAIT) as server:
        env = cli_env(tmp_path, server)
        for round_number in range(3):
            session = start(repo, env, "wait here", "--name", f"racer-{round_number}")
            wait_for("idle", session_row(repo, env, session, status="idle"))
            racers = [subprocess.Popen([sys.executable, "-m", "catui", command, session], cwd=repo, env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                      for command in ("respawn", "rm")]
            outputs = [racer.communicate(timeout=GUARD_S) for racer in racers]
            (respawned, removed) = ((racer.returncode, out, err) for racer, (out, err) in zip(racers, outputs,
                                                                                              strict=True))
            assert removed[:2] == (0, f"removed {session}\n"), removed
            # respawn ran first (then rm stopped what it started) or found the session gone: either way one line
            assert respawned[:2] == (0, f"restarted {session}\n") or (
                respawned[0] == 1 and len(respawned[2].strip().splitlines()) == 1
                and ("removed meanwhile" in respawned[2] or "No session matching" in respawned[2])), respawned
            assert workers_of(session) == []
            assert not (Path(env["CATUI_HOME"]) / "bg" / session).exists()
        assert sessions_json(repo, env, "--all") == []


def test_a_full_disk_under_the_registry_is_a_one_line_error_and_loses_no_message(tmp_path: Path, repo: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    from tests.support.small_disk import fill, small_tmpfs

    with AnthropicTestServer(WAIT) as server, small_tmpfs(tmp_path / "catui-home", 4 * 1024 * 1024) as home:
        env = cli_env(tmp_path, server)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        import catui as sdk

        keeper = start(repo, env, "wait here", "--name", "keeper")
        wait_for("idle", session_row(repo, env, keeper, status="idle"))
        filler = fill(home, 0)

        refused = one_line_error(catui(repo, env, "--bg", "another one"))
        assert "No space left on device" in refused and "CATUI_HOME" in refused
        assert [r["id"] for r in sessions_json(repo, env, "--all")] == [keeper]  # no half-registered session
        assert sorted(p.name for p in (home / "bg").iterdir() if not p.name.startswith(".")) == [keeper]

        with pytest.raises(sdk.BackgroundSessionError, match="No space left on device; it was not sent"):
            sdk.message_bg_session("keeper", "hello from python")
        typed = subprocess.run([sys.executable, "-m", "catui", "attach", "keeper"], cwd=repo, env=env,
                               input="hello from the terminal\n", capture_output=True, text=True, timeout=GUARD_S)
        assert typed.returncode == 0 and "[not sent: writing to" in typed.stdout and "Traceback" not in typed.stderr
        inbox = home / "bg" / keeper / "inbox"
        assert not inbox.exists() or list(inbox.iterdir()) == []  # nothing half-written
        assert session_row(repo, env, keeper, status="idle")() is not None  # it survived the full disk

        filler.unlink()  # space again: the next message goes through and is answered
        sdk.message_bg_session("keeper", "hello again")
        wait_for("the answer", lambda: "hi back" in sdk.bg_session_logs("keeper"))
        sdk.stop_bg_session("keeper")
