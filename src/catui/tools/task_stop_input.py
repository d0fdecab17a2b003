"""The input model of :mod:`catui.tools.task_stop`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class TaskStopInput(ToolInput):
    task_id: str | None = Field(default=None, description="The id of the background task to stop.")
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id.")
