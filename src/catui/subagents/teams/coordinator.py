"""``TeamCoordinator``: the team a session leads — create, spawn, route, deliver, shut down.

One per application (``ToolServices.teams``), shared by the lead and its
teammates. State lives twice: in memory (:mod:`.roster`, what wakes whom) and
on disk (:mod:`.files`, Claude Code's shapes, for other processes and for
``catui teams``). Teammates run behind a :class:`~.backend.TeammateBackend`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.messages import Block, Message
from catui.session.events import Event
from catui.session.session import Session
from catui.subagents import task_events
from catui.subagents.messaging import AgentMessages
from catui.subagents.resolve import AgentSpawnError
from catui.subagents.run import SpawnRequest
from catui.subagents.send_message import SendMessageTool
from catui.subagents.teams import protocol
from catui.subagents.teams.backend import TeammateBackend
from catui.subagents.teams.files import TeamFileError, TeamFiles, team_name_problem
from catui.subagents.teams.plan_approval import TeammateExitPlanModeTool
from catui.subagents.teams.protocol import LEAD_NAME, json_result
from catui.subagents.teams.roster import Member, Team
from catui.subagents.teams.spawn import TeammatePlanner
from catui.tools.base import ToolContext, ToolResult

DEFAULT_SHUTDOWN_GRACE_S = 10.0
"""How long print mode waits for teammates to answer catui's own shutdown requests before stopping them."""


def shutdown_reminder(team: Team) -> str:
    """The one extra lead turn of print mode when its turn ends with teammates still active."""
    names = ", ".join(m.name for m in team.active_members())
    return (
        "<system-reminder>\n"
        f'You are running non-interactively and your team "{team.name}" still has active members: {names}. '
        "Nobody can reply to you once you give your final answer, so shut the team down first: send each "
        'teammate a {"type": "shutdown_request"} with SendMessage, wait for their approvals, then call '
        "TeamDelete, and only then answer. If the team is still active when this turn ends, catui stops the "
        "teammates itself.\n"
        "</system-reminder>"
    )


