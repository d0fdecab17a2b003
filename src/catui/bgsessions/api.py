"""Background sessions from Python: start, list, read the logs of, message, answer, stop, remove, respawn.

Re-exported from :mod:`catui`::

    import catui

    session = catui.start_bg_session("Fix the failing test", cwd="/path/to/repo", name="fixer")
    catui.message_bg_session("fixer", "Also update the changelog.")
    print(catui.bg_session_logs("fixer"))
    catui.stop_bg_session("fixer")

A session is named by its name, its id (8 hex digits), its session id or a unique id prefix, as on the
command line. Every error is a :class:`BackgroundSessionError` (a :class:`catui.CatuiError`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from catui.bgsessions import asking, inbox, launch
from catui.bgsessions.registry import SessionEntry, UnknownSession, all_entries, resolve
from catui.errors import CatuiError


class BackgroundSessionError(CatuiError):
    """No such background session, or the operation cannot be done (the message says why)."""


def _find(ref: str) -> SessionEntry:
    try:
        return resolve(ref)
    except UnknownSession as exc:
        raise BackgroundSessionError(str(exc)) from None


def start_bg_session(prompt: str, *, cwd: str | Path | None = None, name: str | None = None,
                     permission_mode: str = "default", model: str | None = None,
                     allowed_tools: list[str] | None = None, disallowed_tools: list[str] | None = None,
                     append_system_prompt: str | None = None, max_turns: int | None = None,
                     worktree: bool = False) -> dict[str, Any]:
    """Start a detached session on ``prompt`` (as ``catui --bg``); its row as ``list_bg_sessions`` gives it.

    ``worktree``: it works in a new git worktree of the project, removed with it only when unchanged."""
    try:
        entry = launch.start(prompt, cwd=cwd, permission_mode=permission_mode, name=name, options={
            "model": model, "allowed_tools": allowed_tools or [], "disallowed_tools": disallowed_tools or [],
            "append_system_prompt": append_system_prompt, "max_turns": max_turns}, worktree=worktree)
    except launch.SessionError as exc:
        raise BackgroundSessionError(str(exc)) from None
    return entry.public()


def list_bg_sessions(*, include_stopped: bool = False) -> list[dict[str, Any]]:
    """The sessions ``catui sessions --json`` lists (``include_stopped``: as with ``--all``)."""
    rows = [e.public() for e in all_entries()]
    return rows if include_stopped else [r for r in rows if r["state"] != "stopped"]


def get_bg_session(ref: str) -> dict[str, Any]:
    return _find(ref).public()


def bg_session_logs(ref: str) -> str:
    """Everything the session has logged so far."""
    path = _find(ref).folder / "log.txt"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


async def follow_bg_session(ref: str, *, poll_s: float = 0.05) -> AsyncIterator[str]:
    """The session's log lines, from the start and then as they are written, until the session is not running.

    The live view ``catui attach`` shows, for a program; send to it with :func:`message_bg_session` and answer
    it with :func:`answer_bg_session`.
    """
    import asyncio

    entry = _find(ref)
    path = entry.folder / "log.txt"
    offset, partial = 0, b""
    while True:
        alive = entry.is_alive()  # before reading: what was written before it died is still read
        try:
            with open(path, "rb") as log:
                log.seek(offset)
                chunk = log.read()
        except OSError:
            chunk = b""
        offset += len(chunk)
        partial += chunk
        *lines, partial = partial.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", errors="replace")
        if not alive:
            return
        await asyncio.sleep(poll_s)


def message_bg_session(ref: str, text: str) -> str:
    """Send ``text`` to the session as a user turn (it waits in the inbox while the session is busy or stopped);
    returns the message id once the message is on disk."""
    message = inbox.new_message("user", text)
    entry = _find(ref)
    try:
        inbox.post(entry.folder, message)
    except OSError as exc:
        raise BackgroundSessionError(f"could not write the message to {entry.id}'s inbox ({entry.folder / 'inbox'}): "
                                     f"{exc.strerror}; it was not sent.") from None
    return message.msg_id


def answer_bg_session(ref: str, *, allow: bool) -> None:
    """Answer the permission request a ``blocked`` session waits on."""
    entry = _find(ref)
    if entry.shown().state != "blocked" or not (entry.needs or "").startswith("permission"):
        raise BackgroundSessionError(f"{entry.id} is not waiting for a permission answer.")
    request = asking.pending_request(entry.folder)
    asking.answer(entry.folder, str(request["request_id"]) if request else None, allow=allow)


def stop_bg_session(ref: str) -> dict[str, Any]:
    try:
        return launch.stop(_find(ref)).public()
    except launch.SessionError as exc:
        raise BackgroundSessionError(str(exc)) from None


def remove_bg_session(ref: str, *, force: bool = False) -> None:
    try:
        launch.remove(_find(ref), force=force)
    except launch.SessionError as exc:
        raise BackgroundSessionError(str(exc)) from None


def respawn_bg_session(ref: str) -> dict[str, Any]:
    """Start a stopped session again, resuming from its transcript."""
    try:
        return launch.respawn(_find(ref)).public()
    except launch.SessionError as exc:
        raise BackgroundSessionError(str(exc)) from None
