"""Start, stop, remove and respawn background sessions (the commands and the SDK both call these)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from catui.bgsessions.locks import session_lock
from catui.bgsessions.registry import (
    SessionEntry,
    entry_path,
    now_ms,
    process_start,
    read_entry,
    registry_dir,
    write_entry,
)

T = TypeVar("T")

STOP_GRACE_S = 5.0
"""How long ``stop`` waits for a session to end on SIGTERM before it sends SIGKILL."""


class SessionError(RuntimeError):
    """A background-session operation that cannot be done; the message is one line for the user."""


def spawn(entry: SessionEntry, *, fresh: bool = False) -> SessionEntry:
    """Run ``entry``'s worker detached: its own session and process group, output appended to its log.

    The entry is written before the process starts, so a full disk is an error here and never a worker nobody can
    list or stop (a ``fresh`` session's folder is then removed again)."""
    import shutil
    import subprocess  # lazy, as the other heavy imports here: `catui stop` needs none of them

    folder = entry.folder
    entry.pid, entry.pid_start, entry.status, entry.state, entry.needs = None, None, "busy", "working", None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_entry(entry)
        log = open(folder / "log.txt", "ab")  # noqa: SIM115 (closed right after the child has it)
    except OSError as exc:
        if fresh:
            shutil.rmtree(folder, ignore_errors=True)
        raise SessionError(f"cannot write background session {entry.id} to {folder}: {exc.strerror}; free space "
                           "there (or point CATUI_HOME elsewhere) and try again.") from None
    with log:
        child = subprocess.Popen(
            [sys.executable, "-m", "catui.bgsessions.worker", entry.id], cwd=entry.cwd, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    # Written here too, so the session is listed (and stoppable) before the worker has started Python.
    entry.pid, entry.pid_start = child.pid, process_start(child.pid)
    try:
        write_entry(entry)
    except OSError as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise SessionError(f"cannot write background session {entry.id} to {folder}: {exc.strerror}; free space "
                           "there (or point CATUI_HOME elsewhere) and try again.") from None
    return entry


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code, also when the caller is inside an event loop."""
    # lazy: asyncio costs ~25 ms, and `catui sessions`/`stop` never need it (only --worktree does)
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    box: dict[str, Any] = {}

    def in_thread() -> None:
        try:
            box["value"] = asyncio.run(work)
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def start(prompt: str, *, cwd: str | Path | None = None, permission_mode: str = "default", name: str | None = None,
          options: dict[str, Any] | None = None, worktree: bool = False) -> SessionEntry:
    """Start a background session on ``prompt``; returns its entry (``entry.id`` is what the commands take).

    ``worktree``: the session works in a new git worktree of the project (``.catui/worktrees/bg-<id>``, branch
    ``worktree-bg-<id>``), which ``remove`` deletes only when nothing in it would be lost.
    """
    import uuid

    from catui.bgsessions.classify import prompt_name
    from catui.bgsessions.registry import all_entries

    folder = Path(cwd or os.getcwd()).resolve()
    if not folder.is_dir():
        raise SessionError(f"--bg: the folder {folder} does not exist.")
    if name is not None:
        if not name.strip() or any(ord(c) < 32 or c == "\x7f" for c in name):
            raise SessionError(f"--name {name!r}: a name is one line of visible text; give another.")
        taken = [e for e in all_entries() if e.name == name and e.is_alive()]
        if taken:
            raise SessionError(f"--name {name!r} is taken by the running session {taken[0].id}; give another name "
                               f"(or stop that one: catui stop {taken[0].id}).")
    session_id = str(uuid.uuid4())
    entry = SessionEntry(id=session_id.replace("-", "")[:8], session_id=session_id,
                         name=name or prompt_name(prompt), name_source="user" if name else "prompt", cwd=str(folder),
                         permission_mode=permission_mode, started_at=now_ms(), prompt=prompt,
                         options={k: v for k, v in (options or {}).items() if v not in (None, [], ())})
    if worktree:
        from catui.paths import find_project_root
        from catui.worktree.create import create_worktree
        from catui.worktree.model import WorktreeError

        try:
            info = run_sync(create_worktree(f"bg-{entry.id}", repo_root=find_project_root(folder),
                                            session_id=session_id, slug=f"bg-{entry.id}"))
        except WorktreeError as exc:
            raise SessionError(f"--worktree: {exc}") from None
        entry.worktree = json.dumps({"path": str(info.path), "branch": info.branch, "head_commit": info.head_commit,
                                     "git_root": str(info.git_root) if info.git_root else None})
        entry.cwd = str(info.path)
    return spawn(entry, fresh=True)


def stop(entry: SessionEntry) -> SessionEntry:
    """End the session's process (SIGTERM to its process group, SIGKILL after a grace period); it is ``stopped``."""
    with session_lock(entry.id):
        return _stop(current(entry))


def current(entry: SessionEntry) -> SessionEntry:
    """The entry as it is on disk now (taken under the session's lock); SessionError when it was removed."""
    found = read_entry(entry_path(entry.id))
    if found is None:
        raise SessionError(f"{entry.id} was removed meanwhile (by another catui rm).")
    return found


def _stop(entry: SessionEntry) -> SessionEntry:
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
    try:
        write_entry(entry)
    except OSError:
        pass  # a full disk: the entry still names the dead process, which lists as stopped all the same
    return entry


def unread(entry: SessionEntry) -> int:
    """Messages in its inbox or held that the session has not read yet."""
    from catui.bgsessions import inbox  # lazy: `catui stop` never reads an inbox

    return len(inbox.pending(entry.folder)) + len(inbox.pending(entry.folder, "held"))


def remove(entry: SessionEntry, *, force: bool = False) -> None:
    """Stop the session and delete its folder and its worktree.

    Refused, unless ``force``, while messages to it are unread or its worktree holds changes or commits (the
    session is then stopped and kept, with its worktree).
    """
    import shutil

    with session_lock(entry.id):
        entry = current(entry)
        waiting = unread(entry)
        if waiting and not force:
            raise SessionError(f"{entry.id} has {waiting} unread message(s); respawn it to read them, or pass "
                               "--force to remove it anyway.")
        _stop(entry)
        if entry.worktree:
            _remove_worktree(entry, force=force)
        shutil.rmtree(entry.folder, ignore_errors=True)
        (registry_dir() / ".locks" / f"{entry.id}.lock").unlink(missing_ok=True)


def _remove_worktree(entry: SessionEntry, *, force: bool) -> None:
    from catui.worktree.cleanup import cleanup_worktree, remove_worktree
    from catui.worktree.model import WorktreeInfo

    raw = json.loads(entry.worktree or "{}")
    info = WorktreeInfo(agent_id=f"bg-{entry.id}", path=Path(raw["path"]), branch=raw.get("branch"),
                        head_commit=raw.get("head_commit"),
                        git_root=Path(raw["git_root"]) if raw.get("git_root") else None, session_id=entry.session_id)
    if force:
        run_sync(remove_worktree(info))
    elif not run_sync(cleanup_worktree(info)):
        raise SessionError(f"{entry.id} is stopped, but its worktree {info.path} holds changes (branch "
                           f"{info.branch}); merge or copy them, or pass --force to remove it anyway.")


def respawn(entry: SessionEntry) -> SessionEntry:
    """Start the session again, resuming from its transcript (a live one is stopped first)."""
    with session_lock(entry.id):
        entry = current(entry)
        if entry.is_alive():
            _stop(entry)
        return spawn(entry)
