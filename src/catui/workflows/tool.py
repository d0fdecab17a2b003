"""The ``Workflow`` tool (observed-cc-now.md §7): run a workflow script in the background.

The main agent passes a script (or the ``name`` of one from ``.claude/workflows/``, a plugin or the
built-ins, or a ``scriptPath``); the call checks it, answers with the launch text at once, and runs it
as a ``local_workflow`` task whose agents are children of the calling agent. When it ends, the agent gets
a task-notification with the return value as JSON, the agent counts and the usage.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from catui.errors import CatuiError
from catui.session.events import SystemEvent
from catui.tasks.model import Task
from catui.tasks.notifications import NOTIFICATION_HEADER, TaskNotification
from catui.tasks.registry import TaskRegistry
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult
from catui.workflows.live import LiveWorkflow, LiveWorkflows
from catui.workflows.named import named_workflows
from catui.workflows.runner import (
    WorkflowFiles,
    WorkflowRunner,
    locate_run,
    max_concurrent_agents,
    new_run_id,
)

SCRIPT_MAX_CHARS = 524288
RUN_ID_PATTERN = r"^wf_[a-z0-9-]{6,}$"
_BASE36 = string.digits + string.ascii_lowercase


class WorkflowInput(ToolInput):
    script: str | None = Field(None, max_length=SCRIPT_MAX_CHARS,
                               description="The workflow program: JavaScript that opens with `export const meta = "
                                           "{name, description, phases}` and whose body awaits agent()/parallel().")
    name: str | None = Field(None, description="Run a predefined workflow by name instead of a script.")
    description: str | None = Field(None, description="What the run is for (shown to the user).")
    title: str | None = Field(None, description="A short title (shown to the user).")
    args: Any = Field(None, description="Any JSON value; the script reads it as `args`.")
    scriptPath: str | None = Field(None, description="Run the script in this file (e.g. the copy a launch names).")
    resumeFromRunId: str | None = Field(None, pattern=RUN_ID_PATTERN,
                                        description="Resume this run: agents whose results are in its journal "
                                                    "are not run again.")


def new_task_id() -> str:
    """``w`` + 8 base-36 characters, as Claude Code's workflow task ids."""
    return "w" + "".join(secrets.choice(_BASE36) for _ in range(8))


def tool_use_error(text: str) -> ToolResult:
    return ToolResult(f"<tool_use_error>{text}</tool_use_error>", is_error=True)


