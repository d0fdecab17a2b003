"""A background agent's task record and output file (spec 6.2, 11.3; observed section 4).

A background run's transcript also goes to ``<project>/.catui/tasks/<id>.output``
(a second sink of its TranscriptWriter, one JSON line per message, written as
it happens), with ``<id>.meta.json`` beside it; its ``local_agent`` task in the
registry (and state.db) carries the counters of the agent's whole life.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from catui.config.context import git_branch
from catui.session.transcript import TranscriptWriter
from catui.session.usage import total_tokens
from catui.subagents.json_file import write_json_atomic
from catui.subagents.names import AgentNames
from catui.subagents.resume_state import Carried
from catui.subagents.run import SubagentRun
from catui.tasks.registry import Task, TaskRegistry
from catui.tools.base import ToolResult

READ_TOOLS = frozenset({"Read", "Bash"})


def launched_text(agent_id: str, output_file: str, *, can_read_output: bool) -> str:
    """The immediate tool_result of a background agent (observed section 4: six lines)."""
    lines = [
        "Async agent launched successfully.",
        f"agentId: {agent_id} (internal ID - do not mention to user. Use SendMessage with to: '{agent_id}' "
        "to continue this agent.)",
        "It is now working in the background; you will be told automatically when it finishes, so do not "
        "poll or wait for it.",
        "Do not do the same work yourself: leave its files and topics to it and carry on with something "
        "else, or tell the user what you started and end your turn.",
        f"output_file: {output_file}",
    ]
    if can_read_output:
        lines.append("To see its progress before it finishes, read that file (Read, or tail it with Bash).")
    return "\n".join(lines)


def current_launched_text(agent_id: str, output_file: str) -> str:
    """The current contract's six-line launch text (observed-cc-now.md §4; the sentences are catui's)."""
    return "\n".join([
        "Async agent launched successfully. (This tool result is bookkeeping for you, not a message to relay.)",
        f"agentId: {agent_id} (internal ID - do not mention to user. Use SendMessage with to: '{agent_id}', "
        "summary: '<5-10 word recap>' to continue this agent.)",
        "The agent is working in the background. You will be notified automatically when it completes; do not "
        "poll, sleep or check on it meanwhile.",
        "Do not duplicate this agent's work — leave its files and questions to it, and carry on with something "
        "else or end your turn.",
        f"output_file: {output_file}",
        "Do NOT Read or tail this file via the shell tool — it is the agent's raw transcript and would fill "
        "your context; wait for the notification instead.",
    ])


def launched_result(run: SubagentRun, task: Task, *, current: bool = False) -> ToolResult:
    """The six-line text with ``AgentOutputAsync`` as data (``current``: the current contract's text and data)."""
    parent = run.parent_ctx.session
    tools = parent.tools if parent is not None else []
    can_read = any(t.name in READ_TOOLS for t in tools)
    output = str(task.output_file)
    if current:
        return ToolResult(current_launched_text(run.agent_id, output), data={
            "isAsync": True, "status": "async_launched", "agentId": run.agent_id, "description": run.description,
            "resolvedModel": run.model.model_id, "prompt": run.request.prompt, "outputFile": output,
            "canReadOutputFile": True, "canContinueAgent": True, "modelResolution": run.model.trace(),
        })
    data = {
        "status": "async_launched",
        "agentId": run.agent_id,
        "description": run.description,
        "prompt": run.request.prompt,
        "outputFile": output,
        "canReadOutputFile": can_read,
        "modelResolution": run.model.trace(),
    }
    return ToolResult(launched_text(run.agent_id, output, can_read_output=can_read), data=data)


class AgentTaskRecords:
    """Creates and updates the ``local_agent`` tasks of background runs."""

    def __init__(self, tasks: TaskRegistry, names: AgentNames) -> None:
        self.tasks = tasks
        self.names = names
        self._carried: dict[str, Carried] = {}
        self._branch: str | None = None

    def start(
        self, run: SubagentRun, *, stop: Callable[[], Awaitable[None]], copy_existing: bool, resumed: bool = False,
        carried: Carried | None = None,
    ) -> Task:
        """The run's task (new, or replacing a resumed agent's), with its output file attached."""
        output = self.tasks.output_path(run.agent_id)
        if carried is not None:
            self._carried[run.agent_id] = carried
        else:
            self._carried.pop(run.agent_id, None)
        self._attach_output(run, output, copy_existing=copy_existing)
        worktree_path = str(run.worktree.path) if run.worktree is not None else None
        meta: dict[str, Any] = {"agentType": run.agent_type, "description": run.description}
        if worktree_path:
            meta["worktreePath"] = worktree_path
        write_json_atomic(output.with_name(f"{run.agent_id}.meta.json"), meta)
        task = Task(
            id=run.agent_id, type="local_agent", description=run.description, output_file=output,
            tool_use_id=run.request.tool_use_id, agent_type=run.agent_type, worktree_path=worktree_path,
            last_tool=run.last_tool_name,
        )
        if carried is not None:
            task.started_at = carried.started_at
        task.total_tokens, task.tool_uses = self.life_counts(run)
        task.stop_callback = stop
        meta_path = output.with_name(f"{run.agent_id}.meta.json")

        def record_placement(placement: dict[str, Any]) -> None:
            # Where it runs (`catui tasks` shows it): in the task's state.db meta and in its meta file.
            # state.db keeps scalar meta values only: one key per field.
            task.metadata.update({f"placement_{key}": value for key, value in placement.items()})
            task.changed()
            meta["placement"] = placement
            write_json_atomic(meta_path, meta)

        run.placement_listeners[:] = [record_placement]
        if run.placement:
            record_placement(run.placement)
        if resumed:
            self.tasks.replace(task)
        else:
            self.tasks.add(task)
        if run.request.name:
            self.names.register(run.request.name, run.agent_id)
        return task

    def update(self, run: SubagentRun, task: Task) -> None:
        """Bring the task's counters and answer-so-far up to date after one of the child's messages."""
        task.total_tokens, task.tool_uses = self.life_counts(run)
        task.last_tool = run.last_tool_name
        task.result = run.latest_text() or task.result  # the answer so far, for TaskOutput
        task.changed()

    def finish_counts(self, run: SubagentRun, task: Task) -> None:
        """The task's final counters; what the earlier runs carried is spent."""
        task.total_tokens, task.tool_uses = self.life_counts(run)
        self._carried.pop(run.agent_id, None)

    def life_counts(self, run: SubagentRun) -> tuple[int, int]:
        """``(total_tokens, tool_uses)`` of the agent's whole life: earlier runs (when resumed) plus this one."""
        carried = self._carried.get(run.agent_id)
        tokens, tools = total_tokens(run.last_usage), run.tool_use_count
        if carried is None:
            return tokens, tools
        return carried.total_tokens + tokens, carried.tool_uses + tools

    def _attach_output(self, run: SubagentRun, output: Path, *, copy_existing: bool) -> None:
        """Make the run's transcript also write ``output`` (with the lines so far for a moved run)."""
        writer = run.session.config.transcript
        if writer is None:
            writer = TranscriptWriter(
                [], session_id=run.session.session_id, cwd=run.session.ctx.cwd, agent_id=run.agent_id,
                git_branch=self._git_branch(),
            )
            run.session.config.transcript = writer
            writer.add_sink(output)
            if copy_existing:
                for message in run.messages:
                    writer.append(message)
            return
        if output in writer.paths:
            return
        if copy_existing and writer.paths:
            # Appends are synchronous on this event loop, so nothing is written between copy and add_sink.
            with contextlib.suppress(OSError):
                output.parent.mkdir(parents=True, exist_ok=True)
                output.write_bytes(writer.paths[0].read_bytes())
        writer.add_sink(output)

    def _git_branch(self) -> str:
        """The project's current branch for output-file lines (no session transcript to take it from)."""
        if self._branch is None:
            self._branch = git_branch(self.tasks.project_root)
        return self._branch
