"""Helpers of the background-session tests: run ``catui`` subcommands, wait for a state, kill what was started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_env import git_repo, run_catui

GUARD_S = 30.0  # a broken scenario fails here instead of hanging (not a timing assertion)


def catui(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_catui(cwd, env, *args, timeout=GUARD_S)


def sessions_json(cwd: Path, env: dict[str, str], *extra: str) -> list[dict[str, Any]]:
    done = catui(cwd, env, "sessions", "--json", *extra)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def session_row(cwd: Path, env: dict[str, str], session: str, **want: Any) -> Callable[[], dict[str, Any] | None]:
    """A check for :func:`wait_for`: the row of ``session`` once every ``want`` field has that value."""
    def check() -> dict[str, Any] | None:
        for row in sessions_json(cwd, env, "--all"):
            if row["id"] == session and all(row.get(k) == v for k, v in want.items()):
                return row
        return None
    return check


def kill_all(catui_home: Path) -> None:
    """SIGKILL the process group of every background session registered under ``catui_home``."""
    for entry in (catui_home / "bg").glob("*/session.json"):
        try:
            pid = json.loads(entry.read_text(encoding="utf-8")).get("pid")
        except (OSError, ValueError):
            continue
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def is_side_request(body: dict[str, Any]) -> bool:
    """A background session's classifier or namer request (catui.bgsessions.side_requests), not a turn's."""
    from catui.bgsessions.classify import SIDE_REQUEST_SYSTEMS

    system = json.dumps(body.get("system", ""))
    return any(marker in system for marker in SIDE_REQUEST_SYSTEMS)


def main_bodies(server: Any) -> list[dict[str, Any]]:
    """The request bodies of the sessions' turns, without the side requests made after each."""
    return [body for body in server.bodies() if not is_side_request(body)]


@pytest.fixture(name="repo")
def bg_repo(tmp_path: Path) -> Iterator[Path]:
    """A git repository whose background sessions are killed when the test ends."""
    folder = git_repo(tmp_path)
    yield folder
    kill_all(tmp_path / "catui-home")


def start(repo: Path, env: dict[str, str], prompt: str, *args: str) -> str:
    """Start ``catui --bg prompt args…`` in ``repo``; the new session's id."""
    done = catui(repo, env, "--bg", prompt, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0].split(" · ")[1]
