"""TodoWrite: keep the agent's task list for the current piece of work."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """\
Create and update a structured task list for the current work; the user sees it as your progress.

Use it for work with three or more distinct steps, when the user gives several tasks at once, or asks for \
a todo list. Skip it for a single simple step or a purely conversational answer.

- Each call replaces the whole list: send every item, each with content (imperative: "Run the tests"), \
activeForm (present continuous: "Running the tests") and status (pending, in_progress, completed).
- Keep exactly one item in_progress while you work; mark it completed as soon as it is done, not in \
batches, then move the next one to in_progress.
- Mark an item completed only when it is fully done: not while tests fail or the work is partial. Add new \
items for follow-up work you discover, and remove items that no longer apply."""


class TodoWriteTool(Tool):
    name = "TodoWrite"
    input_model_ref: ClassVar[str] = "catui.tools.todo_write_input:TodoWriteInput"
    read_only = True  # it changes the agent's own list, never the user's files

    @property
    def description(self) -> str:
        return DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.todo_write_input import TodoWriteInput
        assert isinstance(args, TodoWriteInput)
        old = list(ctx.todos)
        new = [item.model_dump() for item in args.todos]
        ctx.todos[:] = new
        counts = {s: sum(1 for t in new if t["status"] == s) for s in ("pending", "in_progress", "completed")}
        summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
        return ToolResult(
            "Todo list updated" + (f" ({summary})" if summary else " (now empty)") + ". Keep working through "
            "it and keep it current.",
            data={"old_todos": old, "new_todos": new},
        )
