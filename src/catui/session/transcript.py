"""Append-only JSONL transcripts, one line per message, flushed as each is written.

The line shape is Claude Code's: ``{parentUuid, isSidechain, agentId?, type,
message, uuid, timestamp, cwd, sessionId, version, gitBranch}``. A background
agent's output file is written by the same writer as a second sink.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catui import __version__
from catui.messages import Message


class TranscriptWriter:
    """Writes each message to every sink path as one JSON line, fsync-free but flushed per line."""

    def __init__(self, paths: list[Path], *, session_id: str, cwd: Path, agent_id: str | None = None,
                 git_branch: str | None = None, on_created: Callable[[Path], None] | None = None,
                 on_line: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.paths = list(paths)
        self.on_line = on_line
        """Called with each record after it is written (``--session-mirror``: the driver's session store)."""
        self.on_created = on_created
        """Called once with the first path after the first line is written there (the file exists from then)."""
        self.session_id = session_id
        self.cwd = cwd
        self.agent_id = agent_id
        self.git_branch = git_branch or ""
        self.last_uuid: str | None = None
        for path in self.paths:
            path.parent.mkdir(parents=True, exist_ok=True)

    def add_sink(self, path: Path) -> None:
        """Also write future lines to ``path`` (created now, even if nothing follows)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        self.paths.append(path)

    def append(self, message: Message, *, extra: dict[str, Any] | None = None) -> str:
        """Append a message; returns the uuid given to its line."""
        return self._write({"parentUuid": self.last_uuid}, message.get("role", "user"), {"message": message},
                           extra)

    def append_system(self, subtype: str, content: str, fields: dict[str, Any]) -> str:
        """Append a non-message ``system`` line (a compaction boundary); it starts a new parentUuid chain."""
        return self._write({"parentUuid": None, "logicalParentUuid": self.last_uuid}, "system",
                           {"subtype": subtype, "content": content}, fields)

    def _write(self, chain: dict[str, Any], line_type: str, body: dict[str, Any],
               extra: dict[str, Any] | None) -> str:
        line_uuid = str(uuid.uuid4())
        record: dict[str, Any] = {**chain, "isSidechain": self.agent_id is not None}
        if self.agent_id is not None:
            record["agentId"] = self.agent_id
        record.update(
            {
                "type": line_type,
                **body,
                "uuid": line_uuid,
                "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                "cwd": str(self.cwd),
                "sessionId": self.session_id,
                "version": __version__,
                "gitBranch": self.git_branch,
            }
        )
        if extra:
            record.update(extra)
        # default=str: a tool's structured result (toolUseResult) may hold a Path or another plain value
        data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        for path in self.paths:
            # One write() of a whole line with O_APPEND: a reader never sees half a line from a crash
            # between lines, and concurrent readers see complete lines.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        if self.on_created is not None and self.paths:
            created, self.on_created = self.on_created, None
            created(self.paths[0])
        if self.on_line is not None:
            self.on_line(record)
        self.last_uuid = line_uuid
        return line_uuid


def read_transcript(path: Path) -> list[Message]:
    """The messages of a transcript file from its last compaction on, skipping a torn last line."""
    messages: list[Message] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return messages
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if is_compact_boundary(record):
            messages.clear()  # what came before lives on in the summary line that follows
            continue
        message = record.get("message")
        if isinstance(message, dict):
            messages.append(message)
    return messages


COMPACT_BOUNDARY = "compact_boundary"


def is_compact_boundary(record: dict[str, Any]) -> bool:
    """Whether a transcript line marks a compaction: the conversation goes on from the lines after it."""
    return record.get("type") == "system" and record.get("subtype") == COMPACT_BOUNDARY
