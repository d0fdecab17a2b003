"""The input model of :mod:`catui.tools.task_output`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class TaskOutputInput(ToolInput):
    task_id: str = Field(description="The id of the task to read.")
    block: bool = Field(default=True, description="Wait for the task to finish (default true).")
    timeout: float = Field(
        default=30000,
        ge=0,
        le=600000,
        description="How long to wait, in milliseconds (default 30000, max 600000).",
    )
