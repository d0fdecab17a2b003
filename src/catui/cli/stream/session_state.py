"""``system/session_state_changed`` frames: tells the driver whether catui still owes it a turn.

claude-agent-sdk asks for them by setting ``CLAUDE_CODE_SDK_READS_SESSION_STATE`` in catui's
environment; it reads them to decide when a run is over and keeps them out of its caller's stream
(they carry ``sdk_host_only: true``). ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`` is a caller's own
opt-in: the same frames without the marker. catui reports ``running`` when a turn starts and stays
``running`` while a background agent is live or its notification turn is still to come; ``idle``
once nothing more is owed. Without either variable no frame is written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

HOST_ONLY_VARIABLE = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
CALLER_VARIABLE = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"
_OFF = {"", "0", "false", "no", "off"}


def _is_on(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in _OFF


@dataclass
class SessionStateReporter:
    """Writes a ``session_state_changed`` line whenever the state changes (``running`` / ``idle``)."""

    write_line: Callable[[dict[str, Any]], None]
    host_only: bool
    """Mark the frames ``sdk_host_only`` (the SDK asked for them, its caller did not)."""
    session_id: Callable[[], str | None] = lambda: None
    state: str | None = None

    def set(self, state: str) -> None:
        """Report ``state`` unless it is the one reported last."""
        if state == self.state:
            return
        self.state = state
        frame: dict[str, Any] = {"type": "system", "subtype": "session_state_changed", "state": state,
                                 "uuid": str(uuid.uuid4())}
        session_id = self.session_id()
        if session_id is not None:
            frame["session_id"] = session_id
        if self.host_only:
            frame["sdk_host_only"] = True
        self.write_line(frame)


def reporter_from_env(environ: Mapping[str, str],
                      write_line: Callable[[dict[str, Any]], None]) -> SessionStateReporter | None:
    """The reporter the environment asks for (the caller's opt-in wins over the SDK's), or None."""
    if _is_on(environ.get(CALLER_VARIABLE)):
        return SessionStateReporter(write_line, host_only=False)
    if _is_on(environ.get(HOST_ONLY_VARIABLE)):
        return SessionStateReporter(write_line, host_only=True)
    return None
