"""Append-only JSONL transcripts, one line per message, flushed as each is written.

The line shape is Claude Code's: ``{parentUuid, isSidechain, agentId?, type,
message, uuid, timestamp, cwd, sessionId, version, gitBranch}``. A background
agent's output file is written by the same writer as a second sink.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catui import __version__
from catui.errors import CatuiError
from catui.messages import Message
from catui.session.durable_append import append_whole


class TranscriptWriteError(CatuiError):
    """A transcript line could not be saved (a full disk, a read-only folder).

    The lines that failed wait in the writer and are written, in order, before
    the next line once the disk takes them again; the message says what to do.
    """


class TranscriptWriter:
    """Writes each message to every sink path as one JSON line, whole or not at all (see durable_append).

    A line that cannot be written raises :class:`TranscriptWriteError`; it is kept
    and written before the next one, so the file never misses a line in the
    middle. Lines are flushed to the kernel as written; compactions and forks
    (which a resume depends on) are also fsynced.
    """

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
        self._pending: dict[Path, bytes] = {}
        self._checked: set[Path] = set()
        for path in self.paths:
            _make_folder(path.parent)

    @property
    def unsaved_paths(self) -> list[Path]:
        """The sinks that still hold lines in memory that could not be written."""
        return [path for path, data in self._pending.items() if data]

    def add_sink(self, path: Path) -> None:
        """Also write future lines to ``path`` (created now, even if nothing follows)."""
        _make_folder(path.parent)
        path.touch(exist_ok=True)
        self.paths.append(path)

    def append(self, message: Message, *, extra: dict[str, Any] | None = None) -> str:
        """Append a message; returns the uuid given to its line."""
        line_uuid, record = self._record({"parentUuid": self.last_uuid}, message.get("role", "user"),
                                         {"message": message}, extra)
        self._commit([record])
        return line_uuid

    def append_messages(self, messages: list[Message], *, extra: dict[str, Any] | None = None) -> list[str]:
        """Append several messages in one write (all of them or none), fsynced: a fork's copied history."""
        records = []
        uuids = []
        for message in messages:
            line_uuid, record = self._record({"parentUuid": self.last_uuid}, message.get("role", "user"),
                                             {"message": message}, extra)
            records.append(record)
            uuids.append(line_uuid)
        if records:
            self._commit(records, sync=True)
        return uuids

    def append_system(self, subtype: str, content: str, fields: dict[str, Any]) -> str:
        """Append a non-message ``system`` line (a compaction boundary); it starts a new parentUuid chain."""
        line_uuid, record = self._record({"parentUuid": None, "logicalParentUuid": self.last_uuid}, "system",
                                         {"subtype": subtype, "content": content}, fields)
        self._commit([record])
        return line_uuid

    def append_compaction(self, metadata: dict[str, Any], summary: Message, kept: list[Message]) -> None:
        """The boundary, the summary and the kept messages in one write, fsynced.

        A resume reads from the last boundary on; a boundary without its summary
        after it would resume from nothing, so the three go to the disk together.
        One ``write()`` can still be cut short by ``kill -9`` (the kernel stops
        copying at a fatal signal), so the boundary says how many lines belong to
        it (``compactLines``) and each of them names it (``compactBatch``): a reader
        ignores a batch that did not reach the disk whole (:func:`torn_compactions`).
        """
        boundary_uuid, boundary = self._record(
            {"parentUuid": None, "logicalParentUuid": self.last_uuid}, "system",
            {"subtype": COMPACT_BOUNDARY, "content": "Conversation compacted"},
            {"compactMetadata": metadata, "compactLines": len(kept) + 1})
        records = [boundary]
        batch = {"compactBatch": boundary_uuid}
        _, summary_record = self._record({"parentUuid": self.last_uuid}, summary.get("role", "user"),
                                         {"message": summary}, {"isCompactSummary": True, **batch})
        records.append(summary_record)
        for message in kept:
            records.append(self._record({"parentUuid": self.last_uuid}, message.get("role", "user"),
                                        {"message": message}, batch)[1])
        self._commit(records, sync=True)

    def _record(self, chain: dict[str, Any], line_type: str, body: dict[str, Any],
                extra: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """A new line's uuid and record; the chain moves on to it (whether or not it is written yet)."""
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
        self.last_uuid = line_uuid
        return line_uuid, record

    def _commit(self, records: list[dict[str, Any]], *, sync: bool = False) -> None:
        data = b"".join(encode_line(record) for record in records)
        failures: list[str] = []
        for path in self.paths:
            # One write() of whole lines with O_APPEND: a reader never sees half a line from a crash
            # between lines, and concurrent readers see complete lines.
            waiting = self._pending.pop(path, b"") + data
            if not waiting:
                continue
            try:
                append_whole(path, waiting, repair_torn_end=path not in self._checked, sync=sync)
            except OSError as exc:
                self._pending[path] = waiting
                failures.append(f"{path}: {exc.strerror or exc}")
                continue
            self._checked.add(path)
        if not failures and self.paths:
            if self.on_created is not None:
                created, self.on_created = self.on_created, None
                created(self.paths[0])
            if self.on_line is not None:
                for record in records:
                    self.on_line(record)
        if failures:
            raise TranscriptWriteError(
                f"could not save the conversation to {'; '.join(failures)}. The unsaved lines are kept in "
                "memory and written as soon as the disk takes them; free space (or make the catui home "
                "writable, CATUI_HOME) and go on, or `catui -c` will resume without them"
            )


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TranscriptWriteError(
            f"cannot create {folder} for the session's transcript: {exc.strerror or exc}; make the catui home "
            "writable or point CATUI_HOME at a writable folder"
        ) from None


def encode_line(record: dict[str, Any]) -> bytes:
    """One record as a JSON line in UTF-8.

    ``default=str``: a tool's structured result (toolUseResult) may hold a Path or another plain value.
    Text that is not valid Unicode (a file name read with surrogateescape, a lone surrogate in a prompt)
    is written as a JSON ``\\uXXXX`` escape, which reads back as the same string.
    """
    text = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    return text.encode("utf-8", "backslashreplace")


def read_transcript(path: Path) -> list[Message]:
    """The messages of a (sub-agent's) transcript file from its last whole compaction on.

    Lines that are not JSON (a torn last line) are skipped.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    torn = torn_compactions(records)
    return [record["message"] for record in records[compacted_from(records):]
            if isinstance(record.get("message"), dict) and not is_compact_boundary(record)
            and record.get("compactBatch") not in torn]


def torn_compactions(records: list[dict[str, Any]]) -> set[str]:
    """The uuids of compaction boundaries whose batch of lines (summary and kept messages) is not all there.

    Such a batch was cut short by a crash in the middle of its one write: its boundary and its lines are
    ignored, and the conversation goes on from the messages before it (which the transcript still holds).
    """
    expected = {str(r.get("uuid")): r["compactLines"] for r in records
                if is_compact_boundary(r) and isinstance(r.get("compactLines"), int)}
    if not expected:
        return set()
    found: dict[str, int] = {}
    for record in records:
        batch = record.get("compactBatch")
        if isinstance(batch, str):
            found[batch] = found.get(batch, 0) + 1
    return {uuid for uuid, lines in expected.items() if found.get(uuid, 0) < lines}


def compacted_from(records: list[dict[str, Any]], *, sidechain: bool | None = None) -> int:
    """The index the conversation starts at: the last compaction boundary followed by its summary.

    A boundary whose summary line never made it to the disk (a transcript written
    by a catui that appended them separately) is ignored: the messages before it
    still count, rather than resuming from nothing. ``sidechain`` False looks at
    the main chain's boundaries only (None: any line).
    """
    def counts(record: dict[str, Any]) -> bool:
        return sidechain is None or bool(record.get("isSidechain")) == sidechain

    torn = torn_compactions(records)
    start = 0
    boundary: int | None = None
    for index, record in enumerate(records):
        if not counts(record) or record.get("compactBatch") in torn:
            continue
        if is_compact_boundary(record):
            if str(record.get("uuid")) in torn:
                continue
            boundary = index
        elif boundary is not None and isinstance(record.get("message"), dict):
            if record.get("isCompactSummary"):
                start = boundary
            boundary = None
    return start


COMPACT_BOUNDARY = "compact_boundary"


def is_compact_boundary(record: dict[str, Any]) -> bool:
    """Whether a transcript line marks a compaction: the conversation goes on from the lines after it."""
    return record.get("type") == "system" and record.get("subtype") == COMPACT_BOUNDARY