class WorkflowTool(Tool):
    """Runs a workflow script in the background (main agent only)."""

    name: ClassVar[str] = "Workflow"
    input_model: ClassVar[type[ToolInput]] = WorkflowInput

    def __init__(self, *, runtime: Callable[[], Any], tasks: TaskRegistry, cwd: Path,
                 session_id: Callable[[], str], plugin_dirs: Callable[[], list[str]], current: bool,
                 live: LiveWorkflows | None = None, budget_usd: float | None = None) -> None:
        self.runtime = runtime
        """The sub-agent runtime, asked for when a workflow starts (it is built on first use: catui.lazy)."""
        self.tasks = tasks
        self.cwd = cwd
        self.session_id = session_id
        self.plugin_dirs = plugin_dirs
        self.current = current
        self.live = live if live is not None else LiveWorkflows()
        """The runs this tool launched (the terminal's /workflows view reads them)."""
        self.budget_usd = budget_usd
        """Each run's dollar budget (the ``workflowBudgetUsd`` setting); a resumed run keeps its own when lower."""

    @property
    def description(self) -> str:
        return ("Run a workflow: a JavaScript program that starts many agents (agent(), parallel(), pipeline(), "
                "phase(), log()) and returns one value. It runs in the background; you are notified with its "
                "result. Load the workflow-authoring skill for the API before writing one.")

    def is_concurrency_safe(self, args: Any) -> bool:
        return True  # it only launches

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        from catui.workflows.engine import ScriptParseError, check_syntax
        from catui.workflows.nested import resolve_script_path
        from catui.workflows.script_file import read_script_file

        assert isinstance(args, WorkflowInput)
        available = named_workflows(self.cwd, self.plugin_dirs())
        resume_files: WorkflowFiles | None = None
        if args.resumeFromRunId is not None:
            resume_files = locate_run(self.cwd, args.resumeFromRunId)
            if resume_files is None:
                return tool_use_error(f"Workflow run {args.resumeFromRunId} not found in this project.")
        if args.script is not None:
            source, script_path = args.script, None
        elif args.scriptPath is not None:
            try:
                script_path = resolve_script_path(args.scriptPath, self.cwd)
                source = read_script_file(script_path, SCRIPT_MAX_CHARS)
            except CatuiError as exc:
                return tool_use_error(f"scriptPath: {exc}")
        elif args.name is not None:
            found = available.get(args.name)
            if found is None:
                return tool_use_error(f'Workflow "{args.name}" not found. Available: {", ".join(sorted(available))}')
            source, script_path = found, None
        else:
            return tool_use_error("Give the workflow as script, name or scriptPath.")
        try:
            check_syntax(source)
        except ScriptParseError as exc:
            return tool_use_error(f"Invalid workflow script: {exc}\n\nFix the script and call Workflow again. "
                                  "It is plain JavaScript run as the body of an async function: no import, "
                                  "no TypeScript types.")
        meta = _static_meta(source)
        run_id = args.resumeFromRunId or new_run_id()
        files = resume_files or WorkflowFiles.for_session(self.cwd, self.session_id(), run_id)
        task_id = new_task_id()
        workflow_name = str(meta.get("name") or args.name or "workflow")
        summary = str(meta.get("description") or args.description or workflow_name)
        # A resume keeps the run's budget, and the setting's cap holds too: the lower of the two.
        caps = [b for b in (_recorded_budget(resume_files) if resume_files else None, self.budget_usd) if b is not None]
        budget_usd = min(caps) if caps else None
        launched = self._launch(ctx, source=source, args=args.args, files=files, task_id=task_id,
                                workflow_name=workflow_name, summary=summary, resume=resume_files is not None,
                                script_path=script_path, meta=meta, budget_usd=budget_usd)
        copy_path = launched
        text = (f"Workflow launched in background. Task ID: {task_id}\n"
                f"Summary: {summary}\n"
                f"Transcript dir: {files.run_dir}\n"
                f"Script file: {copy_path}\n"
                f"(The script is saved there: to run it again, call Workflow with {{scriptPath: \"{copy_path}\"}}.)\n"
                f"Run ID: {run_id}\n"
                f"To resume after editing the script, keeping the finished agents' results: "
                f"Workflow({{scriptPath: \"{copy_path}\", resumeFromRunId: \"{run_id}\"}}) — only agent() calls "
                f"without a journaled result run again.\n\n"
                f"You will be notified when it completes. Use /workflows to watch live progress.")
        return ToolResult(text, data={"status": "async_launched", "taskId": task_id, "taskType": "local_workflow",
                                      "workflowName": workflow_name, "runId": run_id, "summary": summary,
                                      "transcriptDir": str(files.run_dir), "scriptPath": str(copy_path)})

    def _launch(self, ctx: ToolContext, *, source: str, args: Any, files: WorkflowFiles, task_id: str,
                workflow_name: str, summary: str, resume: bool, script_path: Path | None,
                meta: dict[str, Any], budget_usd: float | None) -> Path:
        from catui.workflows.agents import agents_context, runtime_agent_runner
        from catui.workflows.execute import execute
        from catui.workflows.nested import NestedWorkflows, WorkflowSources

        tool_use_id = ctx.tool_use_id
        output_file = self.tasks.output_path(task_id)
        task = Task(id=task_id, type="local_workflow", description=summary, output_file=output_file,
                    tool_use_id=tool_use_id, metadata={"runId": files.run_id, "workflowName": workflow_name})
        stop = asyncio.Event()
        agents_ctx = agents_context(ctx, stop=stop, observe=lambda event: live.observe(event))
        runner = WorkflowRunner(files=files, run_agent=runtime_agent_runner(self.runtime(), agents_ctx, files.run_id,
                                                                            transcript_dir=files.run_dir),
                                concurrency=max_concurrent_agents(), budget_usd=budget_usd,
                                children=NestedWorkflows(WorkflowSources(self.cwd, self.plugin_dirs)))
        live = LiveWorkflow(task_id, files.run_id, workflow_name, summary, runner)
        live.set_meta(meta)
        self.live.add(live)

        def emit(subtype: str, data: dict[str, Any]) -> None:
            if ctx.emit is not None:
                ctx.emit(SystemEvent(subtype=subtype, data={"task_id": task_id, "tool_use_id": tool_use_id, **data},
                                     agent_id=ctx.agent_id))

        def progress() -> None:
            task.total_tokens, task.tool_uses = runner.counts.subagent_tokens, runner.counts.tool_uses
            emit("task_progress", {"description": summary, "usage": self._usage(runner, started),
                                   "workflow_progress": list(runner.progress)})

        runner.on_progress = progress
        started = time.monotonic()
        copy = files.script_copy(workflow_name, ".js")

        async def work() -> None:
            try:
                outcome = await execute(runner, kind="js", source=source, function=None, args=args,
                                        name=workflow_name, script_path=script_path, resume=resume,
                                        extra={"taskId": task_id, "defaultModel": None}, on_meta=live.set_meta)
                status, error, result = outcome.status, outcome.error, outcome.result
            except asyncio.CancelledError:
                status, error, result = "stopped", "stopped by request", None
            except CatuiError as exc:
                status, error, result = "failed", str(exc), None
            live.finish(status, error)
            usage = self._usage(runner, started)
            output_file.write_text(json.dumps(
                {"summary": summary, "agentCount": runner.counts.agent_count, "logs": runner.logs, "result": result,
                 "workflowProgress": runner.progress, "totalTokens": runner.counts.subagent_tokens,
                 "totalToolCalls": runner.counts.tool_uses}, ensure_ascii=False), encoding="utf-8",
                errors="backslashreplace")
            task.finish("completed" if status == "completed" else ("stopped" if status == "stopped" else "failed"),
                        json.dumps(result, ensure_ascii=False, separators=(",", ":")), error=error)
            text = self._notification(task_id=task_id, tool_use_id=tool_use_id, output_file=output_file, status=status,
                                      summary=summary, error=error, result=result, files=files, copy=copy, args=args,
                                      runner=runner, usage=usage)
            emit("task_notification", {"status": status, "output_file": str(output_file),
                                       "summary": _summary(summary, status, error), "usage": usage})
            if self.current:  # the current contract's task_updated (a stopped task is "killed" there)
                patch = {"status": "killed" if status == "stopped" else status, "end_time": int(time.time() * 1000)}
                if error is not None and status == "failed":
                    patch["error"] = error
                emit("task_updated", {"patch": patch})
            self.tasks.post_notification(TaskNotification(task_id, text, data={"status": status}))

        emit("task_started", {"description": summary, "task_type": "local_workflow", "workflow_name": workflow_name,
                              "prompt": source})

        async def stop_run() -> None:
            # TaskStop: no new agent starts, the running ones stop at once, and the script is cancelled where it
            # waits; the journal keeps every finished agent's result, so `resumeFromRunId` continues the run.
            runner.stopping = True
            stop.set()
            if task.runner is not None and not task.runner.done():
                task.runner.cancel()
                with contextlib.suppress(BaseException):
                    await task.runner

        # The task copies this context: the workflow's agents' spans hang under this call's span (telemetry).
        task.runner = asyncio.create_task(work())
        task.stop_callback = stop_run
        self.tasks.add(task)
        return copy

    @staticmethod
    def _usage(runner: WorkflowRunner, started: float) -> dict[str, int]:
        return {"total_tokens": runner.counts.subagent_tokens, "tool_uses": runner.counts.tool_uses,
                "duration_ms": int((time.monotonic() - started) * 1000)}

    def _notification(self, *, task_id: str, tool_use_id: str | None, output_file: Path, status: str, summary: str,
                      error: str | None, result: Any, files: WorkflowFiles, copy: Path, args: Any,
                      runner: WorkflowRunner, usage: dict[str, int]) -> str:
        counts = runner.counts
        again = (f"Workflow({{scriptPath: '{copy}', resumeFromRunId: '{files.run_id}', "
                 f"args: {json.dumps(args, ensure_ascii=False)}}})")
        lines = ["<task-notification>", f"<task-id>{task_id}</task-id>"]
        if tool_use_id:
            lines.append(f"<tool-use-id>{tool_use_id}</tool-use-id>")
        lines += [f"<output-file>{output_file}</output-file>", f"<status>{status}</status>",
                  f"<summary>{_summary(summary, status, error)}</summary>"]
        if status == "completed":
            lines.append(f"<result>{json.dumps(result, ensure_ascii=False, separators=(',', ':'))}</result>")
        lines.append(f"<diagnostics>Per-agent results: {files.journal} — one JSON line per agent started and "
                     f"finished. To run it again without repeating finished agents: {again}</diagnostics>")
        lines.append(
            f"<usage><agent_count>{counts.agent_count}</agent_count><agents_done>{counts.agents_done}</agents_done>"
            f"<agents_error>{counts.agents_error}</agents_error><agents_skipped>{counts.agents_skipped}</agents_skipped>"
            f"<agents_empty_result>{counts.agents_empty_result}</agents_empty_result>"
            f"<subagent_tokens>{counts.subagent_tokens}</subagent_tokens><tool_uses>{counts.tool_uses}</tool_uses>"
            f"<duration_ms>{usage['duration_ms']}</duration_ms></usage>")
        lines.append("</task-notification>")
        body = "\n".join(lines)
        return f"<system-reminder>\n{NOTIFICATION_HEADER}\n\n{body}\n</system-reminder>" if self.current else body


def _summary(description: str, status: str, error: str | None) -> str:
    if status == "completed":
        return f'Dynamic workflow "{description}" completed'
    if status == "stopped":
        return f'Dynamic workflow "{description}" was stopped'
    return f'Dynamic workflow "{description}" failed: {error or "unknown error"}'


def _recorded_budget(files: WorkflowFiles) -> float | None:
    """The dollar budget run ``files`` started with (a resume keeps it, as ``catui workflow resume`` does)."""
    try:
        budget = json.loads(files.record.read_text(encoding="utf-8")).get("budget")
    except (OSError, ValueError, AttributeError):
        return None
    return float(budget) if isinstance(budget, int | float) and not isinstance(budget, bool) else None


def _static_meta(source: str) -> dict[str, Any]:
    """``meta`` evaluated on its own (before the run), for the launch text."""
    from catui.workflows.engine import read_meta

    return read_meta(source)


__all__ = ["WorkflowInput", "WorkflowTool", "max_concurrent_agents", "new_task_id"]
