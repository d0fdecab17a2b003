"""TaskOutput: read (and optionally wait for) the output of a background task."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.tasks.registry import TaskRegistry
from catui.tools.base import Tool, ToolContext, ToolResult

MAX_OUTPUT_CHARS = 30_000

DESCRIPTION = """\
Get the output and status of a background task: a shell started with Bash's run_in_background, or a \
background agent.

- task_id is the id returned when the task started.
- block (default true) waits until the task finishes or timeout milliseconds pass (default 30000, at most \
600000); block=false returns what is there now.
- The same output is in the task's output file; reading that file with Read works as well and is preferred \
for long outputs. Background agents notify you when they finish, so there is no need to poll them."""


def no_such_task(task_id: str, registry: TaskRegistry) -> ToolResult:
    known = ", ".join(t.id for t in registry.list()) or "none"
    return ToolResult(f"No task found with ID {task_id!r}. Known task ids: {known}.", is_error=True)


def registry_of(ctx: ToolContext) -> TaskRegistry | None:
    return ctx.services.tasks


NO_REGISTRY = ToolResult(
    "Background tasks are not available in this session (no task registry).", is_error=True
)


class TaskOutputTool(Tool):
    name = "TaskOutput"
    input_model_ref: ClassVar[str] = "catui.tools.task_output_input:TaskOutputInput"
    read_only = True
    aliases = ("BashOutput", "AgentOutputTool")

    @property
    def description(self) -> str:
        return DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.task_output_input import TaskOutputInput
        assert isinstance(args, TaskOutputInput)
        registry = registry_of(ctx)
        if registry is None:
            return NO_REGISTRY
        if registry.get(args.task_id) is None:
            return no_such_task(args.task_id, registry)
        task = await registry.wait(args.task_id, args.timeout / 1000 if args.block else 0)
        reviewer = ctx.services.output_review
        # The deferred handoff review (auto mode) runs before the output is read, so its line is in it.
        warning = await reviewer.review_task(task.id, ctx) if reviewer is not None else None
        finished = task.done.is_set()
        retrieval = "success" if finished else ("timeout" if args.block else "not_ready")
        output = task.read_output()
        if len(output) > MAX_OUTPUT_CHARS:
            cut = len(output) - MAX_OUTPUT_CHARS
            output = (
                f"[{cut} earlier characters omitted; Read {task.output_file} for all of it]\n" + output[cut:]
            )
        parts = [
            f"<retrieval_status>{retrieval}</retrieval_status>",
            f"<task_id>{task.id}</task_id>",
            f"<task_type>{task.type}</task_type>",
            f"<status>{task.status}</status>",
        ]
        if task.exit_code is not None:
            parts.append(f"<exit_code>{task.exit_code}</exit_code>")
        parts.append(f"<output_file>{task.output_file}</output_file>")
        progress = task.metadata.get("progress_summary")
        if progress and not finished:  # a running background agent's latest progress summary
            parts.append(f"<progress_summary>{progress}</progress_summary>")
        if task.result and task.type == "local_agent":
            result = f"{warning}\n\n{task.result}" if warning else task.result
            parts.append(f"<result>\n{result}\n</result>")
        parts.append(
            f"<output>\n{output.rstrip()}\n</output>" if output.strip() else "<output>(none yet)</output>"
        )
        data = task.summary() | {"retrieval_status": retrieval, "output": output}
        return ToolResult("\n".join(parts), data=data)
