"""Deciding which session a run continues: ``--resume ID``, ``--continue``, ``--fork-session``, ``--session-id``.

The CLI and the SDK both describe the wish as a :class:`ResumeRequest`;
:func:`plan_resume` turns it into a :class:`ResumePlan` — the session id to
run under, the messages to start from, and whether the old transcript is
appended to (resume, continue) or copied into a new one (fork).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.messages import Message
from catui.session.claude_link import claude_project_slug, claude_projects_dir
from catui.session.store import (
    SESSION_ID_PATTERN,
    conversation,
    find_session_file,
    last_message_uuid,
    project_sessions_dir,
    projects_root,
    read_records,
    session_files,
)
from catui.session.transcript import TranscriptWriter


@dataclass(frozen=True)
class ResumeRequest:
    """What the user asked for. ``resume`` is a session id; ``session_id`` the id a new (or forked) session takes."""

    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    session_id: str | None = None
    resume_at: str | None = None
    """Keep the old conversation only up to and including the line with this uuid (``--resume-session-at``)."""
    drops_turn: str | None = None
    """With ``resume_at``: the prompt whose turn the cut drops; anything else dropped refuses the resume."""

    @property
    def wants_history(self) -> bool:
        return self.resume is not None or self.continue_conversation


@dataclass
class ResumePlan:
    """How the run starts: its id, the old messages, and where they came from."""

    session_id: str
    messages: list[Message] = field(default_factory=list)
    source: Path | None = None
    """The transcript the messages were read from (None for a fresh session)."""
    forked: bool = False
    """True when ``messages`` must be copied into the new transcript (the old one stays untouched)."""
    imported: bool = False
    """The old transcript is not under catui's home (Claude Code's projects folder, where the Python SDK's
    session_store puts a session it resumes): its messages are copied into catui's new transcript."""
    last_uuid: str | None = None
    """When appending to the old transcript: the uuid its next line's parentUuid points to."""
    warnings: list[str] = field(default_factory=list)


def plan_resume(request: ResumeRequest, cwd: Path, new_id: str | None = None) -> ResumePlan:
    """The plan for ``request`` in the project at ``cwd``; a wrong id or an empty project is a one-line error."""
    if request.fork_session and not request.wants_history:
        raise ConfigurationError(
            "fork_session (--fork-session) needs a session to fork: resume=ID (--resume ID) "
            "or continue_conversation=True (--continue)"
        )
    fresh_id = request.session_id or new_id or str(uuid.uuid4())
    if not request.wants_history:
        return ResumePlan(session_id=fresh_id)
    source = _source_transcript(request, cwd)
    read = read_records(source)
    old_id = source.stem
    records = read.records
    if request.resume_at is not None:
        if not request.fork_session:
            raise ConfigurationError(
                f"--resume-session-at needs --fork-session (the SDKs' fork_session / forkSession): catui keeps one "
                f"linear transcript per session, so the cut conversation of {old_id} continues under a new id"
            )
        records = cut_records(records, request.resume_at, request.drops_turn, old_id)
    messages = conversation(records)
    if request.fork_session:
        return ResumePlan(session_id=fresh_id, messages=messages, source=source, forked=True, warnings=read.warnings)
    if request.session_id is not None and request.session_id != old_id:
        raise ConfigurationError(
            f"--session-id {request.session_id} differs from the resumed session {old_id}: "
            "add --fork-session to continue it under a new id"
        )
    if not source.is_relative_to(projects_root()):
        return ResumePlan(session_id=old_id, messages=messages, source=source, imported=True, warnings=read.warnings)
    return ResumePlan(session_id=old_id, messages=messages, source=source,
                      last_uuid=last_message_uuid(read.records), warnings=read.warnings)


