"""The input models of :mod:`catui.tools.todo_write`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from catui.tools.tool_input import ToolInput


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    content: str = Field(min_length=1, description="What to do, in imperative form.")
    status: Literal["pending", "in_progress", "completed"] = Field(description="The item's state.")
    activeForm: str = Field(
        min_length=1, description="The same, in present continuous form, shown while it runs."
    )


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The complete, updated todo list.")
