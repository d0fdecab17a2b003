"""A background session's pending permission request and its answer, as two files in the session folder.

The worker writes ``permission.json`` (``request_id``, ``tool_name``, ``input``, ``context``: what ``can_use_tool``
is told) and waits for ``answer.json``. Whoever answers (``catui attach``, :func:`catui.answer_bg_session`, an
attached :class:`catui.CatuiClient`'s ``can_use_tool``) writes the answer with that ``request_id``; an answer to an
earlier request (two answerers racing, an answer written after the session moved on) is ignored. Both files are
written to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

REQUEST = "permission.json"
ANSWER = "answer.json"


def _write(path: Path, body: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def post_request(folder: Path, request: dict[str, Any]) -> None:
    (folder / ANSWER).unlink(missing_ok=True)  # a late answer to an earlier request answers nothing
    _write(folder / REQUEST, request)


def pending_request(folder: Path) -> dict[str, Any] | None:
    """The request the session waits on, or None."""
    return _read(folder / REQUEST)


def answer(folder: Path, request_id: str | None, *, allow: bool, **details: Any) -> None:
    """Answer request ``request_id`` (None: whichever is pending). ``details``: ``message``, ``interrupt`` (a
    denial), ``updated_input``, ``updated_permissions`` (an approval; permission updates as wire dicts)."""
    _write(folder / ANSWER, {"request_id": request_id, "allow": allow, **details})


def take_answer(folder: Path, request_id: str) -> dict[str, Any] | None:
    """The answer to ``request_id`` once it is there (then both files are removed); other answers are dropped."""
    found = _read(folder / ANSWER)
    if found is None:
        return None
    (folder / ANSWER).unlink(missing_ok=True)
    if found.get("request_id") not in (None, request_id):
        return None
    (folder / REQUEST).unlink(missing_ok=True)
    return found
