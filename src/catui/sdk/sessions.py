"""The session helpers of claude-agent-sdk, on catui's transcripts.

Same names, arguments and return shapes as ``claude_agent_sdk``:
:func:`list_sessions`, :func:`get_session_info`, :func:`get_session_messages`,
:func:`list_subagents`, :func:`get_subagent_messages`, :func:`rename_session`,
:func:`tag_session` and :func:`delete_session` (``fork_session`` is in :mod:`catui.sdk.session_fork`). ``directory`` is a project folder (the ``cwd`` a
session ran in); without it every project under the catui home is searched.
Sessions are read from ``<catui home>/projects/<slug>/<session>.jsonl`` and
sub-agents from ``<session>/subagents/agent-<id>.jsonl`` beside it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from catui.session.durable_append import append_whole
from catui.session.store import (
    SESSION_ID_PATTERN,
    all_session_files,
    find_session_file,
    first_prompt,
    last_field,
    project_sessions_dir,
    read_records,
)
from catui.session.transcript import encode_line, is_compact_boundary, torn_compactions


@dataclass
class SDKSessionInfo:
    """One saved session, as ``list_sessions`` reports it (times in milliseconds since the epoch)."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """One user or assistant message of a saved session (``message`` is the API message dict)."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


def list_sessions(
    directory: str | None = None, limit: int | None = None, offset: int = 0, include_worktrees: bool = True
) -> list[SDKSessionInfo]:
    """Saved sessions, newest first: of the project at ``directory`` (and its git worktrees when
    ``include_worktrees``), or of every project."""
    if directory is None:
        files = all_session_files(None)
    else:
        folders = [Path(directory).resolve()]
        if include_worktrees:
            folders += [p for p in _git_worktrees(folders[0]) if p != folders[0]]
        files = sorted({f for folder in folders for f in all_session_files(folder)},
                       key=lambda p: p.stat().st_mtime, reverse=True)
    infos = [info for info in (_info(path) for path in files) if info is not None]
    end = None if limit is None or limit <= 0 else offset + limit
    return infos[offset:end]


def get_session_info(session_id: str, directory: str | None = None) -> SDKSessionInfo | None:
    """One session's :class:`SDKSessionInfo`, or None when there is no such session."""
    path = _session_path(session_id, directory)
    return _info(path) if path is not None else None


def get_session_messages(
    session_id: str, directory: str | None = None, limit: int | None = None, offset: int = 0
) -> list[SessionMessage]:
    """The session's user and assistant messages in order ([] when it does not exist)."""
    path = _session_path(session_id, directory)
    if path is None:
        return []
    return _page(_messages(read_records(path).records, session_id), limit, offset)


def list_subagents(session_id: str, directory: str | None = None) -> list[str]:
    """The ids of the sub-agents the session started (their transcripts are kept beside it)."""
    folder = _subagents_dir(session_id, directory)
    if folder is None:
        return []
    return [p.name[len("agent-"):-len(".jsonl")] for p in sorted(folder.rglob("agent-*.jsonl"))]


def get_subagent_messages(
    session_id: str, agent_id: str, directory: str | None = None, limit: int | None = None, offset: int = 0
) -> list[SessionMessage]:
    """A sub-agent's messages; ``parent_tool_use_id`` is the Agent call that started it."""
    folder = _subagents_dir(session_id, directory)
    if folder is None or not SESSION_ID_PATTERN.match(agent_id):
        return []
    path = next(iter(sorted(folder.rglob(f"agent-{agent_id}.jsonl"))), None)
    if path is None:
        return []
    meta = _read_meta(path.with_name(f"agent-{agent_id}.meta.json"))
    records = [{**r, "isSidechain": False} for r in read_records(path).records]
    messages = _messages(records, session_id)
    for message in messages:
        message.parent_tool_use_id = meta.get("toolUseId")
        message.parent_agent_id = meta.get("parentAgentId")
    return _page(messages, limit, offset)


def rename_session(session_id: str, title: str, directory: str | None = None) -> None:
    """Give the session a title (a ``custom-title`` line; the last one wins)."""
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")
    path = _existing(session_id, directory)
    line = {"type": "custom-title", "customTitle": stripped, "sessionId": session_id}
    append_whole(path, encode_line(line), repair_torn_end=True)  # never glued onto a torn last line


