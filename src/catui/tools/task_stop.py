"""TaskStop: stop a running background task, or a sub-agent running in the foreground."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.tools.base import SubagentSpawner, Tool, ToolContext, ToolResult
from catui.tools.task_output import NO_REGISTRY, no_such_task, registry_of

DESCRIPTION = """\
Stop a running task by its id: a background shell, a background agent, or an agent running in the foreground.

- Returns the task's final status. Stopping a task that already finished changes nothing.
- Use it to end servers and watchers you started with run_in_background once you no longer need them."""


class TaskStopTool(Tool):
    name = "TaskStop"
    input_model_ref: ClassVar[str] = "catui.tools.task_stop_input:TaskStopInput"
    aliases = ("KillShell",)

    @property
    def description(self) -> str:
        return DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.task_stop_input import TaskStopInput
        assert isinstance(args, TaskStopInput)
        task_id = args.task_id or args.shell_id
        if not task_id:
            return ToolResult("Give the id of the task to stop in task_id.", is_error=True)
        registry = registry_of(ctx)
        runtime = ctx.services.subagents
        task = registry.get(task_id) if registry is not None else None
        if task is None and registry is not None and runtime is not None:
            # A background agent's name stands for its id (Claude Code 2.1.332; catui's messaging).
            named = runtime.live_agent_id(task_id)
            if named is not None:
                task_id = named
                task = registry.get(task_id)
        if task is None and runtime is not None and runtime.running_in_foreground(task_id):
            return await _stop_foreground_agent(runtime, task_id)
        if registry is None:
            return NO_REGISTRY
        if task is None:
            return no_such_task(task_id, registry)
        if not task.is_live:
            return ToolResult(
                f"Task {task_id} is not running (status: {task.status}); nothing to stop.",
                data=task.summary(),
            )
        task = await registry.stop(task_id)
        return ToolResult(
            f"Stopped task {task_id} ({task.description}); status: {task.status}.", data=task.summary()
        )


async def _stop_foreground_agent(runtime: SubagentSpawner, agent_id: str) -> ToolResult:
    """Stop a sub-agent whose parent is waiting for it; that Agent call returns an error result."""
    run = await runtime.stop_foreground(agent_id)
    if run is None:  # it ended between the look-up and the stop
        return ToolResult(f"Agent {agent_id} is not running any more; nothing to stop.")
    data = {"task_id": agent_id, "task_type": "local_agent", "status": "stopped", "description": run.description}
    return ToolResult(
        f"Stopped agent {agent_id} ({run.description}), which was running in the foreground; its Agent call "
        "returns with what it had done so far.",
        data=data,
    )
