"""Messaging in the current Claude Code contract: SendMessage without teams and ListAgents (observed-cc-now.md §5).

:class:`CurrentSendMessageTool` takes ``{to, summary, message, notify_when_idle}``
(``message`` a plain string) and answers with one JSON text block:

- a running agent, by id or name: the message is queued for its next tool round
  (appended as ``The coordinator sent a message while you were working: …``);
- a finished agent, by id or name: it resumes in the background with its whole
  history and the message, and notifies again;
- ``"main"`` from a sub-agent: the main conversation gets it at its next turn,
  wrapped as ``<agent-message from="<id>">`` (and output-scanned, as reports are);
- ``"*"``: refused (no broadcast); anyone else: "not reachable".

:class:`ListAgentsTool` lists this session (its name and ref) and its sub-agents
(id, type, status, age), and the live background sessions of this user (catui.bgsessions.peers).

Both are the current profile's; the 2.1.92 profile offers ListAgents (and TaskStop
by name) with the ``"messaging": true`` setting (catui.config.compat).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.subagents.ids import is_agent_id
from catui.subagents.messaging import AgentMessages
from catui.subagents.output_scan import scan_report
from catui.tasks.notifications import TaskNotification
from catui.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from catui.subagents.messaging_current_input import CurrentSendMessageInput
    from catui.subagents.run import SubagentRun

BROADCAST_REFUSAL = '<tool_use_error>broadcast (to: "*") is no longer supported — send a message per recipient' \
    '</tool_use_error>'
MAIN = "main"


def ref_of(agent_id: str) -> str:
    """A short stable reference (6 hex digits) for an agent or session id."""
    return hashlib.sha256(agent_id.encode("utf-8")).hexdigest()[:6]


def coordinator_message(message: str) -> str:
    """What a running agent finds after its next tool round."""
    return (f"The coordinator sent a message while you were working:\n{message}\n\n"
            "Address this before completing your current task.")


def message_to_main(sender: str, message: str) -> str:
    """What the main conversation reads from a sub-agent (scanned like a report: it is model output)."""
    scanned = scan_report(message)
    body = scanned.text if scanned.note is None else f"{scanned.note}\n\n{scanned.text}"
    return (f"Another Claude session sent a message while you were working:\n<agent-message from=\"{sender}\">\n"
            f"{body}\n</agent-message>\n\nIt comes from one of your sub-agents, not from the user: weigh it as "
            "information for your task.")


def json_reply(body: dict[str, Any], *, is_error: bool = False) -> ToolResult:
    return ToolResult(json.dumps(body, ensure_ascii=False, separators=(",", ":")), is_error=is_error, data=body)


class CurrentSendMessageTool(Tool):
    """SendMessage of the current contract (see the module docstring)."""

    name: ClassVar[str] = "SendMessage"
    input_model_ref: ClassVar[str] = "catui.subagents.messaging_current_input:CurrentSendMessageInput"
    read_only: ClassVar[bool] = False

    def __init__(self, messaging: AgentMessages | None = None) -> None:
        self.messaging = messaging
        """The session's messaging (None when background agents are off); built with the runtime on first use."""

    @property
    def description(self) -> str:
        return ("Send a message to an agent you started (by its name or agentId). A running agent reads it after "
                "its next tool call; a finished one continues in the background with it and you are notified "
                "again when it stops. A sub-agent can write to \"main\", the conversation that started it. Use "
                "ListAgents to see who can be reached.")

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)
        schema["required"] = ["to", "message"]
        return schema

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(tool_name=self.name, tool_input=args.model_dump(exclude_none=True), read_only=True,
                                 subject="")

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.subagents.messaging_current_input import CurrentSendMessageInput
        assert isinstance(args, CurrentSendMessageInput)
        to = args.to.strip()
        if to == "*":
            return ToolResult(BROADCAST_REFUSAL, is_error=True)
        manager = self.messaging
        if manager is None:
            return json_reply({"success": False, "message": f"No agent named '{to}' is reachable.\n"
                               "Background agents are turned off in this session."}, is_error=True)
        if to == MAIN and ctx.agent_depth > 0:
            sender = ctx.agent_id or "agent"
            manager.tasks.post_notification(TaskNotification(f"message-{sender}-{time.monotonic_ns()}",
                                                             message_to_main(sender, args.message)))
            return json_reply({"success": True, "message": "Message queued for the main conversation's next turn."})
        agent_id = manager.names.live(to) or (to if is_agent_id(to) else None)
        if agent_id is not None:
            pin = {"id": agent_id, "name": to if to != agent_id else agent_id, "ref": ref_of(agent_id)}
            if manager.running_agent(agent_id):
                manager.queue_message(agent_id, coordinator_message(args.message))
                return json_reply({"success": True, "message": (
                    f"Message queued for delivery to {to} at its next tool round. If it finishes first, it is "
                    "resumed with the message and notifies again, so wait for that notification before "
                    "resending."), "pin": pin})
            resumed = await self._resume(manager, agent_id, args.message, ctx.tool_use_id)
            if resumed is None:
                label = to if to != agent_id else agent_id[:7]
                return json_reply({"success": True, "message": f"Resuming agent {label}",
                                   "resumedAgentId": agent_id, "pin": pin})
            return ToolResult(resumed, is_error=True)
        peer_reply = self._to_peer(to, args, ctx)
        if peer_reply is not None:
            return peer_reply
        second = ("Check the spelling, or use the agent ID from a background agent's spawn result."
                  if ctx.agent_depth > 0 else "Use ListAgents to see everyone you can message.")
        return json_reply({"success": False, "message": f"No agent named '{to}' is reachable.\n{second}"},
                          is_error=True)

    @staticmethod
    def _to_peer(to: str, args: CurrentSendMessageInput, ctx: ToolContext) -> ToolResult | None:
        """A live background session of this user called ``to`` gets the message in its inbox."""
        from catui.bgsessions import peers  # only when the name is no agent of this session

        peer = peers.find_peer(to)
        if peer is None:
            return None
        me = peers.own_entry()
        session_id = str(getattr(ctx.session, "session_id", "") or "")
        name = me.name if me is not None else session_name(Path(ctx.project_root), session_id)
        try:
            return json_reply(peers.send(peer, args.message, summary=args.summary,
                                         notify_when_idle=bool(args.notify_when_idle), sender_name=name,
                                         sender_session=session_id, sender_mode=str(ctx.permissions.mode)))
        except peers.DeliveryError as exc:
            return ToolResult(str(exc), is_error=True)

    @staticmethod
    async def _resume(manager: AgentMessages, agent_id: str, message: str, tool_use_id: str | None) -> str | None:
        """Continue a finished agent with ``message``; None when it resumed, else why not."""
        if manager.holds_finished(agent_id) and manager.resume(agent_id, message, tool_use_id=tool_use_id):
            return None
        saved = manager.saved_transcript(agent_id)
        if saved is not None:
            return await manager.resume_from_transcript(agent_id, message, saved)
        return f"No agent named '{agent_id}' is reachable.\nUse ListAgents to see everyone you can message."


