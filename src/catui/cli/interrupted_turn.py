"""After an interrupt: tool calls left without results get one, so the conversation stays valid."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from catui.errors import CatuiError

if TYPE_CHECKING:
    from catui.session.session import Session

__all__ = ["INTERRUPTED_TOOL_RESULT", "close_interrupted_tool_calls"]

INTERRUPTED_TOOL_RESULT = "Interrupted by the user before this call finished; its outcome is unknown."


def close_interrupted_tool_calls(session: Session) -> None:
    """Give every tool_use an interrupt left without a result one, so the conversation stays valid.

    The Messages API refuses a conversation in which an assistant's tool_use is
    not answered by a tool_result in the next message; an interrupt in the
    middle of a tool round leaves exactly that. Appended like any message (and
    to the transcript), it tells the model what happened on the next turn.
    """
    messages = session.messages
    if not messages or messages[-1].get("role") != "assistant":
        return
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return
    pending = [b["id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use" and "id" in b]
    if not pending:
        return
    results = [
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": INTERRUPTED_TOOL_RESULT, "is_error": True}
        for tool_use_id in pending
    ]
    message = {"role": "user", "content": results}
    messages.append(message)
    transcript = getattr(session.config, "transcript", None)
    if transcript is not None:
        with contextlib.suppress(OSError, CatuiError):  # a full disk: the writer keeps the line for later
            transcript.append(message)
