"""Deciding which session a run continues: ``--resume ID``, ``--continue``, ``--fork-session``, ``--session-id``.

The CLI and the SDK both describe the wish as a :class:`ResumeRequest`;
:func:`plan_resume` turns it into a :class:`ResumePlan` — the session id to
run under, the messages to start from, and whether the old transcript is
appended to (resume, continue) or copied into a new one (fork).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from catui.errors import ConfigurationError
from catui.messages import Message
from catui.session.store import (
    SESSION_ID_PATTERN,
    conversation,
    find_session_file,
    last_message_uuid,
    project_sessions_dir,
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
    messages = conversation(read.records)
    if request.fork_session:
        return ResumePlan(session_id=fresh_id, messages=messages, source=source, forked=True, warnings=read.warnings)
    if request.session_id is not None and request.session_id != old_id:
        raise ConfigurationError(
            f"--session-id {request.session_id} differs from the resumed session {old_id}: "
            "add --fork-session to continue it under a new id"
        )
    return ResumePlan(session_id=old_id, messages=messages, source=source,
                      last_uuid=last_message_uuid(read.records), warnings=read.warnings)


def _source_transcript(request: ResumeRequest, cwd: Path) -> Path:
    if request.resume is not None:
        if not SESSION_ID_PATTERN.match(request.resume):
            raise ConfigurationError(
                f"--resume {request.resume!r} is not a session id (letters, digits, '-' and '_'); "
                "`catui -r` without an id lists this project's sessions"
            )
        found = find_session_file(request.resume, cwd) or find_session_file(request.resume)
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
    elif plan.last_uuid is not None:
        transcript.last_uuid = plan.last_uuid
