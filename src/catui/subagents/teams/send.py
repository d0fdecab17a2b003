"""SendMessage inside a team (observed section 10): direct, broadcast, shutdown and plan approval.

:func:`route_team_message` answers a SendMessage call when it is team
traffic (the sender is the lead of a team or a teammate, and the recipient a
member, ``team-lead`` or ``"*"``); otherwise it returns None and SendMessage
goes on with its other recipients (named and background agents).
"""

from __future__ import annotations

from typing import Any, Protocol

from catui.permissions.model import PermissionMode
from catui.subagents.teams import protocol
from catui.subagents.teams.protocol import BROADCAST, LEAD_NAME, json_result
from catui.subagents.teams.roster import Member, Team
from catui.tools.base import ToolContext, ToolResult


class TeamRouter(Protocol):
    """What routing needs of the team (``catui.subagents.teams.coordinator.TeamCoordinator``)."""

    team: Team | None

    def post(self, recipient: str, sender: str, text: str, *, summary: str | None = None) -> None: ...

    def colour_of(self, name: str) -> str | None: ...

    def end_member(self, member: Member, reason: str) -> None: ...


def tool_use_error(text: str) -> ToolResult:
    return ToolResult(f"<tool_use_error>{text}</tool_use_error>", is_error=True)


def sender_name(ctx: ToolContext) -> str | None:
    """Who sends: a teammate by its member name, the lead (the main agent), or None (anyone else)."""
    if ctx.team is not None:
        return ctx.team.member_name
    return LEAD_NAME if ctx.agent_id is None else None


def route_team_message(coordinator: TeamRouter, to: str, message: Any, summary: str | None,
                       ctx: ToolContext) -> ToolResult | None:
    """The tool_result of a team message, or None when the call is not team traffic."""
    team = coordinator.team
    sender = sender_name(ctx)
    if team is None or sender is None:
        return None
    target = to.strip()
    if target != BROADCAST and target != LEAD_NAME and team.member(target) is None:
        if sender == LEAD_NAME:
            return None  # not a teammate: maybe a named or background agent of the lead
        return tool_use_error(f"No member of team \"{team.name}\" is called {target!r}. Members: "
                              f"{', '.join(team.names())}.")
    if target == sender:
        return tool_use_error("You cannot send a message to yourself.")
    gone = team.member(target)
    if gone is not None and (not gone.active or gone.exiting):
        return tool_use_error(f"{target} has left the team ({gone.stop_reason or 'stopped'}) and reads no more "
                              "messages.")
    is_text = isinstance(message, str)
    if target == BROADCAST and not is_text:
        return tool_use_error('structured messages cannot be broadcast (to: "*")')
    if is_text and not (summary or "").strip():
        return tool_use_error("summary is required when message is a string")
    if target == BROADCAST:
        return _broadcast(coordinator, team, sender, message, summary)
    if is_text:
        return _direct(coordinator, team, sender, target, message, summary)
    kind = getattr(message, "type", "")
    if kind == "shutdown_request":
        return _shutdown_request(coordinator, team, sender, target, message.reason)
    if kind == "shutdown_response":
        return _shutdown_response(coordinator, team, sender, target, message)
    return _plan_answer(coordinator, team, sender, target, message)


def _routing(coordinator: TeamRouter, sender: str, target: str, summary: str | None,
             content: str) -> dict[str, Any]:
    return {"sender": sender, "senderColor": coordinator.colour_of(sender), "target": f"@{target}",
            "targetColor": coordinator.colour_of(target), "summary": summary, "content": content}


def _direct(coordinator: TeamRouter, team: Team, sender: str, target: str, text: str,
            summary: str | None) -> ToolResult:
    coordinator.post(target, sender, text, summary=summary)
    member = team.member(sender)
    if member is not None and target != LEAD_NAME:
        member.peer_summaries.append(f"[to {target}] {summary}")
    return json_result({"success": True, "message": f"Message sent to {target}'s inbox",
                        "routing": _routing(coordinator, sender, target, summary, text)})


def _broadcast(coordinator: TeamRouter, team: Team, sender: str, text: str,
               summary: str | None) -> ToolResult:
    recipients = [m.name for m in team.active_members() if m.name != sender]
    if sender != LEAD_NAME:
        recipients.insert(0, LEAD_NAME)
    for name in recipients:
        coordinator.post(name, sender, text, summary=summary)
    return json_result({"success": True,
                        "message": f"Message broadcast to {len(recipients)} teammate(s): {', '.join(recipients)}",
                        "recipients": recipients,
                        "routing": _routing(coordinator, sender, "team", summary, text)})


def _shutdown_request(coordinator: TeamRouter, team: Team, sender: str, target: str,
                      reason: str | None) -> ToolResult:
    if sender != LEAD_NAME or team.member(target) is None:
        return tool_use_error("Only the team lead can ask a teammate to shut down (to: the teammate's name).")
    request_id = protocol.shutdown_request_id(target)
    coordinator.post(target, sender, protocol.shutdown_request(request_id, sender, reason))
    return json_result({"success": True, "message": f"Shutdown request sent to {target}. Request ID: {request_id}",
                        "request_id": request_id, "target": target})


def _shutdown_response(coordinator: TeamRouter, team: Team, sender: str, target: str,
                       message: Any) -> ToolResult:
    member = team.member(sender)
    if member is None or target != LEAD_NAME:
        return tool_use_error('shutdown_response is a teammate\'s answer to the lead: send it to "team-lead".')
    text = protocol.shutdown_answer(message.request_id, sender, approve=message.approve, reason=message.reason)
    coordinator.post(LEAD_NAME, sender, text)
    if not message.approve:
        return ToolResult(f'Shutdown rejected. Reason: "{message.reason or ""}". Continuing to work.')
    coordinator.end_member(member, "shutdown approved")
    return ToolResult(f"Shutdown approved. Sent confirmation to team-lead. Agent {sender} is now exiting.")


def _plan_answer(coordinator: TeamRouter, team: Team, sender: str, target: str, message: Any) -> ToolResult:
    member = team.member(target)
    if sender != LEAD_NAME or member is None:
        return tool_use_error("Only the team lead answers a teammate's plan (to: the teammate's name).")
    mode: PermissionMode = "default"
    coordinator.post(target, sender, protocol.plan_approval_answer(
        message.request_id, approved=message.approve, feedback=message.feedback, mode=mode))
    if message.approve:
        ctx = member.run.session.ctx
        ctx.permissions = ctx.permissions.with_mode(mode)
        return ToolResult(f"Plan approved for {target}. They will receive the approval and can proceed with "
                          "implementation.")
    return ToolResult(f'Plan rejected for {target} with feedback: "{message.feedback or ""}"')
