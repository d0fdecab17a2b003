"""A teammate's plan and run, made by the one child planner and builder (observed section 10).

What differs from an ordinary child: its id (``<name>@<team>``), its first
message (the prompt as a ``<teammate-message>`` from the lead), its system
prompt (the lead's own, then the team section, then a custom agent's body,
then the usual notes and environment), its tools (the child's set plus
SendMessage, never Agent-for-teammates or Team*, ExitPlanMode in plan mode),
its model (general-purpose runs on opus unless the call names one) and its
context (``ToolContext.team``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from catui.messages import Block
from catui.subagents.child_session import ChildTranscripts, build_child_session
from catui.subagents.plan import ChildPlanner, parent_session
from catui.subagents.resolve import DEFAULT_AGENT_TYPE
from catui.subagents.run import SpawnRequest, SubagentRun
from catui.subagents.send_message import SendMessageTool
from catui.subagents.teams.plan_approval import TeammateExitPlanModeTool
from catui.subagents.teams.protocol import LEAD_NAME, teammate_message_block
from catui.telemetry.events import Telemetry
from catui.tools.base import TeamMembership, Tool, ToolContext

TEAM_TOOLS = frozenset({"TeamCreate", "TeamDelete"})
DEFAULT_TEAMMATE_MODEL = "opus"
"""A general-purpose teammate's model when the call names none (as observed; the lead may run another)."""


def team_section(name: str, team_name: str, *, plan_mode: bool) -> str:
    """The system prompt section that makes a child a team member."""
    lines = [
        "# You are on an agent team",
        f'You are "{name}" (agent id {name}@{team_name}), a member of the team "{team_name}". '
        f'The team lead ("{LEAD_NAME}") gave you your task and coordinates the team.',
        "- Nobody reads the plain text you write: not the lead, not your teammates, not the user. Whatever "
        "someone should know, send it with the SendMessage tool: to \"team-lead\", to a teammate by name, or "
        'to "*" for every teammate (each broadcast costs every teammate a turn: use it rarely). Always give '
        "a short summary with a text message.",
        "- Messages for you arrive as <teammate-message> blocks at the start of your next turn.",
        "- When your task is done, report to the lead with SendMessage and end your turn. You then wait, idle, "
        "until someone writes to you; the lead is told when you go idle.",
        '- A message of type "shutdown_request" asks you to stop. Answer it with SendMessage to the lead: '
        '{"type": "shutdown_response", "request_id": <its requestId>, "approve": true} to stop, or approve: false '
        "with a reason to keep working.",
    ]
    if plan_mode:
        lines.append(
            "- You start in plan mode: explore with read-only tools, then call ExitPlanMode with your plan. The "
            "lead approves or rejects it; wait for the answer (a plan_approval_response) before changing anything."
        )
    return "\n".join(lines)


def teammate_prompt(description: str, prompt: str) -> str:
    """The first message's text: the prompt as a message from the lead, summarised by the description."""
    return teammate_message_block(LEAD_NAME, prompt, summary=description)


class TeammatePlanner:
    """Plans and builds a teammate's run on :class:`ChildPlanner` and :func:`build_child_session`."""

    def __init__(self, planner: ChildPlanner, transcripts: ChildTranscripts, telemetry: Telemetry | None) -> None:
        self.planner = planner
        self.transcripts = transcripts
        self.telemetry = telemetry

    async def prepare(
        self, request: SpawnRequest, parent_ctx: ToolContext, *, team_name: str, name: str, agent_id: str,
        send_message: SendMessageTool, exit_plan: TeammateExitPlanModeTool,
    ) -> SubagentRun:
        """The teammate's run, built but not started. Raises AgentSpawnError / CatuiError like any child."""
        general = request.subagent_type in (None, DEFAULT_AGENT_TYPE)
        planned_request = dataclasses.replace(
            request,
            prompt=teammate_prompt(request.description, request.prompt),
            run_in_background=False,
            model=request.model or (DEFAULT_TEAMMATE_MODEL if general else None),
            name=name,
            team_name=team_name,
        )
        plan = await self.planner.plan_child(planned_request, parent_ctx, agent_id=agent_id)
        plan_mode = plan.permissions.mode == "plan"
        lead = parent_session(parent_ctx)
        tools = _teammate_tools(plan.tools, send_message, exit_plan if plan_mode else None)
        system = [
            *_blocks(lead.config.system_prompt),
            {"type": "text", "text": team_section(name, team_name, plan_mode=plan_mode)},
            *_own_and_notes(plan.system_prompt, custom=not plan.definition.is_built_in),
        ]
        plan = dataclasses.replace(
            plan, request=dataclasses.replace(request, name=name, team_name=team_name), tools=tools,
            system_prompt=system, is_async=False, query_source="agent:teammate",
            team=TeamMembership(team_name=team_name, in_process=True, member_name=name),
        )
        try:
            run = build_child_session(plan, parent_ctx, lead, self.transcripts, self.planner.deps)
        except BaseException:
            await plan.release(self.planner.worktrees)
            raise
        run.stop_event = asyncio.Event()  # its own stop: the lead's turns ending or aborting do not stop it
        return run


def _teammate_tools(tools: list[Tool], send_message: SendMessageTool,
                    exit_plan: TeammateExitPlanModeTool | None) -> list[Tool]:
    """The teammate's tools: its planned ones without the team tools, with its own SendMessage (and, in plan
    mode, the ExitPlanMode that sends the plan to the lead)."""
    kept = [t for t in tools if t.name not in TEAM_TOOLS and t.name != SendMessageTool.name]
    kept.append(send_message)
    if exit_plan is not None:
        kept = [t for t in kept if t.name != TeammateExitPlanModeTool.name]
        kept.append(exit_plan)
    return sorted(kept, key=lambda t: t.name)


def _blocks(prompt: Any) -> list[Block]:
    if isinstance(prompt, str):
        return [{"type": "text", "text": prompt}] if prompt else []
    return [dict(b) for b in prompt or []]


def _own_and_notes(blocks: list[Block], *, custom: bool) -> list[Block]:
    """The child prompt's blocks: a custom agent's body under a heading, a built-in's own prompt left out."""
    if not blocks or str(blocks[0].get("text", "")).startswith("Notes:"):
        return list(blocks)
    own, rest = blocks[0], blocks[1:]
    if not custom:
        return list(rest)
    return [{"type": "text", "text": f"# Your role on the team\n{own.get('text', '')}"}, *rest]
