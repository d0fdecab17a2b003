"""stream-json output: one JSON object per line, in Claude Code's event shapes.

``system``/``init`` first (tools, model, agents), then ``assistant`` and
``user`` messages (a sub-agent's carry ``parent_tool_use_id``), ``system``
task events, optional ``stream_event`` partials, and a final ``result``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, TextIO

from catui.session.events import (
    AssistantMessageEvent,
    Event,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    UserMessageEvent,
)


def event_to_json(event: Event, session_id: str) -> dict[str, Any] | None:
    """The stream-json object for one event, or None for events stream-json does not show."""
    base = {"parent_tool_use_id": event.parent_tool_use_id, "session_id": session_id}
    if isinstance(event, AssistantMessageEvent):
        message = {
            "id": f"msg_{event.uuid.replace('-', '')[:24]}",
            "type": "message",
            "role": "assistant",
            "model": event.model,
            **event.message,
        }
        return {"type": "assistant", "message": message, **base, "uuid": event.uuid or str(uuid.uuid4())}
    if isinstance(event, UserMessageEvent):
        out: dict[str, Any] = {"type": "user", "message": event.message, **base, "uuid": event.uuid or str(uuid.uuid4())}
        if event.tool_use_results:
            # Claude Code attaches the structured result of the (single) tool call to the user event.
            values = list(event.tool_use_results.values())
            out["tool_use_result"] = values[0] if len(values) == 1 else values
        return out
    if isinstance(event, SystemEvent):
        return {"type": "system", "subtype": event.subtype, **event.data, "session_id": session_id,
                "uuid": str(uuid.uuid4())}
    if isinstance(event, StreamEventRaw):
        return {"type": "stream_event", "event": event.event, **base, "uuid": str(uuid.uuid4())}
    if isinstance(event, ResultEvent):
        if event.agent_id is not None:
            return None
        from catui.cli.run import result_json

        return {**result_json(event), "uuid": str(uuid.uuid4())}
    return None


class StreamJsonWriter:
    """Writes events of an app's run to a text stream as JSON lines, flushing each."""

    def __init__(self, app: Any, stream: TextIO) -> None:
        self.app = app
        self.stream = stream

    def _emit(self, obj: dict[str, Any]) -> None:
        self.stream.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.stream.flush()

    def init(self) -> None:
        session = self.app.session
        tools = [t.name for t in session.tools]
        if "Agent" in tools and "Task" not in tools:
            tools.append("Task")
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(session.ctx.cwd),
                "session_id": session.session_id,
                "tools": tools,
                "mcp_servers": [],
                "model": session.config.model,
                "permissionMode": session.ctx.permissions.mode,
                "slash_commands": [],
                "output_style": "default",
                "agents": [a.agent_type for a in getattr(self.app.registry, "active", [])],
                "uuid": str(uuid.uuid4()),
            }
        )

    def write(self, event: Event) -> None:
        obj = event_to_json(event, self.app.session.session_id)
        if obj is not None:
            self._emit(obj)