def cut_records(records: list[dict[str, Any]], resume_at: str, drops_turn: str | None,
                session_id: str) -> list[dict[str, Any]]:
    """``records`` up to and including the line whose uuid is ``resume_at`` (a truncating resume).

    With ``drops_turn`` (a prompt's uuid) the cut must drop that prompt's turn and nothing else: the first
    main-chain message after the cut is that prompt, and no other prompt follows it. Otherwise the resume is
    refused with a message starting "Resume rejected by --resume-drops-turn:", as Claude Code's.
    """
    index = next((i for i, record in enumerate(records) if record.get("uuid") == resume_at), None)
    if index is None:
        raise ConfigurationError(
            f"--resume-session-at {resume_at}: session {session_id} has no line with that uuid "
            "(get_session_messages lists its messages and their uuids)"
        )
    kept, dropped = records[: index + 1], records[index + 1:]
    if drops_turn is None:
        return kept
    if not drops_turn:
        raise ConfigurationError("Resume rejected by --resume-drops-turn: the value is empty; pass the uuid of "
                                 "the prompt whose turn the cut drops")
    prompts = [r for r in dropped if not r.get("isSidechain") and r.get("type") == "user" and _is_prompt(r)]
    if not prompts or prompts[0].get("uuid") != drops_turn:
        raise ConfigurationError(
            f"Resume rejected by --resume-drops-turn: the first prompt after {resume_at} is "
            f"{prompts[0].get('uuid') if prompts else 'none'}, not {drops_turn}"
        )
    if len(prompts) > 1:
        raise ConfigurationError(
            f"Resume rejected by --resume-drops-turn: the cut after {resume_at} also drops the prompt "
            f"{prompts[1].get('uuid')}, which is not part of the turn of {drops_turn}"
        )
    return kept


def _is_prompt(record: dict[str, Any]) -> bool:
    """A user line that is a prompt (or a notification), not the results of tool calls."""
    content = (record.get("message") or {}).get("content")
    if not isinstance(content, list):
        return True
    return not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _source_transcript(request: ResumeRequest, cwd: Path) -> Path:
    if request.resume is not None:
        if not SESSION_ID_PATTERN.match(request.resume):
            raise ConfigurationError(
                f"--resume {request.resume!r} is not a session id (letters, digits, '-' and '_'); "
                "`catui -r` without an id lists this project's sessions"
            )
        found = (find_session_file(request.resume, cwd) or find_session_file(request.resume)
                 or _claude_session_file(request.resume, cwd))
        if found is None:
            raise ConfigurationError(
                f"no saved session {request.resume} (looked in {project_sessions_dir(cwd)} and the other projects "
                "under the catui home); `catui -r` lists this project's sessions"
            )
        return found
    files = session_files(project_sessions_dir(cwd))
    if not files:
        raise ConfigurationError(
            f"--continue: no saved session for {cwd} (sessions live in {project_sessions_dir(cwd)}); "
            "start one with `catui` or `catui -p`"
        )
    return files[0]


def _claude_session_file(session_id: str, cwd: Path) -> Path | None:
    """The session's transcript in Claude Code's projects folder (a session catui did not write there itself:
    one the Python SDK's session_store materialized for a resume), or None."""
    candidate = claude_projects_dir(os.environ) / claude_project_slug(cwd) / f"{session_id}.jsonl"
    return candidate if candidate.is_file() else None


def check_new_session_id(session_id: str, cwd: Path, *, resuming: bool) -> None:
    """``--session-id`` as Claude Code takes it: a UUID, not yet used in this project unless it is resumed."""
    try:
        uuid.UUID(session_id)
    except ValueError:
        raise ConfigurationError(
            f"--session-id {session_id!r} is not a UUID: pass one such as {uuid.uuid4()}"
        ) from None
    if not resuming and find_session_file(session_id, cwd) is not None:
        raise ConfigurationError(
            f"--session-id {session_id} is already in use in this project: resume it with --resume {session_id}, "
            "or pick a new UUID"
        )


def carry_history(transcript: TranscriptWriter, plan: ResumePlan) -> None:
    """Prepare the new run's transcript: a fork gets a copy of the old messages (the old file is never
    written); a resumed session's next line continues the old file's parentUuid chain."""
    if plan.forked and plan.source is not None:
        forked_from = {"sessionId": plan.source.stem}
        transcript.append_messages(plan.messages, extra={"forkedFrom": forked_from})
    elif plan.imported:
        transcript.append_messages(plan.messages)
    elif plan.last_uuid is not None:
        transcript.last_uuid = plan.last_uuid