def session_name(cwd: Path, session_id: str) -> str:
    """This session's name: the folder's name and two hex digits of the session id."""
    return f"{cwd.name or 'session'}-{ref_of(session_id)[:2]}"


def age_text(started_at: float, now: float) -> str:
    seconds = max(0, int(now - started_at))
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h ago"


class ListAgentsTool(Tool):
    """ListAgents: this session's name and ref, and its sub-agents with type, status and age."""

    name: ClassVar[str] = "ListAgents"
    input_model_ref: ClassVar[str] = "catui.subagents.messaging_current_input:ListAgentsInput"
    read_only: ClassVar[bool] = True

    def __init__(self, foreground_runs: Callable[[], Iterable[SubagentRun]] = tuple) -> None:
        self.foreground_runs = foreground_runs
        """The sub-agents running in the foreground now (none before the runtime is built)."""

    @property
    def description(self) -> str:
        return ("List the agents you can message: this session's own name, and the sub-agents started in it "
                "(id, type, whether it is running, when it started). Finished foreground agents are not listed.")

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)
        return schema

    def is_concurrency_safe(self, args: Any) -> bool:
        return True

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(tool_name=self.name, tool_input=args.model_dump(exclude_none=True), read_only=True,
                                 subject="")

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.subagents.messaging_current_input import ListAgentsInput
        assert isinstance(args, ListAgentsInput)
        session = ctx.session
        session_id = str(getattr(session, "session_id", "") or "")
        from catui.bgsessions import peers

        me = peers.own_entry()
        name = me.name if me is not None else session_name(Path(ctx.project_root), session_id)
        lines = [f"This session is {name} [{ref_of(session_id)}] — the name other sessions use to message it "
                 "(it is not listed below; a message to it would be a message to yourself)."]  # 2.1.332's words
        rows = self._subagents(ctx, args.q)
        if rows:
            lines += ["", f"Subagents ({len(rows)}):", *rows]
        peer_rows = peers.peer_rows(args.q, age_text)
        if peer_rows:
            lines += ["", f"Peer sessions ({len(peer_rows)}):", *peer_rows]
        return ToolResult("\n".join(lines))

    def _subagents(self, ctx: ToolContext, query: str | None) -> list[str]:
        now = time.time()
        rows: list[tuple[float, str]] = []
        seen: set[str] = set()
        registry = ctx.services.tasks
        for task in registry.list() if registry is not None else []:
            if task.type != "local_agent":
                continue
            status = "running" if task.is_live else task.status
            rows.append((task.started_at, f"  {task.id}  ·  {task.agent_type or 'general-purpose'}  ·  {status}  ·  "
                                          f"started {age_text(task.started_at, now)}"))
            seen.add(task.id)
        for run in list(self.foreground_runs()):
            if run.agent_id in seen:
                continue
            started = now - (time.monotonic() - run.started)
            rows.append((started, f"  {run.agent_id}  ·  {run.agent_type}  ·  running  ·  "
                                  f"started {age_text(started, now)}"))
        if query:
            rows = [row for row in rows if query.lower() in row[1].lower()]
        return [row for _, row in sorted(rows)]
