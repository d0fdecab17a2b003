"""Reporting each hook run as it starts and ends (claude-agent-sdk's ``include_hook_events``).

A runner given a :data:`HookRunReport` calls it with ``("hook_started", data)`` before each hook
runs and ``("hook_response", data)`` after, in Claude Code's shape: ``hook_id`` (shared by the
pair), ``hook_name`` (the command, or ``callback`` for a Python hook), ``hook_event``, and on the
response ``output``, ``stdout``, ``stderr``, ``exit_code`` and ``outcome`` (``success``, ``error``
or ``cancelled``). A sub-agent's runs also carry its ``agent_id`` and ``agent_type``. The session
layer turns them into ``system`` events (:func:`catui.app.build.hook_run_reporter`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from catui.hooks.execute import HookExecution
from catui.hooks.output import HookResponse

HookRunReport = Callable[[str, dict[str, Any]], None]
"""Called with ``("hook_started" | "hook_response", data)`` for every hook run."""


class HookRunReporter:
    """Reports one hook run: ``started()`` before it, then ``finished_*`` or ``cancelled()``."""

    def __init__(self, report: HookRunReport, *, event: str, name: str, agent: dict[str, Any]) -> None:
        self.report = report
        self.base = {"hook_id": str(uuid.uuid4()), "hook_name": name, "hook_event": event, **agent}

    def started(self) -> None:
        self.report("hook_started", dict(self.base))

    def finished(self, *, stdout: str, stderr: str, exit_code: int | None, failed: bool) -> None:
        output = stdout + (("\n" if stdout and stderr else "") + stderr)
        self.report("hook_response", {**self.base, "output": output, "stdout": stdout, "stderr": stderr,
                                      "exit_code": exit_code, "outcome": "error" if failed else "success"})

    def cancelled(self) -> None:
        self.report("hook_response", {**self.base, "output": "", "stdout": "", "stderr": "", "exit_code": None,
                                      "outcome": "cancelled"})


async def reported_command(reporter: HookRunReporter, run: Awaitable[HookExecution]) -> HookExecution:
    """Run a command hook between its two reports (its exit status and output in the second)."""
    reporter.started()
    try:
        execution = await run
    except asyncio.CancelledError:
        reporter.cancelled()
        raise
    failed = execution.exit_code != 0
    stderr = execution.stderr or execution.start_error or ("timed out" if execution.timed_out else "")
    reporter.finished(stdout=execution.stdout, stderr=stderr, exit_code=execution.exit_code, failed=failed)
    return execution


async def reported_callback(reporter: HookRunReporter, run: Awaitable[HookResponse]) -> HookResponse:
    """Run a Python hook between its two reports; a failure (raised, timed out, not a dict) is an error."""
    reporter.started()
    try:
        response = await run
    except asyncio.CancelledError:
        reporter.cancelled()
        raise
    failed = response.error is not None
    reporter.finished(stdout="", stderr=response.error or "", exit_code=1 if failed else 0, failed=failed)
    return response
