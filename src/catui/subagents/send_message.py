"""SendMessage: talk to another agent (spec 14.1, observed section 6).

Where a message goes depends on the recipient, named by ``to`` (an agent's
``name`` or its id):

- a running agent (background, or a foreground one) → queued; the agent sees
  it appended to its next tool_result round as a reminder from the
  coordinator;
- a finished agent, by id → it resumes in the background from its
  conversation with the message as a new user turn; a task-notification
  follows when it ends;
- a finished agent, by name → appended to its mailbox file
  ``<project>/.catui/mailboxes/<name>.jsonl``; nothing resumes;
- anyone else → an error naming the agents that can be reached.

The tool is offered from the session's start (teams feature on, or the
``sendMessage`` setting, on by default) so the tool list never changes
mid-session.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from catui.paths import project_runtime_dir
from catui.permissions.context import PermissionRequest
from catui.session.durable_append import append_whole
from catui.session.transcript import encode_line
from catui.subagents.ids import is_agent_id
from catui.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from catui.subagents.messaging import AgentMessages
    from catui.subagents.teams.send import TeamRouter

SEND_MESSAGE_TOOL_NAME = "SendMessage"

DESCRIPTION = """\
Send a message to another agent: one you started with the Agent tool (by its name or its agentId).

- A running agent receives the message with the results of its next tool call and deals with it before \
it finishes.
- An agent that has finished, addressed by its agentId, continues in the background from where it \
stopped, with your message as its next instruction; you are notified when it finishes again. This is how \
to ask a finished agent a follow-up question without starting over.
- An agent that has finished, addressed by its name, gets the message in its mailbox file; it is not \
restarted.
- On an agent team: to a teammate's name, "team-lead", or "*" for every teammate (sparingly: each one \
gets a turn). The message lands in the recipient's inbox and becomes its next turn. A text message needs \
a summary. The structured forms coordinate the team: the lead sends shutdown_request and \
plan_approval_response, a teammate answers a shutdown request with shutdown_response.
- summary is a short preview of the message (a few words) for logs and the user's display."""


def message_text(message: Any) -> str:
    """The message as the recipient reads it (structured forms as JSON)."""
    if isinstance(message, str):
        return message
    return json.dumps(message.model_dump(exclude_none=True), ensure_ascii=False)


def reply(message: str, *, success: bool = True, **extra: Any) -> ToolResult:
    """A JSON reply, as observed: ``{"success":true,"message":"…"}``."""
    body: dict[str, Any] = {"success": success, "message": message, **extra}
    return ToolResult(json.dumps(body, ensure_ascii=False, separators=(",", ":")), is_error=not success, data=body)


def mailbox_path(project_root: Path, name: str) -> Path:
    """``<project>/.catui/mailboxes/<name>.jsonl`` (unsafe characters in the name become ``_``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"
    return project_runtime_dir(project_root) / "mailboxes" / f"{safe}.jsonl"


def write_mailbox(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line in a single write (readers never see half a line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    append_whole(path, encode_line(record), repair_torn_end=True)  # whole or not at all (an OSError)


class SendMessageTool(Tool):
    """Routes a message to a running, finished or named agent (see the module docstring)."""

    name: ClassVar[str] = SEND_MESSAGE_TOOL_NAME
    input_model_ref: ClassVar[str] = "catui.subagents.send_message_input:SendMessageInput"
    read_only: ClassVar[bool] = False

    def __init__(self, messaging: AgentMessages | None, teams: TeamRouter | None = None) -> None:
        self.messaging = messaging
        """The agents it reaches (None when background agents are off)."""
        self.teams = teams
        """The team whose members it reaches by name (None when the teams feature is off)."""

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # Talking to one's own agents needs no approval; it is listed among the always-allowed tools.
        return PermissionRequest(
            tool_name=self.name, tool_input=args.model_dump(exclude_none=True), read_only=True, subject=""
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.subagents.send_message_input import SendMessageInput
        assert isinstance(args, SendMessageInput)
        teams = self.teams
        if teams is not None:
            from catui.subagents.teams.send import route_team_message  # lazy (catui.lazy): agent teams

            routed = route_team_message(teams, args.to, args.message, args.summary, ctx)
            if routed is not None:
                return routed
        manager = self.messaging
        if manager is None:
            return ToolResult(
                "SendMessage cannot reach any agent in this session: background agents are turned off "
                "(CATUI_DISABLE_BACKGROUND_TASKS).",
                is_error=True,
            )
        to = args.to.strip()
        text = message_text(args.message)
        names = manager.names

        live = names.live(to)
        if live is not None and manager.running_agent(live):
            return self._queue(manager, live, to, text, args.summary)
        # A name still registered addresses its agent like its id does (one read back from state.db after a
        # restart, whose agent did not end in that process); a released (former) name only reaches the mailbox.
        target = live or (to if is_agent_id(to) else None)
        if target is not None and manager.running_agent(target):
            return self._queue(manager, target, to, text, args.summary)
        if target is not None and manager.holds_finished(target):
            manager.resume(target, text)
            return _resumed(target)
        saved = manager.saved_transcript(target) if target is not None else None
        if target is not None and saved is not None:  # ended in an earlier process (or was dropped): from disk
            refusal = await manager.resume_from_transcript(target, text, saved)
            if refusal is None:
                return _resumed(target)
            return ToolResult(refusal, is_error=True)
        former = live or names.former(to)
        if former is not None:
            path = mailbox_path(ctx.project_root, to)
            write_mailbox(
                path,
                {
                    "from": ctx.agent_id or "coordinator",
                    "to": to,
                    "agentId": former,
                    "summary": args.summary,
                    "message": text,
                    "timestamp": time.time(),
                },
            )
            return reply(
                f"{to} has finished, so the message was written to its mailbox ({path}); it does not resume.",
                mailbox=str(path),
            )
        if is_agent_id(to) and manager.tasks.get(to) is not None:
            return ToolResult(
                f"Agent {to} has finished and this session does not hold its conversation, so it cannot "
                "continue. Start a new agent with the Agent tool instead.",
                is_error=True,
            )
        return ToolResult(unknown_recipient(to, manager), is_error=True)

    @staticmethod
    def _queue(manager: AgentMessages, agent_id: str, label: str, text: str, summary: str | None) -> ToolResult:
        from catui.subagents.messaging import coordinator_reminder  # lazy (catui.lazy): the runtime

        manager.queue_message(agent_id, coordinator_reminder(text, summary))
        return reply(f"Message queued for delivery to {label} at its next tool round.")


def _resumed(agent_id: str) -> ToolResult:
    return reply(
        f"Agent {agent_id} had finished; it is continuing in the background with your message. "
        "You will be notified when it finishes.",
        agentId=agent_id,
    )


def unknown_recipient(to: str, manager: AgentMessages) -> str:
    """The error for a recipient nobody answers to, listing the names and ids that work."""
    known_names = sorted(manager.names.known())
    known_ids = sorted(manager.known_agents())
    parts = []
    if known_names:
        parts.append("names: " + ", ".join(known_names))
    if known_ids:
        parts.append("agent ids: " + ", ".join(known_ids))
    known = "; ".join(parts) if parts else "none (no agent has been started in this session)"
    return f"No agent is called or has the id {to!r}. Agents you can message: {known}."
