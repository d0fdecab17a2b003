"""Finding and reading saved sessions: the JSONL transcripts under ``<catui home>/projects/<slug>/``.

A transcript is read line by line; a line that is not JSON (the last line
torn by a crash mid-write, or anything damaged) is skipped with a warning that
names the file and line, never a failure. The conversation of a session is
its main-chain ``user`` / ``assistant`` lines in file order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.messages import Message
from catui.paths import catui_home, project_slug
from catui.session.transcript import compacted_from, is_compact_boundary, torn_compactions

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
"""What a session id may look like (it names a file): catui's UUIDs, or an SDK caller's own id."""


@dataclass
class TranscriptRead:
    """The parsed lines of one transcript and what was wrong with any that were skipped."""

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_records(path: Path) -> TranscriptRead:
    """Every JSON object line of ``path``; damaged lines are skipped and reported in ``warnings``."""
    read = TranscriptRead(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        read.warnings.append(f"{path}: could not read the transcript: {exc.strerror or exc}")
        return read
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            where = "the last line" if number - 1 == last else f"line {number}"
            why = " (cut short, probably by a crash mid-write)" if number - 1 == last else ""
            read.warnings.append(f"{path}: {where} is not valid JSON{why}; skipped it")
            continue
        if isinstance(record, dict):
            read.records.append(record)
    return read


def conversation(records: list[dict[str, Any]]) -> list[Message]:
    """The messages a resumed session starts from: main-chain user/assistant lines, in order.

    After a compaction only the lines from its last boundary on count (the
    summary, then the messages kept and everything later).

    A trailing assistant message whose tool calls never got results (the
    process died while the tools ran) is dropped: the API refuses a tool_use
    without its tool_result, and the next prompt follows the last whole turn.
    """
    messages: list[Message] = []
    start = compacted_from(records, sidechain=False)
    torn = torn_compactions(records)
    for record in records[start:]:
        message = record.get("message")
        if is_compact_boundary(record) or record.get("compactBatch") in torn:
            continue
        if record.get("isSidechain") or record.get("type") not in ("user", "assistant"):
            continue
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            messages.append(message)
    while messages and messages[-1].get("role") == "assistant" and _has_tool_use(messages[-1]):
        messages.pop()
    return messages


def _has_tool_use(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in content
    )


def last_message_uuid(records: list[dict[str, Any]]) -> str | None:
    """The uuid of the last message line, so that lines appended on resume continue its parentUuid chain."""
    for record in reversed(records):
        if isinstance(record.get("message"), dict) and isinstance(record.get("uuid"), str):
            return str(record["uuid"])
    return None


def projects_root() -> Path:
    return catui_home() / "projects"


def project_sessions_dir(directory: Path) -> Path:
    """Where the sessions of the project at ``directory`` are kept (the folder may not exist yet)."""
    return projects_root() / project_slug(directory)


def session_files(project_dir: Path) -> list[Path]:
    """The project's main transcripts, newest first (by modification time)."""
    try:
        files = [p for p in project_dir.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)


def find_session_file(session_id: str, directory: Path | None = None) -> Path | None:
    """The transcript of ``session_id``: in ``directory``'s project, or in any project when None."""
    if not SESSION_ID_PATTERN.match(session_id):
        return None
    folders = [project_sessions_dir(directory)] if directory is not None else _all_project_dirs()
    for folder in folders:
        candidate = folder / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
    return None


def _all_project_dirs() -> list[Path]:
    try:
        return sorted(p for p in projects_root().iterdir() if p.is_dir())
    except OSError:
        return []


def all_session_files(directory: Path | None) -> list[Path]:
    """Main transcripts of one project (``directory``) or of every project, newest first."""
    folders = [project_sessions_dir(directory)] if directory is not None else _all_project_dirs()
    files = [path for folder in folders for path in session_files(folder)]
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)


def first_prompt(records: list[dict[str, Any]]) -> str | None:
    """The first thing the user typed (context reminders and tool results skipped), on one line."""
    for record in records:
        message = record.get("message")
        if record.get("isSidechain") or record.get("type") != "user" or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict) or block.get("type") != "text":
                continue
            text = " ".join(str(block.get("text", "")).split())
            if text and not text.startswith("<system-reminder>"):
                return text if len(text) <= 200 else text[:200].rstrip() + "…"
    return None


def last_field(records: list[dict[str, Any]], key: str) -> str | None:
    """The last non-empty string value of ``key`` among the lines (titles, tags, branches)."""
    for record in reversed(records):
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None
