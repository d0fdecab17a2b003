"""CronCreate, CronDelete and CronList: the session's scheduled prompts (observed section 12).

The schedule itself is :class:`catui.tasks.schedule.CronSchedule`, handed down in
``ToolContext.services.schedule``; these tools only translate calls and results.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from catui.errors import CatuiError
from catui.tasks.schedule import CronSchedule, ScheduledPrompt
from catui.tools.base import Tool, ToolContext, ToolResult

CREATE_DESCRIPTION = """\
Schedule a prompt to be sent to this session later, on a 5-field cron expression read in local time \
(minute hour day-of-month month day-of-week; "*/10 * * * *" = every ten minutes, "30 14 * * 1-5" = \
14:30 on weekdays).

- recurring (default true) repeats on every match; false fires once at the next match and is then removed.
- durable: true keeps the prompt in the project's .catui/scheduled_tasks.json so that the next \
interactive session restores it; otherwise it lasts as long as this session.
- A scheduled prompt arrives between turns, as if the user had typed it; it never interrupts a turn. \
Print-mode runs (catui -p) do not fire scheduled prompts.
- Returns the job's id, which CronDelete takes."""

DELETE_DESCRIPTION = (
    "Cancel a scheduled prompt by the id CronCreate returned (CronList shows the ids); a durable prompt is "
    "removed from .catui/scheduled_tasks.json too."
)

LIST_DESCRIPTION = "List this session's scheduled prompts: id, cron expression, next run, whether recurring or durable."


def _schedule(ctx: ToolContext) -> CronSchedule | None:
    return ctx.services.schedule


_NO_SCHEDULE = ToolResult(
    "Scheduled prompts are not available in this session (no scheduler was set up).", is_error=True
)


def _describe(entry: ScheduledPrompt) -> str:
    when = datetime.fromisoformat(entry.next_fire).strftime("%Y-%m-%d %H:%M %Z").strip()
    kind = "recurring" if entry.recurring else "one-shot"
    durable = ", durable" if entry.durable else ""
    return f"{entry.id}: '{entry.cron}' ({kind}{durable}), next at {when}: {entry.prompt}"


class CronCreateTool(Tool):
    name = "CronCreate"
    input_model_ref: ClassVar[str] = "catui.tools.cron_input:CronCreateInput"
    read_only = True  # it changes the session's own schedule, never the user's files

    @property
    def description(self) -> str:
        return CREATE_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.cron_input import CronCreateInput
        assert isinstance(args, CronCreateInput)
        schedule = _schedule(ctx)
        if schedule is None:
            return _NO_SCHEDULE
        try:
            entry = schedule.create(args.cron, args.prompt, recurring=args.recurring, durable=args.durable)
        except CatuiError as exc:
            return ToolResult(str(exc), is_error=True)
        return ToolResult(f"Scheduled {_describe(entry)}", data=entry.to_json())


class CronDeleteTool(Tool):
    name = "CronDelete"
    input_model_ref: ClassVar[str] = "catui.tools.cron_input:CronDeleteInput"
    read_only = True

    @property
    def description(self) -> str:
        return DELETE_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.cron_input import CronDeleteInput
        assert isinstance(args, CronDeleteInput)
        schedule = _schedule(ctx)
        if schedule is None:
            return _NO_SCHEDULE
        entry = schedule.delete(args.id)
        if entry is None:
            return ToolResult(f"No scheduled prompt has id '{args.id}'; CronList shows the ids.", is_error=True)
        return ToolResult(f"Cancelled scheduled prompt {entry.id}.", data=entry.to_json())


class CronListTool(Tool):
    name = "CronList"
    input_model_ref: ClassVar[str] = "catui.tools.cron_input:CronListInput"
    read_only = True

    @property
    def description(self) -> str:
        return LIST_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        schedule = _schedule(ctx)
        if schedule is None:
            return _NO_SCHEDULE
        entries = schedule.entries()
        if not entries:
            return ToolResult("No scheduled prompts.", data={"tasks": []})
        return ToolResult(
            "\n".join(_describe(e) for e in entries), data={"tasks": [e.to_json() for e in entries]}
        )
