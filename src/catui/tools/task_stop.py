"""TaskStop: stop a running background task."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult
from catui.tools.task_output import NO_REGISTRY, no_such_task, registry_of

DESCRIPTION = """\
Stop a running background task (a background shell or a background agent) by its id.

- Returns the task's final status. Stopping a task that already finished changes nothing.
- Use it to end servers and watchers you started with run_in_background once you no longer need them."""


class TaskStopInput(ToolInput):
    task_id: str | None = Field(default=None, description="The id of the background task to stop.")
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id.")


class TaskStopTool(Tool):
    name = "TaskStop"
    input_model = TaskStopInput
    aliases = ("KillShell",)

    @property
    def description(self) -> str:
        return DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        assert isinstance(args, TaskStopInput)
        task_id = args.task_id or args.shell_id
        if not task_id:
            return ToolResult("Give the id of the task to stop in task_id.", is_error=True)
        registry = registry_of(ctx)
        if registry is None:
            return NO_REGISTRY
        task = registry.get(task_id)
        if task is None:
            return no_such_task(task_id, registry)
        if not task.is_running:
            return ToolResult(
                f"Task {task_id} is not running (status: {task.status}); nothing to stop.",
                data=task.summary(),
            )
        task = await registry.stop(task_id)
        return ToolResult(
            f"Stopped task {task_id} ({task.description}); status: {task.status}.", data=task.summary()
        )
