"""What the current contract says about background shell commands (observed-cc-now.md §9; catui.config.compat).

Claude Code 2.1.332, run against catui's loopback server, answers a Bash call with ``run_in_background``
with ``Command running in background with ID: <id>. Output is being written to: <file>.`` and one more
sentence that depends on who started it: the main agent is told it will be notified; a sub-agent is told
that the command is stopped when it gives its final response. A shell's end is reported with
``Background command "<description>" completed (exit code 0)`` or ``… failed with exit code N`` (the
description alone when it was stopped), and the agent that started it gets a ``<task-notification>``
without a ``<note>``, ``<result>`` or ``<usage>``. The 2.1.92 profile keeps catui's own texts
(catui.tools.bash).
"""

from __future__ import annotations

from catui.tasks.model import Task
from catui.tasks.notifications import NOTIFICATION_HEADER

MAIN_AGENT_SENTENCE = "You will be notified when it completes."
SUBAGENT_SENTENCE = (
    "If it exits while you are still working you will be notified, but it is terminated when you give your final "
    "response and no notification can follow that \u2014 so do not end your turn to wait for it; if you need its "
    "result, wait for it before giving your final response."
)
READ_SENTENCE = "To check interim output, use Read on that file path."

# A shell's end as task_updated's patch says it (a stopped shell is "killed"), and as task_notification does.
_UPDATED_STATUS = {"completed": "completed", "failed": "failed"}
_NOTIFIED_STATUS = {"completed": "completed", "failed": "failed"}


def launch_text(task_id: str, output_file: str, *, in_subagent: bool) -> str:
    """The tool result of a Bash call that started ``task_id`` in the background (as 2.1.332 words it)."""
    middle = SUBAGENT_SENTENCE if in_subagent else MAIN_AGENT_SENTENCE
    return (f"Command running in background with ID: {task_id}. Output is being written to: {output_file}. "
            f"{middle} {READ_SENTENCE}")


def updated_status(task: Task) -> str:
    """``task_updated``'s status for an ended shell: completed, failed, or killed (stopped in any way)."""
    return _UPDATED_STATUS.get(task.status, "killed")


def notified_status(task: Task) -> str:
    """``task_notification``'s status for an ended shell: completed, failed, or stopped."""
    return _NOTIFIED_STATUS.get(task.status, "stopped")


def end_summary(task: Task) -> str:
    """``Background command "<description>" completed (exit code 0)`` / ``… failed with exit code N``; a
    stopped shell's description."""
    code = task.exit_code if task.exit_code is not None else 0
    if task.status == "completed":
        return f'Background command "{task.description}" completed (exit code {code})'
    if task.status == "failed":
        return f'Background command "{task.description}" failed with exit code {code}'
    return task.description


def shell_notification(task: Task, tool_use_id: str | None) -> str:
    """The notification the agent that started the shell gets when it ends, inside a system reminder (the
    header lines are catui's, as for background agents: catui.tasks.notifications)."""
    lines = ["<task-notification>", f"<task-id>{task.id}</task-id>"]
    if tool_use_id:
        lines.append(f"<tool-use-id>{tool_use_id}</tool-use-id>")
    status = updated_status(task)
    lines += [f"<output-file>{task.output_file}</output-file>", f"<status>{status}</status>",
              f"<summary>{end_summary(task)}</summary>", "</task-notification>"]
    return f"<system-reminder>\n{NOTIFICATION_HEADER}\n\n" + "\n".join(lines) + "\n</system-reminder>"
