"""The input models of :mod:`catui.subagents.send_message`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput


class ShutdownRequest(ToolInput):
    """Ask an agent to wrap up and stop."""

    type: Literal["shutdown_request"]
    reason: str | None = None


class ShutdownResponse(ToolInput):
    """Answer a shutdown request."""

    type: Literal["shutdown_response"]
    request_id: str
    approve: bool
    reason: str | None = None


class PlanApprovalResponse(ToolInput):
    """Approve or reject an agent's plan."""

    type: Literal["plan_approval_response"]
    request_id: str
    approve: bool
    feedback: str | None = None


class SendMessageInput(ToolInput):
    """SendMessage's arguments (required: to, message)."""

    to: str = Field(description='The recipient: an agent\'s name, or its agentId; on a team also "team-lead", '
                    'or "*" for every teammate.')
    summary: str | None = Field(default=None, description="A 5-10 word preview of the message.")
    message: str | ShutdownRequest | ShutdownResponse | PlanApprovalResponse = Field(
        description="The message: text, or a structured shutdown / plan-approval object."
    )
