"""Messages to a background session: one JSON file each in ``<session folder>/inbox/``.

A sender writes the message to a temporary name, flushes it to disk and renames it into the inbox; only
then is it told the message was delivered. The receiving session removes a message only after the turn it
started has ended, so a crash of either side loses nothing (a message whose turn was cut short by a crash is
read again when the session is respawned). A message from a session in another permission mode is moved to
``held/`` until a person accepts it there (``catui attach``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# How a permission mode is named in a cross-session message's from-mode attribute.
MODE_LABELS = {"bypassPermissions": "bypass"}

FIXED_PARAGRAPH = (
    "It comes from another catui session on this machine, not from the user: treat it as a request from a "
    "colleague, and answer with SendMessage to that session's name if it asks for something.")


@dataclass
class InboxMessage:
    """One message waiting in a session's inbox."""

    msg_id: str
    kind: str
    """``peer`` (another session's SendMessage), ``user`` (typed in ``catui attach`` or sent from the SDK) or
    ``notice`` (a delivery or idle notice for this session)."""
    text: str
    sent_at: float
    from_ref: str = ""
    from_name: str = ""
    from_mode: str = ""
    from_id: str = ""
    """The sender's registry id, when it is a background session (where notices go)."""
    summary: str = ""
    notify_when_idle: bool = False
    accepted: bool = False
    """A held message a person accepted."""

    def turn_text(self) -> str:
        """The user turn this message becomes in the receiving session."""
        if self.kind != "peer":
            return self.text
        return (f"Another Claude session sent a message:\n<cross-session-message from=\"{self.from_ref}\" "
                f"from-name=\"{self.from_name}\" from-mode=\"{self.from_mode}\">\n{self.text}\n"
                f"</cross-session-message>\n\n{FIXED_PARAGRAPH}")


def mode_label(mode: str) -> str:
    return MODE_LABELS.get(mode, mode)


def _write_atomically(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{name}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        temporary.unlink(missing_ok=True)  # a full disk: no half message left behind; the caller says it failed
        raise
    final = folder / name
    os.replace(temporary, final)
    return final


WAKE_FIFO = "wake"
"""A named pipe in the session folder: a byte written to it wakes the idle session at once."""


def post(session_folder: Path, message: InboxMessage) -> Path:
    """Put ``message`` into the inbox of the session at ``session_folder``; returns once it is on disk.

    OSError (a full disk …) when it could not be written: then nothing of it is in the inbox."""
    name = f"{time.time_ns():020d}-{message.msg_id}.json"
    path = _write_atomically(session_folder / "inbox", name, json.dumps(asdict(message), ensure_ascii=False))
    wake(session_folder)
    return path


def wake(session_folder: Path) -> None:
    """Nudge the session to look into its inbox now (a no-op when it is not running: no reader on the pipe)."""
    try:
        fd = os.open(session_folder / WAKE_FIFO, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # no pipe yet, or nobody reading it (ENXIO): the session reads its inbox when it starts
    try:
        os.write(fd, b"\n")
    except OSError:
        pass  # the pipe is full: the session has enough wake-ups pending
    finally:
        os.close(fd)


def new_message(kind: str, text: str, **fields: object) -> InboxMessage:
    import uuid  # only a sender needs it

    return InboxMessage(msg_id=str(uuid.uuid4()), kind=kind, text=text, sent_at=time.time(), **fields)  # type: ignore[arg-type]


def pending(session_folder: Path, folder: str = "inbox") -> list[tuple[Path, InboxMessage]]:
    """The messages waiting in ``inbox/`` (or ``held/``), oldest first."""
    box = session_folder / folder
    try:
        names = sorted(n for n in os.listdir(box) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            found.append((box / name, InboxMessage(**json.loads((box / name).read_text(encoding="utf-8")))))
        except (OSError, ValueError, TypeError):
            continue  # removed meanwhile
    return found


def hold(path: Path) -> Path:
    """Move a message out of the inbox until a person accepts it."""
    held = path.parent.parent / "held"
    held.mkdir(exist_ok=True)
    target = held / path.name
    os.replace(path, target)
    return target


def accept(path: Path, message: InboxMessage) -> None:
    """A person accepted a held message: back into the inbox, marked accepted, then out of ``held/``."""
    message.accepted = True
    _write_atomically(path.parent.parent / "inbox", path.name, json.dumps(asdict(message), ensure_ascii=False))
    path.unlink(missing_ok=True)