def tag_session(session_id: str, tag: str | None, directory: str | None = None) -> None:
    """Tag the session (a ``tag`` line; the last one wins); ``None`` clears it."""
    if tag is not None:
        tag = tag.strip()
        if not tag:
            raise ValueError("tag must be non-empty (use None to clear)")
    path = _existing(session_id, directory)
    line = {"type": "tag", "tag": tag or "", "sessionId": session_id}
    append_whole(path, encode_line(line), repair_torn_end=True)


def existing_session_path(session_id: str, directory: str | None) -> Path:
    """The transcript of session ``session_id``; ValueError for a bad id, FileNotFoundError when there is none."""
    return _existing(session_id, directory)


def delete_session(session_id: str, directory: str | None = None) -> None:
    """Delete the session's transcript and its sub-agents' transcripts."""
    path = _existing(session_id, directory)
    path.unlink()
    shutil.rmtree(path.with_suffix(""), ignore_errors=True)


# -- helpers ---------------------------------------------------------------------------------------


def _session_path(session_id: str, directory: str | None) -> Path | None:
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.match(session_id):
        return None
    return find_session_file(session_id, Path(directory).resolve() if directory is not None else None)


def _existing(session_id: str, directory: str | None) -> Path:
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.match(session_id):
        raise ValueError(f"Invalid session_id: {session_id!r}")
    path = _session_path(session_id, directory)
    if path is None:
        where = f" in {project_sessions_dir(Path(directory).resolve())}" if directory is not None else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    return path


def _subagents_dir(session_id: str, directory: str | None) -> Path | None:
    path = _session_path(session_id, directory)
    if path is None:
        return None
    folder = path.with_suffix("") / "subagents"
    return folder if folder.is_dir() else None


def _info(path: Path) -> SDKSessionInfo | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    records = read_records(path).records
    if records and records[0].get("isSidechain"):
        return None
    title = last_field(records, "customTitle")
    prompt = first_prompt(records)
    summary = title or last_field(records, "summary") or prompt
    if not summary:
        return None  # nothing said yet: not worth listing
    created = _epoch_ms(next((r.get("timestamp") for r in records if r.get("timestamp")), None))
    return SDKSessionInfo(
        session_id=path.stem, summary=summary, last_modified=int(stat.st_mtime * 1000), file_size=stat.st_size,
        custom_title=title, first_prompt=prompt, git_branch=last_field(records, "gitBranch"),
        cwd=next((str(r["cwd"]) for r in records if isinstance(r.get("cwd"), str)), None),
        tag=_last_tag(records), created_at=created,
    )


def _last_tag(records: list[dict[str, Any]]) -> str | None:
    for record in reversed(records):
        if record.get("type") == "tag":
            return str(record.get("tag") or "") or None
    return None


def _epoch_ms(stamp: object) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _messages(records: list[dict[str, Any]], session_id: str) -> list[SessionMessage]:
    # After a compaction the summary stands for what came before (as claude-agent-sdk reads it): the
    # messages start at the last boundary, and those written again after it are not listed twice.
    # A batch cut short by a crash (session.transcript.torn_compactions) is not a compaction.
    torn = torn_compactions(records)
    records = [r for r in records if r.get("compactBatch") not in torn and str(r.get("uuid")) not in torn]
    boundaries = [i for i, r in enumerate(records) if is_compact_boundary(r) and not r.get("isSidechain")]
    if boundaries:
        records = records[boundaries[-1] + 1:]
    messages: list[SessionMessage] = []
    for record in records:
        kind = record.get("type")
        if kind not in ("user", "assistant") or record.get("isSidechain") or not isinstance(record.get("message"), dict):
            continue
        messages.append(SessionMessage(
            type="user" if kind == "user" else "assistant", uuid=str(record.get("uuid") or ""),
            session_id=str(record.get("sessionId") or session_id), message=record["message"],
        ))
    return messages


def _page(messages: list[SessionMessage], limit: int | None, offset: int) -> list[SessionMessage]:
    end = None if limit is None or limit <= 0 else offset + limit
    return messages[offset:end]


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _git_worktrees(folder: Path) -> list[Path]:
    """The folders of the git worktrees of the repository at ``folder`` ([] outside git)."""
    try:
        done = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=folder, capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [Path(line[len("worktree "):]).resolve() for line in done.stdout.splitlines() if line.startswith("worktree ")]