class TeamCoordinator:
    """The team of one lead session (a leader manages one team at a time)."""

    def __init__(
        self, root: Path, planner: TeammatePlanner, backend: TeammateBackend, lead: Session,
        *, grace_s: float = DEFAULT_SHUTDOWN_GRACE_S, messaging: AgentMessages | None = None,
    ) -> None:
        self.root = root
        self.messaging = messaging
        """What a teammate's SendMessage reaches besides the team (the session's background agents)."""
        self.planner = planner
        self.backend = backend
        self.lead = lead
        self.grace_s = grace_s
        self.team: Team | None = None
        self.shutdown_log: list[str] = []
        """What catui did to end a team itself (print mode), one line each, for the user."""

    # -- TeamCreate / TeamDelete ------------------------------------------------------------------

    def create_team(self, team_name: str, description: str | None, agent_type: str | None,
                    ctx: ToolContext) -> ToolResult:
        if self.team is not None:
            return ToolResult(
                f'Already leading team "{self.team.name}". A leader can only manage one team at a time. '
                "Use TeamDelete to end the current team before creating a new one.", is_error=True)
        problem = team_name_problem(team_name)
        if problem is not None:
            return ToolResult(problem, is_error=True)
        files = TeamFiles(self.root, team_name)
        if files.exists():
            return ToolResult(
                f'A team "{team_name}" already exists at {files.config_path} (left by another session). Pick '
                f"another team_name, or remove it with `catui teams rm {team_name}`.", is_error=True)
        lead_id = protocol.agent_id_of(LEAD_NAME, team_name)
        now = protocol.now_ms()
        config: dict[str, Any] = {"name": team_name}
        if description:
            config["description"] = description
        config.update({
            "createdAt": now, "leadAgentId": lead_id, "leadSessionId": self.lead.session_id,
            "members": [{"agentId": lead_id, "name": LEAD_NAME, "agentType": agent_type or LEAD_NAME,
                         "model": self.lead.config.model, "joinedAt": now, "cwd": str(ctx.cwd),
                         "subscriptions": []}],
        })
        try:
            files.write_config(config)
            files.inbox_path(LEAD_NAME).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return ToolResult(f"Could not create the team's files under {files.folder}: {exc}", is_error=True)
        self.team = Team(name=team_name, files=files, lead_agent_id=lead_id)
        return json_result({"team_name": team_name, "team_file_path": str(files.config_path),
                            "lead_agent_id": lead_id})

    def delete_team(self) -> ToolResult:
        team = self.team
        if team is None:
            return ToolResult("There is no team to delete: this session leads none. Create one with TeamCreate.",
                              is_error=True)
        active = team.active_members()
        if active:
            names = ", ".join(m.name for m in active)
            return json_result({
                "success": False,
                "message": f"Cannot cleanup team with {len(active)} active member(s): {names}. "
                           "Use requestShutdown to gracefully terminate teammates first.",
                "team_name": team.name})
        team.files.remove()
        self.team = None
        return json_result({"success": True, "message": f'Cleaned up directories and worktrees for team "{team.name}"',
                            "team_name": team.name})

    # -- spawning ---------------------------------------------------------------------------------

    def wants_teammate(self, request: SpawnRequest, parent_ctx: ToolContext) -> bool:
        """Whether an Agent call starts a teammate: the lead's call, with a name and a team (named, or current)."""
        is_lead = parent_ctx.agent_id is None and parent_ctx.team is None
        return is_lead and bool(request.name) and (bool(request.team_name) or self.team is not None)

    async def spawn(self, request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult:
        team = self.team
        team_name = request.team_name or (team.name if team is not None else "")
        if team is None or team_name != team.name:
            return ToolResult(f'Team "{team_name}" does not exist. Call spawnTeam first to create the team.',
                              is_error=True)
        # Name, colour and order are taken before the first await, so that concurrent calls of one
        # message get them in tool_use order and never the same name.
        name = protocol.unique_name(str(request.name), team.names())
        index = team.spawned
        team.spawned += 1
        team.reserved[name] = index
        agent_id = protocol.agent_id_of(name, team.name)
        try:
            run = await self.planner.prepare(
                request, parent_ctx, team_name=team.name, name=name, agent_id=agent_id,
                send_message=SendMessageTool(self.messaging, self), exit_plan=TeammateExitPlanModeTool(self),
            )
        except AgentSpawnError as exc:
            return ToolResult(str(exc), is_error=True)
        except CatuiError as exc:
            return ToolResult(f"Agent could not start: {exc}", is_error=True)
        finally:
            team.reserved.pop(name, None)
        member = Member(name=name, agent_id=agent_id, color=protocol.colour_for(index), index=index,
                        agent_type=run.agent_type, model=run.model.model_id, run=run,
                        plan_mode_required=run.session.ctx.permissions.mode == "plan")
        team.members[name] = member
        entry = {"agentId": agent_id, "name": name, "agentType": member.agent_type, "model": member.model,
                 "prompt": request.prompt, "color": member.color, "planModeRequired": member.plan_mode_required,
                 "joinedAt": protocol.now_ms(), "cwd": str(run.session.ctx.cwd), "subscriptions": [],
                 "backendType": self.backend.backend_type}
        team.files.update_config(lambda config: config.setdefault("members", []).append(entry))
        self._emit(task_events.task_started(run, task_type="in_process_teammate"))
        self.backend.start(member, self)
        return ToolResult(
            f"Spawned successfully.\nagent_id: {agent_id}\nname: {name}\nteam_name: {team.name}\n"
            "The agent is now running and will receive instructions via mailbox.",
            data={"status": "teammate_spawned", "agent_id": agent_id, "name": name, "team_name": team.name,
                  "color": member.color})

    # -- messages ---------------------------------------------------------------------------------

    def post(self, recipient: str, sender: str, text: str, *, summary: str | None = None) -> None:
        """Put one message in ``recipient``'s inbox and wake whoever waits for it."""
        team = self.team
        if team is None:
            return
        entry: dict[str, Any] = {"from": sender, "text": text}
        if summary:
            entry["summary"] = summary
        entry["timestamp"] = protocol.iso_now()
        colour = self.colour_of(sender)
        if colour:
            entry["color"] = colour
        team.files.append_message(recipient, entry)
        sent_by = team.member(sender)
        if sent_by is not None:
            sent_by.last_message = summary or text[:200]
        if recipient == LEAD_NAME:
            team.lead_mail.set()
            team.notify_change()
        else:
            member = team.member(recipient)
            if member is not None:
                member.wake.set()

    def colour_of(self, name: str) -> str | None:
        member = self.team.member(name) if self.team is not None else None
        return member.color if member is not None else None

    def submit_plan(self, name: str, plan_file: str, plan: str) -> str:
        """A plan-mode teammate's plan, sent to the lead; returns the request id."""
        team = self.team
        request_id = protocol.plan_request_id(name, team.name if team is not None else "")
        self.post(LEAD_NAME, name, protocol.plan_approval_request(name, plan_file, plan, request_id))
        return request_id

    def take_lead_message(self) -> str | None:
        """The lead's unread messages as one user message's text (marked read), or None."""
        team = self.team
        if team is None:
            return None
        team.lead_mail.clear()
        entries = team.files.take_unread(LEAD_NAME)
        return protocol.join_blocks(entries, with_summary=False) if entries else None

    def end_member(self, member: Member, reason: str) -> None:
        """Take a member off the team (shutdown approved or forced): off the config; its loop ends after the
        tool round under way."""
        member.exiting = True
        member.stop_reason = reason
        team = self.team
        if team is not None:
            with contextlib.suppress(TeamFileError, OSError):
                team.files.update_config(lambda config: config.__setitem__(
                    "members", [m for m in config.get("members", []) if m.get("name") != member.name]))
        # Abort the loop, not the executor: the tool round under way (the approval) is still recorded, and
        # the loop stops before it would send that round back to the model. A forced stop is the backend's.
        member.run.session.abort()
        member.wake.set()

    # -- TeammateHost (the backend's side) --------------------------------------------------------

    def forward(self, member: Member, event: Event) -> None:
        self._emit(event)

    def turn_ended(self, member: Member, failure: str | None) -> None:
        team = self.team
        if team is None:
            return
        if failure is not None:
            self.post(LEAD_NAME, member.name,
                      f"Teammate {member.name} could not finish its turn: {failure}. Message it to try again, or "
                      "shut it down.", summary="turn failed")
        summary = member.peer_summaries[-1] if member.peer_summaries else None
        member.peer_summaries.clear()
        if not team.files.has_unread(member.name):  # another message waits: it works on, no idle notice
            self.post(LEAD_NAME, member.name, protocol.idle_notification(member.name, summary))
        team.notify_change()

    async def next_message(self, member: Member) -> Message | None:
        team = self.team
        while team is not None and member.active and not member.exiting:
            member.wake.clear()
            entries = team.files.take_unread(member.name)
            if entries:
                text = protocol.join_blocks(protocol.shutdown_first(entries), with_summary=True)
                return {"role": "user", "content": text}
            await member.wake.wait()
        return None

    def stopped(self, member: Member) -> None:
        member.active = False
        if member.stop_reason is None:
            self.end_member(member, f"stopped: {member.crash}" if member.crash else "stopped")
            if member.crash:
                with contextlib.suppress(TeamFileError, OSError):
                    self.post(LEAD_NAME, member.name, f"Teammate {member.name} stopped: {member.crash}",
                              summary="stopped")
        if self.team is not None:
            self.team.notify_change()

    def _emit(self, event: Event) -> None:
        # Teammates work on while the lead waits for its next turn; their events come with that turn.
        self.lead.emit_or_hold(event)

    # -- the end of a print-mode run --------------------------------------------------------------

    async def next_lead_input(self, waiter: Callable[[], Awaitable[list[Block] | None]], *,
                              end_team: bool = True) -> str | list[Block] | None:
        """What starts the lead's next turn: teammates' messages or a background agent's notification.

        ``end_team`` (print mode, one-shot SDK ``query``): when the team has gone quiet, the shutdown
        reminder (once), then None after catui has stopped the teammates the lead left running. Without
        it (a ``CatuiClient`` that lives on), the lead simply waits for its team's next message.
        """
        team = self.team
        notification: asyncio.Future[list[Block] | None] | None = asyncio.ensure_future(waiter())
        try:
            while True:
                if self.team is not team or team is None:
                    return await notification if notification is not None else None
                mail = self.take_lead_message()
                if mail is not None:
                    return mail
                if notification is not None and notification.done():
                    result = notification.result()
                    if result is not None:
                        return result
                    notification = None
                settled = not any(m.busy or m.wake.is_set() for m in team.active_members())
                if settled and notification is None and (end_team or not team.active_members()):
                    if not team.active_members():
                        return None
                    if not team.reminded:
                        team.reminded = True
                        return shutdown_reminder(team)
                    await self.shutdown_remaining("the lead ended its print-mode run with the team still active")
                    return None
                team.changed.clear()
                waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(team.changed.wait())}
                if notification is not None:
                    waits.add(notification)
                _done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                for waiter_future in pending:
                    if waiter_future is not notification:
                        waiter_future.cancel()
        finally:
            if notification is not None and not notification.done():
                notification.cancel()
                with contextlib.suppress(BaseException):
                    await notification

    async def shutdown_remaining(self, why: str) -> list[str]:
        """Ask every active teammate to shut down, wait up to the grace period, then stop the rest."""
        team = self.team
        if team is None:
            return []
        asked = team.active_members()
        for member in asked:
            request_id = protocol.shutdown_request_id(member.name)
            self.post(member.name, LEAD_NAME, protocol.shutdown_request(request_id, LEAD_NAME, why))
        deadline = time.monotonic() + self.grace_s

        def answered(m: Member) -> bool:
            return not m.active or m.exiting or (
                not m.busy and not m.wake.is_set() and not team.files.has_unread(m.name))

        while not all(answered(m) for m in asked):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            team.changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(team.changed.wait(), timeout=left)
        lines = []
        for member in asked:
            if member.active and not member.exiting:
                how = "did not approve the shutdown request" if answered(member) else \
                    f"did not answer within {self.grace_s:g} s"
                self.end_member(member, f"stopped by catui: {how}")
                await self.backend.stop(member)
                lines.append(f'team "{team.name}": stopped teammate {member.name} ({how}; {why})')
            else:
                lines.append(f'team "{team.name}": teammate {member.name} shut down ({member.stop_reason})')
        self.shutdown_log.extend(lines)
        with contextlib.suppress(TeamFileError, OSError):
            team.files.update_config(lambda config: config.__setitem__(
                "shutdown", {"at": protocol.now_ms(), "reason": why, "log": lines}))
        return lines

    async def aclose(self) -> None:
        """Stop every teammate still running (the application is closing)."""
        team = self.team
        if team is None:
            return
        for member in team.running_members():
            if not member.exiting:
                self.end_member(member, "the session ended")
            await self.backend.stop(member)
