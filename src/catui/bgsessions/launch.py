"""Start, stop, remove and respawn background sessions (the commands and the SDK both call these)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from catui.bgsessions import inbox
from catui.bgsessions.registry import SessionEntry, now_ms, process_start, write_entry

STOP_GRACE_S = 5.0
"""How long ``stop`` waits for a session to end on SIGTERM before it sends SIGKILL."""


class SessionError(RuntimeError):
    """A background-session operation that cannot be done; the message is one line for the user."""


def default_name(cwd: Path, session_id: str) -> str:
    """The folder's name and two hex digits of the session id (Claude Code's print-mode names look so)."""
    return f"{cwd.name or 'session'}-{hashlib.sha256(session_id.encode()).hexdigest()[:2]}"


def spawn(entry: SessionEntry) -> SessionEntry:
    """Run ``entry``'s worker detached: its own session and process group, output appended to its log."""
    folder = entry.folder
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "log.txt", "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "catui.bgsessions.worker", entry.id], cwd=entry.cwd, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    # Written here too, so the session is listed (and stoppable) before the worker has started Python.
    entry.pid, entry.pid_start = child.pid, process_start(child.pid)
    entry.status, entry.state, entry.needs = "busy", "working", None
    write_entry(entry)
    return entry


def start(prompt: str, *, cwd: str | Path | None = None, permission_mode: str = "default", name: str | None = None,
          options: dict[str, Any] | None = None) -> SessionEntry:
    """Start a background session on ``prompt``; returns its entry (``entry.id`` is what the commands take)."""
    folder = Path(cwd or os.getcwd()).resolve()
    if not folder.is_dir():
        raise SessionError(f"--bg: the folder {folder} does not exist.")
    session_id = str(uuid.uuid4())
    entry = SessionEntry(id=session_id.replace("-", "")[:8], session_id=session_id,
                         name=name or default_name(folder, session_id), cwd=str(folder),
                         permission_mode=permission_mode, started_at=now_ms(), prompt=prompt,
                         options={k: v for k, v in (options or {}).items() if v not in (None, [], ())})
    return spawn(entry)


def stop(entry: SessionEntry) -> SessionEntry:
    """End the session's process (SIGTERM to its process group, SIGKILL after a grace period); it is ``stopped``."""
    if entry.is_alive() and entry.pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(entry.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while entry.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if entry.is_alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(entry.pid, signal.SIGKILL)
            while entry.is_alive():
                time.sleep(0.02)
    entry.pid, entry.pid_start, entry.status, entry.state, entry.needs = None, None, "", "stopped", None
    write_entry(entry)
    return entry


def unread(entry: SessionEntry) -> int:
    """Messages in its inbox or held that the session has not read yet."""
    return len(inbox.pending(entry.folder)) + len(inbox.pending(entry.folder, "held"))


def remove(entry: SessionEntry, *, force: bool = False) -> None:
    """Stop the session and delete its folder; refused while messages to it are unread, unless ``force``."""
    waiting = unread(entry)
    if waiting and not force:
        raise SessionError(f"{entry.id} has {waiting} unread message(s); respawn it to read them, or pass --force "
                           "to remove it anyway.")
    stop(entry)
    shutil.rmtree(entry.folder, ignore_errors=True)


def respawn(entry: SessionEntry) -> SessionEntry:
    """Start the session again, resuming from its transcript (a live one is stopped first)."""
    if entry.is_alive():
        stop(entry)
    return spawn(entry)

