"""claude-agent-sdk's ``fork_session`` on catui's transcripts: a session copied under a new id.

Every line that carries a ``uuid`` (messages, compaction boundaries) is copied with a fresh uuid and
its ``parentUuid`` / ``logicalParentUuid`` remapped, so the copy's chain is whole and independent of
the original; titles and tags are not copied (the copy gets its own title). ``up_to_message_id``
cuts the copy after that message. File checkpoints are not copied: a fork starts with none.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.sdk.sessions import existing_session_path
from catui.session.store import first_prompt, last_field, read_records


@dataclass
class ForkSessionResult:
    """What :func:`fork_session` made: the new session's id."""

    session_id: str


def fork_session(
    session_id: str, directory: str | None = None, up_to_message_id: str | None = None, title: str | None = None,
) -> ForkSessionResult:
    """Copy session ``session_id`` to a new session (fresh uuids), up to ``up_to_message_id`` when given.

    ``title`` names the copy; without it, the original's title (or its first prompt) plus " (fork)".
    Raises ValueError for a bad id, a session without messages or a message id it does not hold,
    and FileNotFoundError when there is no such session.
    """
    source = existing_session_path(session_id, directory)
    records = read_records(source).records
    messages = [record for record in records if isinstance(record.get("uuid"), str)]
    if up_to_message_id is not None:
        ids = [record["uuid"] for record in messages]
        if up_to_message_id not in ids:
            raise ValueError(f"message {up_to_message_id!r} is not in session {session_id}")
        messages = messages[: ids.index(up_to_message_id) + 1]
    if not messages:
        raise ValueError(f"Session {session_id} has no messages to fork")
    new_id = str(uuid.uuid4())
    renamed: dict[str, str] = {}
    lines: list[dict[str, Any]] = []
    for record in messages:
        copy = dict(record)
        copy["uuid"] = renamed[record["uuid"]] = str(uuid.uuid4())
        for link in ("parentUuid", "logicalParentUuid"):
            if link in copy:
                copy[link] = renamed.get(copy[link]) if copy[link] is not None else None
        if "sessionId" in copy:
            copy["sessionId"] = new_id
        lines.append(copy)
    name = (title or "").strip() or f"{last_field(records, 'customTitle') or first_prompt(records) or session_id} (fork)"
    lines.append({"type": "custom-title", "customTitle": name, "sessionId": new_id})
    _write_new(source.with_name(f"{new_id}.jsonl"), lines)
    return ForkSessionResult(session_id=new_id)


def _write_new(path: Path, lines: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
