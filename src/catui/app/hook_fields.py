"""The hook input fields of the current Claude Code contract (observed-cc-now.md §9; catui.config.compat).

``prompt_id`` on every event but SessionStart (one id per user prompt of the
main conversation, shared by its sub-agents' hooks), ``effort`` on tool hooks,
Stop and SubagentStop, and on Stop and SubagentStop the running background
agents (``background_tasks``) and the session's scheduled prompts
(``session_crons``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catui.messages import is_real_prompt

if TYPE_CHECKING:
    from catui.hooks.runner import HookRunner
    from catui.session.session import Session
    from catui.tasks.registry import TaskRegistry
    from catui.tasks.schedule import CronSchedule
    from catui.tools.base import ToolContext

EFFORT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"})
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})


def install_current_hook_fields(runner: HookRunner, session: Session, tasks: TaskRegistry | None,
                                schedule: CronSchedule | None) -> None:
    """Make the main session's hook runner (and its sub-agents', which copy it) add the current contract's
    fields, read from ``session``, its background ``tasks`` and its ``schedule``."""

    def fields(event: str, _ctx: ToolContext | None) -> Mapping[str, Any]:
        out: dict[str, Any] = {}
        if event != "SessionStart":
            prompts = sum(1 for m in session.messages if is_real_prompt(m))
            if event == "UserPromptSubmit":
                prompts += 1  # the prompt it submits is not in the conversation yet: its turn's id
            out["prompt_id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"catui:{session.session_id}:{prompts}"))
        if event in EFFORT_EVENTS:
            out["effort"] = {"level": session.config.effort or "medium"}
        if event in STOP_EVENTS:
            out["background_tasks"] = [
                {"id": t.id, "type": "subagent", "status": t.status, "description": t.description,
                 "agent_type": t.agent_type} if t.type == "local_agent" else
                # a running workflow (claude-agent-sdk's BackgroundTaskSummary: type "workflow" with its name)
                {"id": t.id, "type": "workflow", "status": t.status, "description": t.description,
                 "name": t.metadata.get("workflowName")}
                for t in (tasks.list() if tasks is not None else [])
                if t.type in ("local_agent", "local_workflow") and t.is_live]
            out["session_crons"] = [p.to_json() for p in schedule.entries()] if schedule is not None else []
        return out

    runner.payload_extras = fields
    runner.current_contract = True
