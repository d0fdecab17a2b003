"""The input models of :mod:`catui.tools.cron`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class CronCreateInput(ToolInput):
    cron: str = Field(description='A 5-field cron expression in local time, e.g. "*/5 * * * *".')
    prompt: str = Field(description="The prompt to send to the session when the schedule fires.")
    recurring: bool = Field(default=True, description="Fire on every match (true) or once (false).")
    durable: bool = Field(default=False, description="Keep the prompt across sessions (.catui/scheduled_tasks.json).")


class CronDeleteInput(ToolInput):
    id: str = Field(description="The id of the scheduled prompt to cancel.")


class CronListInput(ToolInput):
    pass
