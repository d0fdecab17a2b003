"""The input models of :mod:`catui.subagents.messaging_current`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class CurrentSendMessageInput(ToolInput):
    to: str = Field(max_length=300, pattern=r"^[^\n]*$",
                    description="The recipient: an agent's name or its agentId; from a sub-agent also \"main\".")
    summary: str | None = Field(default=None, max_length=200, description="A 5-10 word preview of the message.")
    message: str = Field(default="", description="The message, as plain text.")
    notify_when_idle: bool | None = Field(default=None, description="To a peer session: be told once when it next goes idle or exits.")


class ListAgentsInput(ToolInput):
    channel: str | None = Field(default=None, max_length=256, description="Accepted for compatibility.")
    q: str | None = Field(default=None, max_length=256, description="Only agents whose id, name or type contain it.")
    cursor: str | None = Field(default=None, max_length=256, description="Accepted for compatibility.")
