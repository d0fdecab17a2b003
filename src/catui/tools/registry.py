"""The built-in tools, sorted by name, and lookup by name or alias."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from catui.tools.base import Tool
from catui.tools.bash import BashTool
from catui.tools.cron import CronCreateTool, CronDeleteTool, CronListTool
from catui.tools.edit import EditTool
from catui.tools.glob import GlobTool
from catui.tools.grep import GrepTool
from catui.tools.notebook_edit import NotebookEditTool
from catui.tools.plan_mode import EnterPlanModeTool, ExitPlanModeTool
from catui.tools.read import ReadTool
from catui.tools.task_output import TaskOutputTool
from catui.tools.task_stop import TaskStopTool
from catui.tools.todo_write import TodoWriteTool
from catui.tools.web_fetch import WebFetchTool
from catui.tools.worktree_session import EnterWorktreeTool, ExitWorktreeTool
from catui.tools.write import WriteTool


def builtin_tools(*, interactive: bool = False, extra: Iterable[Tool] = ()) -> list[Tool]:
    """Fresh instances of catui's built-in tools plus ``extra`` (the Agent tool, MCP tools), sorted by name.

    AskUserQuestion is included only when ``interactive`` (a person can answer).
    """
    tools: list[Tool] = [
        BashTool(),
        CronCreateTool(),
        CronDeleteTool(),
        CronListTool(),
        EditTool(),
        EnterPlanModeTool(),
        EnterWorktreeTool(),
        ExitPlanModeTool(),
        ExitWorktreeTool(),
        GlobTool(),
        GrepTool(),
        NotebookEditTool(),
        ReadTool(),
        TaskOutputTool(),
        TaskStopTool(),
        TodoWriteTool(),
        WebFetchTool(),
        WriteTool(),
    ]
    if interactive:  # a person can answer: print mode and the SDK never offer it
        # lazy (catui.lazy): interactive sessions only
        from catui.tools.ask_user_question import AskUserQuestionTool, ask_user_question_enabled

        if ask_user_question_enabled(interactive=interactive):
            tools.append(AskUserQuestionTool(enabled=True))
    tools.extend(extra)
    return sorted((t for t in tools if t.is_enabled()), key=lambda t: t.name)


def find_tool(tools: Sequence[Tool], name: str) -> Tool | None:
    """The tool called ``name``, or whose aliases include it (``Task`` finds Agent, ``KillShell`` TaskStop)."""
    for tool in tools:
        if tool.name == name:
            return tool
    for tool in tools:
        if name in tool.aliases:
            return tool
    return None


def tool_names(tools: Iterable[Tool]) -> list[str]:
    return [tool.name for tool in tools]
