"""What the scripted provider's match rules look at in a request, whichever wire format it came in."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from catui.models.base import ModelRequest


def block_text(block: Mapping[str, Any]) -> str:
    """The text a match rule sees in one content block."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    """The text a match rule sees in one message."""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(t for t in (block_text(b) for b in content if isinstance(b, Mapping)) if t)


@dataclass(frozen=True)
class RequestView:
    """What turn selection looks at in a request, whatever wire format it came in."""

    model: str = ""
    system_text: str = ""
    first_user_text: str = ""
    last_user_text: str = ""
    last_is_tool_result: bool = False
    tool_names: tuple[str, ...] = ()
    size_chars: int = 0

    @classmethod
    def from_anthropic(cls, body: Mapping[str, Any]) -> RequestView:
        """From an Anthropic Messages request body (``model``, ``system``, ``messages``, ``tools``).

        The text of a user message includes the text inside its tool_result blocks.
        """
        system = body.get("system") or []
        system_text = system if isinstance(system, str) else "\n".join(block_text(b) for b in system)
        messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
        users = [m for m in messages if m.get("role") == "user"]
        last = messages[-1] if messages else {}
        last_content = last.get("content", "")
        last_is_tool_result = (
            last.get("role") == "user"
            and not isinstance(last_content, str)
            and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in last_content)
        )
        return cls(
            model=str(body.get("model", "")),
            system_text=system_text,
            first_user_text=message_text(users[0]) if users else "",
            last_user_text=message_text(users[-1]) if users else "",
            last_is_tool_result=bool(last_is_tool_result),
            tool_names=tuple(str(t.get("name", "")) for t in body.get("tools") or []),
            size_chars=len(json.dumps([system, list(messages), body.get("tools") or []], default=str)),
        )

    @classmethod
    def from_request(cls, request: ModelRequest) -> RequestView:
        return cls.from_anthropic(
            {
                "model": request.model,
                "system": request.system,
                "messages": request.messages,
                "tools": request.tools,
            }
        )
