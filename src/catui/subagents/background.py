"""Background agents (spec 6.2, 8.2, 11.3, 13; observed section 4).

:class:`BackgroundAgents` plugs into the sub-agent runtime through its seams:

- ``runtime.background_launcher``: a run that starts in the background (the
  call's ``run_in_background``, the definition's ``background: true``) becomes
  a ``local_agent`` task; the parent gets the six-line "launched" result at
  once, with ``AgentOutputAsync`` as its data.
- ``runtime.foreground_hook``: every foreground run can move to the background
  without losing a message, when it outlives the auto-background threshold or
  when ``background_all_foreground()`` (Ctrl-B, the SDK) asks. The parent's
  Agent call then returns the launched result instead of waiting.
- ``runtime.spawn_gate``: the teams rules of spec 12.3.

A background run's transcript also goes to ``<project>/.catui/tasks/<id>.output``
(a second sink of its TranscriptWriter, one JSON line per message, written as
it happens), with ``<id>.meta.json`` beside it. When the run ends (completed,
failed or stopped) its ``<task-notification>`` is queued in the task registry,
and reaches the parent exactly once, by whichever comes first:

1. the parent's next tool round: the main session's ``pending_messages`` hook
   appends waiting notifications to that round's tool_result message, so the
   model sees them before its next request;
2. a new parent turn: front ends (print mode, the SDK, the interactive UI)
   await ``app.tasks.next_notification()`` once the parent's turn has ended.

The ``system/task_notification`` event is emitted when the run ends if the
parent is mid-turn, else at the start of the parent's next turn (its
``before_turn`` hook), so that print mode's stream-json shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.messages import Message, blocks_of, user_message
from catui.paths import project_runtime_dir
from catui.session.events import AssistantMessageEvent, Event, SystemEvent
from catui.session.session import Session
from catui.session.transcript import TranscriptWriter, read_transcript
from catui.session.usage import total_tokens
from catui.state.db import pid_is_alive
from catui.subagents.json_file import write_json_atomic
from catui.subagents.names import AgentNames
from catui.subagents.resolve import AgentSpawnError, resolve_agent_type
from catui.subagents.result import ONE_SHOT_AGENT_TYPES
from catui.subagents.runtime import SpawnRequest, SubagentRun, SubagentRuntime
from catui.tasks.notifications import TaskNotification, format_task_notification, notification_summary
from catui.tasks.registry import Task, TaskRegistry, TaskStatus
from catui.tools.base import CURRENT_TOOL_USE_ID, ToolContext, ToolResult

READ_TOOLS = frozenset({"Read", "Bash"})

TEAMS_NOT_BUILT = (
    "Agent teams are not available in catui yet: team_name together with name starts a teammate, and "
    "teammates are not built. Leave out team_name to start a named background agent instead."
)
TEAMMATE_CANNOT_SPAWN_TEAMMATE = "Teammates cannot spawn other teammates — the team roster is flat."
IN_PROCESS_TEAMMATE_NO_BACKGROUND = "In-process teammates cannot spawn background agents."

CANCEL_GRACE_S = 2.0
KEEP_FINISHED_RUNS = 256
"""Finished conversations kept for SendMessage to resume; older ones are dropped (their files stay)."""


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


def coordinator_reminder(message: str, summary: str | None = None) -> str:
    """How a SendMessage reaches a running agent: appended to its next tool_result round."""
    about = f" ({summary})" if summary else ""
    return (
        "<system-reminder>\n"
        f"The coordinator sent you a message while you were working{about}:\n"
        f"{message}\n"
        "Address it before you finish your task.\n"
        "</system-reminder>"
    )


def final_text(result: ToolResult) -> str:
    """The child's answer inside a finished run's tool_result (without the agentId/usage trailer)."""
    data = result.data if isinstance(result.data, Mapping) else {}
    blocks = data.get("content")
    if isinstance(blocks, list):
        return "\n\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping))
    if isinstance(result.content, str):
        return result.content
    texts = [str(b.get("text", "")) for b in result.content if b.get("type") == "text"]
    return texts[0] if texts else ""


def _last_text(run: SubagentRun) -> str | None:
    for message in reversed(run.messages):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            text = "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
            if text:
                return text
    return None


@dataclass
class _Carried:
    """What a resumed agent's earlier runs bring to its task, so the task covers the agent's whole life."""

    started_at: float
    total_tokens: int = 0
    tool_uses: int = 0


@dataclass
class _Foreground:
    """A foreground run the background layer may move."""

    run: SubagentRun
    move: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    handoff: tuple[AsyncIterator[Event], asyncio.Future[Event]] | None = None


class BackgroundAgents:
    """Background agents of one application (its main session, its task registry, its sub-agent runtime)."""

    def __init__(
        self,
        runtime: SubagentRuntime,
        tasks: TaskRegistry,
        session: Session,
        *,
        auto_background_ms: int = 0,
    ) -> None:
        self.runtime = runtime
        self.tasks = tasks
        self.session = session
        self.auto_background_ms = auto_background_ms
        self.names = AgentNames(session.session_id, tasks.state)
        self.inboxes: dict[str, list[str]] = {}
        self.finished_runs: dict[str, SubagentRun] = {}
        self._foreground: dict[str, _Foreground] = {}
        self._moving: dict[str, _Foreground] = {}
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._active: dict[str, SubagentRun] = {}
        self._stopping: set[str] = set()
        self._unannounced: list[SystemEvent] = []
        self._resuming: set[str] = set()
        self._branch: str | None = None
        self._carried: dict[str, _Carried] = {}
        self._resume_notes: dict[str, str] = {}

    # -- installation ---------------------------------------------------------------------------

    def install(self) -> None:
        """Connect to the runtime's seams and the main session's hooks."""
        self.runtime.background_launcher = self.launch
        self.runtime.foreground_hook = self
        self.runtime.spawn_gate = team_rules
        if self.tasks.session_id is None:
            self.tasks.session_id = self.session.session_id
        config = self.session.config
        config.pending_messages = _chain_pending(config.pending_messages, self._notifications_for_round)
        config.before_turn = _chain_before_turn(config.before_turn, self._before_parent_turn)

    # -- starting in the background -------------------------------------------------------------

    async def launch(self, run: SubagentRun, parent_ctx: ToolContext) -> ToolResult:
        """Start a prepared run as a background task; returns the parent's immediate result."""
        run.is_async = True
        run.stop_event = asyncio.Event()
        task = self._start_task(run, copy_existing=False)
        self.runtime.emit_task_started(run)
        self._attach_inbox(run)
        self._start_driver(run, task, None)
        return self.launched_result(run, task)

    def launched_result(self, run: SubagentRun, task: Task) -> ToolResult:
        """The six-line text with ``AgentOutputAsync`` as data."""
        parent = run.parent_ctx.services.get("session")
        tools = getattr(parent, "tools", None) or []
        can_read = any(t.name in READ_TOOLS for t in tools)
        output = str(task.output_file)
        data = {
            "status": "async_launched",
            "agentId": run.agent_id,
            "description": run.description,
            "prompt": run.request.prompt,
            "outputFile": output,
            "canReadOutputFile": can_read,
        }
        return ToolResult(launched_text(run.agent_id, output, can_read_output=can_read), data=data)

    def _start_task(
        self, run: SubagentRun, *, copy_existing: bool, resumed: bool = False, carried: _Carried | None = None
    ) -> Task:
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
            id=run.agent_id,
            type="local_agent",
            description=run.description,
            output_file=output,
            tool_use_id=run.request.tool_use_id,
            agent_type=run.agent_type,
            worktree_path=worktree_path,
            last_tool=run.last_tool_name,
        )
        if carried is not None:
            task.started_at = carried.started_at
        task.total_tokens, task.tool_uses = self._life_counts(run)
        task.stop_callback = lambda: self._stop(run.agent_id)
        self._active[run.agent_id] = run
        if resumed:
            self.tasks.replace(task)
        else:
            self.tasks.add(task)
        if run.request.name:
            self.names.register(run.request.name, run.agent_id)
        return task

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

    def _life_counts(self, run: SubagentRun) -> tuple[int, int]:
        """``(total_tokens, tool_uses)`` of the agent's whole life: earlier runs (when resumed) plus this one."""
        carried = self._carried.get(run.agent_id)
        tokens, tools = total_tokens(run.last_usage), run.tool_use_count
        if carried is None:
            return tokens, tools
        return carried.total_tokens + tokens, carried.tool_uses + tools

    def _git_branch(self) -> str:
        """The project's current branch for output-file lines (no session transcript to take it from)."""
        if self._branch is None:
            import subprocess

            try:
                done = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=self.tasks.project_root,
                                      capture_output=True, text=True, timeout=5)
                self._branch = done.stdout.strip() if done.returncode == 0 else ""
            except (OSError, subprocess.SubprocessError):
                self._branch = ""
        return self._branch

    def _keep_finished(self, run: SubagentRun) -> None:
        self.finished_runs.pop(run.agent_id, None)
        self.finished_runs[run.agent_id] = run
        while len(self.finished_runs) > KEEP_FINISHED_RUNS:
            self.finished_runs.pop(next(iter(self.finished_runs)))

    def _attach_inbox(self, run: SubagentRun) -> None:
        agent_id = run.agent_id
        self.inboxes.setdefault(agent_id, [])
        previous = run.session.config.pending_messages

        def pending() -> list[str]:
            queued = list(previous()) if previous is not None else []
            box = self.inboxes.get(agent_id)
            if box:
                queued.extend(box)
                box.clear()
            return queued

        run.session.config.pending_messages = pending

    def _start_driver(
        self, run: SubagentRun, task: Task, handoff: tuple[AsyncIterator[Event], asyncio.Future[Event]] | None
    ) -> None:
        runner = asyncio.get_running_loop().create_task(self._drive(run, task, handoff), name=f"agent-{run.agent_id}")
        task.runner = runner
        self._runners[run.agent_id] = runner

    # -- driving a background run ---------------------------------------------------------------

    async def _drive(
        self, run: SubagentRun, task: Task, handoff: tuple[AsyncIterator[Event], asyncio.Future[Event]] | None
    ) -> None:
        emit = run.parent_ctx.emit
        crash: BaseException | None = None
        try:
            if handoff is None:
                events = run.events()
                pending: asyncio.Future[Event] | None = None
            else:
                events, pending = handoff
            while True:
                try:
                    event = await pending if pending is not None else await anext(events)
                except StopAsyncIteration:
                    break
                pending = None
                if emit is not None:
                    emit(event)
                if isinstance(event, AssistantMessageEvent) and event.agent_id == run.agent_id:
                    task.total_tokens, task.tool_uses = self._life_counts(run)
                    task.last_tool = run.last_tool_name
                    task.result = _last_text(run) or task.result  # the answer so far, for TaskOutput
                    task.changed()
                    if emit is not None:
                        emit(self.runtime.task_progress_event(run))
        except asyncio.CancelledError:
            crash = asyncio.CancelledError()
        except Exception as exc:  # a bug in a child must not take the parent down: it is reported as failed
            crash = exc
        try:
            await self._conclude(run, task, crash)
        finally:
            self._runners.pop(run.agent_id, None)
            self._active.pop(run.agent_id, None)
            self._stopping.discard(run.agent_id)

    async def _conclude(self, run: SubagentRun, task: Task, crash: BaseException | None) -> None:
        stopped = (run.agent_id in self._stopping or run.stop_requested
                   or isinstance(crash, asyncio.CancelledError))
        worktree: tuple[str | None, str | None] = (None, None)
        error: str | None = None
        result: str | None
        if crash is not None:
            with contextlib.suppress(Exception):
                worktree = await self.runtime._discard_worktree(run)  # a kept one is named in the notification
            self.runtime.runs.pop(run.agent_id, None)
            result = _last_text(run)
            if not stopped:
                error = f"{type(crash).__name__}: {crash}"
        else:
            try:
                outcome = await self.runtime.finish(run)
            except Exception as exc:  # the task must still end, or the parent would wait for it forever
                outcome = ToolResult(f"Agent \"{run.description}\" failed: {type(exc).__name__}: {exc}",
                                     is_error=True)
            data = outcome.data if isinstance(outcome.data, Mapping) else {}
            worktree = (data.get("worktreePath"), data.get("worktreeBranch"))
            if stopped:
                result = _last_text(run)
            elif outcome.is_error:
                error = final_text(outcome)
                result = None
            else:
                result = final_text(outcome)
        status: TaskStatus = "stopped" if stopped else ("failed" if error is not None else "completed")
        usage = run.progress_usage()  # the notification reports this run; the task, the agent's whole life
        task.total_tokens, task.tool_uses = self._life_counts(run)
        self._carried.pop(run.agent_id, None)
        note = self._resume_notes.pop(run.agent_id, None)
        if note is not None:
            result = f"{note}\n\n{result}" if result else note
        summary = notification_summary(run.description, status, error)
        text = format_task_notification(
            task_id=run.agent_id,
            tool_use_id=run.request.tool_use_id,
            output_file=str(task.output_file),
            status=status,
            summary=summary,
            result=result,
            usage=usage,
            worktree_path=worktree[0],
            worktree_branch=worktree[1],
        )
        event = SystemEvent(
            subtype="task_notification",
            data={
                "task_id": run.agent_id,
                "tool_use_id": run.request.tool_use_id,
                "status": status,
                "output_file": str(task.output_file),
                "summary": summary,
                "usage": usage,
            },
            agent_id=run.parent_ctx.agent_id,
        )
        self._keep_finished(run)
        unread = self.inboxes.pop(run.agent_id, None) or []
        self.names.release(run.agent_id)
        # The notification is queued before the task ends, so a waiter never sees "nothing running,
        # nothing waiting" in between.
        self.tasks.post_notification(TaskNotification(run.agent_id, text, data={"status": status}))
        if _is_running(self.session) and run.parent_ctx.emit is not None:
            run.parent_ctx.emit(event)
        else:
            self._unannounced.append(event)
        task.finish(status, result, error=error)
        if unread and status == "completed":
            # Messages queued during its last model request were never read (no tool round followed): it
            # continues with them, as a finished agent messaged by id does, instead of losing them. Soon, not
            # now: this driver's own bookkeeping for the agent id ends after this returns.
            asyncio.get_running_loop().call_soon(self._continue_with_unread, run.agent_id, unread)

    def _continue_with_unread(self, agent_id: str, unread: list[str]) -> None:
        if not self.running_agent(agent_id) and agent_id in self.finished_runs:
            self.resume(agent_id, "\n\n".join(unread))

    async def _stop(self, agent_id: str) -> None:
        """TaskStop / shutdown: stop the child where it is; its transcript so far stays."""
        runner = self._runners.get(agent_id)
        run = self._active.get(agent_id)
        self._stopping.add(agent_id)
        if run is not None and run.stop_event is not None:
            run.stop_event.set()
        if runner is None:
            return
        done, _ = await asyncio.wait({runner}, timeout=CANCEL_GRACE_S * 5)
        if not done:  # the child ignored its stop signal: cancel it outright
            runner.cancel()
            with contextlib.suppress(BaseException):
                await runner

    # -- telling the parent ---------------------------------------------------------------------

    def _notifications_for_round(self) -> list[str]:
        return [n.text for n in self.tasks.drain_notifications()]

    async def _before_parent_turn(self, session: Session) -> None:
        events, self._unannounced = self._unannounced, []
        for event in events:
            session.emit(event)

    # -- moving foreground runs (auto-background, Ctrl-B) ---------------------------------------

    async def events(self, run: SubagentRun) -> AsyncIterator[Event]:
        """``run.events()`` for a foreground run, ending early (without loss) if the run moves."""
        relay = asyncio.Event()
        run.stop_event = relay
        parent_abort = run.parent_ctx.abort
        link = asyncio.ensure_future(_relay(parent_abort, relay))
        entry = _Foreground(run)
        self._foreground[run.agent_id] = entry
        self._attach_inbox(run)
        loop = asyncio.get_running_loop()
        timer = (
            loop.call_later(self.auto_background_ms / 1000, entry.move.set) if self.auto_background_ms > 0 else None
        )
        stream = run.events()
        handed_off = False
        try:
            while True:
                step: asyncio.Future[Event] = asyncio.ensure_future(anext(stream))
                mover: asyncio.Future[Any] = asyncio.ensure_future(entry.move.wait())
                try:
                    await asyncio.wait({step, mover}, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:
                    relay.set()  # stop the child properly before giving up on it
                    await asyncio.wait({step}, timeout=CANCEL_GRACE_S)
                    step.cancel()
                    raise
                finally:
                    mover.cancel()
                if step.done():
                    try:
                        event = step.result()
                    except StopAsyncIteration:
                        return
                    yield event
                    continue
                entry.handoff = (stream, step)
                handed_off = True
                self._moving[run.agent_id] = entry
                return
        finally:
            if timer is not None:
                timer.cancel()
            link.cancel()
            self._foreground.pop(run.agent_id, None)
            if not handed_off:
                self.inboxes.pop(run.agent_id, None)
                if run.agent_type not in ONE_SHOT_AGENT_TYPES:
                    # Its result tells the parent to continue it with SendMessage: keep the conversation.
                    self._keep_finished(run)
                if not entry.outcome.done():
                    entry.outcome.set_result(False)
                closer = getattr(stream, "aclose", None)
                if closer is not None:
                    with contextlib.suppress(BaseException):
                        await closer()

    async def moved(self, run: SubagentRun) -> ToolResult | None:
        """The launched result of a run that has just moved to the background, or ``None``."""
        entry = self._moving.pop(run.agent_id, None)
        if entry is None or entry.handoff is None:
            return None
        run.is_async = True
        task = self._start_task(run, copy_existing=True)
        self._start_driver(run, task, entry.handoff)
        if not entry.outcome.done():
            entry.outcome.set_result(True)
        return self.launched_result(run, task)

    async def background_all(self) -> list[str]:
        """Move every running foreground run to the background; returns the ids of those moved."""
        entries = list(self._foreground.values())
        for entry in entries:
            entry.move.set()
        moved: list[str] = []
        for entry in entries:
            if await entry.outcome:
                moved.append(entry.run.agent_id)
        return moved

    # -- SendMessage's side ----------------------------------------------------------------------

    def running_agent(self, agent_id: str) -> bool:
        """Whether ``agent_id`` is a child running now (background or foreground)."""
        task = self.tasks.get(agent_id)
        if task is not None and task.type == "local_agent" and task.is_running:
            return True
        return agent_id in self._foreground

    def queue_message(self, agent_id: str, text: str) -> None:
        """Deliver ``text`` to a running child with its next tool_result round."""
        self.inboxes.setdefault(agent_id, []).append(text)

    def resume(self, agent_id: str, text: str) -> bool:
        """Continue a finished background agent with a new user message, in the background.

        Returns False when this process does not hold the agent's conversation.
        """
        run = self.finished_runs.pop(agent_id, None)
        if run is None:
            return False
        carried = self._carried_from_memory(run)
        run.session.messages[:] = resumable_history(run.session.messages)
        run.first_message = user_message([{"type": "text", "text": text}])
        run.result_event = None
        run.aborted = False
        run.clear_stop_request()  # a stopped agent continues: the old stop must not end it at once
        run.started = time.monotonic()
        run.tool_use_count, run.last_usage = 0, {}  # this run's own counters; the task adds the earlier ones
        if run.worktree is not None and not Path(run.worktree.path).is_dir():
            # Its unchanged worktree was removed when it finished: it continues in the parent's folder,
            # as an agent resumed after a restart does.
            ctx, parent = run.session.ctx, run.parent_ctx
            ctx.cwd, ctx.project_root = parent.cwd, parent.project_root
            ctx.permissions = ctx.permissions.with_working_directories(*parent.permissions.working_directories)
            run.worktree = None
        # A worktree it kept is where it continues, and is settled (kept and reported) again at the end.
        run.stop_event = asyncio.Event()
        run.is_async = True
        self.runtime.runs[agent_id] = run
        # A foreground agent continued for the first time gets an output file with its whole conversation.
        first_time = not self.tasks.output_path(agent_id).exists()
        task = self._start_task(run, copy_existing=first_time, resumed=True, carried=carried)
        self.runtime.emit_task_started(run)
        self._attach_inbox(run)
        self._start_driver(run, task, None)
        return True

    def _carried_from_memory(self, run: SubagentRun) -> _Carried:
        """The counters of a finished run this process still holds: its task's, else the run's own."""
        task = self.tasks.get(run.agent_id)
        if task is not None:
            return _Carried(task.started_at, task.total_tokens, task.tool_uses)
        # A foreground agent's first run had no task: its start is its run's.
        started = time.time() - (time.monotonic() - run.started)
        return _Carried(started, total_tokens(run.last_usage), run.tool_use_count)

    def saved_transcript(self, agent_id: str) -> Path | None:
        """Where a finished agent's conversation is on disk: its output file, else its session transcript."""
        output = project_runtime_dir(self.tasks.project_root) / "tasks" / f"{agent_id}.output"
        if output.is_file():
            return output
        sessions = self.runtime.deps.sessions_dir
        if sessions is not None:
            for found in sorted(Path(sessions).glob(f"*/subagents/agent-{agent_id}.jsonl")):
                return found
        return None

    async def resume_from_transcript(self, agent_id: str, text: str, transcript: Path) -> str | None:
        """Continue a finished agent whose conversation this process does not hold (e.g. after a restart).

        Its messages are read back from ``transcript`` (:meth:`saved_transcript`), its type and
        description from the ``meta.json`` beside it; it then runs in the background like
        :meth:`resume`. Returns None when it resumed, else why it cannot.
        """
        if agent_id in self._resuming:
            return f"Agent {agent_id} is already being resumed."
        row = self._task_row(agent_id)
        if row is not None and row.get("status") == "running":
            pid = row.get("pid")
            if isinstance(pid, int) and pid != os.getpid() and pid_is_alive(pid):
                return (f"Agent {agent_id} is still running in another catui process (pid {pid}); message it "
                        "from there, or stop it with `catui tasks stop` first.")
        history = resumable_history(read_transcript(transcript))
        if not history:
            return f"Agent {agent_id} cannot be resumed: its transcript {transcript} holds no messages."
        meta = _read_meta(transcript, agent_id)
        agent_type = meta.get("agentType") or (row or {}).get("agent_type")
        if not isinstance(agent_type, str) or not agent_type:
            return (f"Agent {agent_id} cannot be resumed: its agent type is not recorded (no meta.json beside "
                    f"{transcript}).")
        description = meta.get("description") or (row or {}).get("description") or agent_type
        try:
            definition = resolve_agent_type(self.runtime.deps.registry, agent_type, self.session.ctx.permissions)
        except AgentSpawnError as exc:
            return f"Agent {agent_id} cannot be resumed: {exc}"
        kept, folder, note = self._kept_worktree(agent_id, meta, fresh=bool(definition.isolation))
        request = SpawnRequest(
            description=str(description),
            prompt=text,
            subagent_type=agent_type,
            run_in_background=True,
            # the Agent call that started it (state.db), else the SendMessage call resuming it
            tool_use_id=(row or {}).get("tool_use_id") or CURRENT_TOOL_USE_ID.get(),
            cwd=folder,
        )
        self._resuming.add(agent_id)
        try:
            try:
                run = await self.runtime.prepare(request, self.session.ctx, agent_id=agent_id, worktree=kept)
            except AgentSpawnError as exc:
                return f"Agent {agent_id} cannot be resumed: {exc}"
            except CatuiError as exc:
                return f"Agent {agent_id} cannot be resumed: {exc}"
            run.session.messages[:] = history
            run.first_message = user_message([{"type": "text", "text": text}])
            run.stop_event = asyncio.Event()
            run.is_async = True
            output = self.tasks.output_path(agent_id)
            if transcript != output and not output.exists():
                with contextlib.suppress(OSError):  # the output file starts with the conversation so far
                    output.write_bytes(transcript.read_bytes())
            carried = self._carried_from_disk(agent_id, row, transcript)
            task = self._start_task(run, copy_existing=False, resumed=True, carried=carried)
            if note is not None:
                self._resume_notes[agent_id] = note
            writer = run.session.config.transcript
            if writer is not None:
                writer.last_uuid = _last_uuid(output)  # the new lines continue the saved chain
            self.runtime.emit_task_started(run)
            self._attach_inbox(run)
            self._start_driver(run, task, None)
            return None
        finally:
            self._resuming.discard(agent_id)

    def _kept_worktree(
        self, agent_id: str, meta: Mapping[str, Any], *, fresh: bool
    ) -> tuple[Any, str | None, str | None]:
        """Where an agent resumed from disk continues: ``(worktree, folder, note)``.

        The worktree it kept (state.db ``worktrees``, else meta.json's ``worktreePath``) when it still
        exists: as a WorktreeInfo when state.db knows it (settled again at the end), else as a folder to
        work in. When it is gone, ``note`` says so for the agent's result; ``fresh`` (its definition asks
        for isolation) means it then gets a new worktree, else it works in the project folder.
        """
        row = None
        with contextlib.suppress(Exception):
            row = self.runtime._state().get_worktree(agent_id)
        recorded = meta.get("worktreePath") or (row or {}).get("path")
        if not isinstance(recorded, str) or not recorded:
            return None, None, None
        if not Path(recorded).is_dir():
            where = "a new worktree" if fresh else "the project folder"
            return None, None, f"Note: its worktree {recorded} no longer exists, so it continued in {where}."
        if row is not None and Path(str(row.get("path"))) == Path(recorded):
            from catui.worktree.model import WorktreeInfo

            info = WorktreeInfo.from_row(row)
            with contextlib.suppress(Exception):  # in use again, by this process: start-up sweeps leave it alone
                self.runtime._state().record_worktree(
                    agent_id, path=info.path, branch=info.branch, head_commit=info.head_commit,
                    git_root=info.git_root, hook_based=info.hook_based, status="active",
                    created_at=row.get("created_at"), meta=info.meta(),
                )
            return info, None, None
        if fresh:  # a folder state.db does not know cannot be settled as a worktree: it gets a new one
            return None, None, (f"Note: its worktree {recorded} is not recorded in state.db, so it continued in a "
                                "new worktree.")
        return None, recorded, None

    def _carried_from_disk(self, agent_id: str, row: Mapping[str, Any] | None, transcript: Path) -> _Carried:
        """The counters of an agent's earlier runs: its task (this process), its state.db row, its transcript."""
        task = self.tasks.get(agent_id)
        if task is not None:
            return _Carried(task.started_at, task.total_tokens, task.tool_uses)
        if row is not None and isinstance(row.get("created_at"), int | float):
            return _Carried(float(row["created_at"]), int(row.get("total_tokens") or 0), int(row.get("tool_uses") or 0))
        # A foreground agent has no row: its transcript's first line and its tool calls say what is known.
        started, tools = _transcript_start_and_tool_uses(transcript)
        return _Carried(started if started is not None else time.time(), 0, tools)

    def _task_row(self, agent_id: str) -> dict[str, Any] | None:
        state = self.tasks.state
        if state is None:
            return None
        try:
            row = state.get_task(agent_id)
        except CatuiError:
            return None
        return dict(row) if row is not None else None

    def known_agents(self) -> dict[str, str]:
        """Agent ids SendMessage can reach, with a label: ``name`` or description."""
        out: dict[str, str] = {}
        for task in self.tasks.list():
            if task.type == "local_agent":
                out[task.id] = task.description
        for entry in self._foreground.values():
            out[entry.run.agent_id] = entry.run.description
        return out


def team_rules(request: Any, parent_ctx: ToolContext) -> ToolResult | None:
    """Spec 12.3: a teammate cannot spawn teammates, an in-process one no background agents; teams are not built.

    A teammate's context carries ``services["team_name"]`` (and ``services["in_process_teammate"]``
    for one running in this process), set by the teams layer.
    """
    in_team = bool(parent_ctx.services.get("team_name"))
    if in_team and request.name:
        return ToolResult(TEAMMATE_CANNOT_SPAWN_TEAMMATE, is_error=True)
    if parent_ctx.services.get("in_process_teammate") and request.run_in_background:
        return ToolResult(IN_PROCESS_TEAMMATE_NO_BACKGROUND, is_error=True)
    if request.team_name and request.name:
        return ToolResult(TEAMS_NOT_BUILT, is_error=True)
    return None


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()


def _is_running(session: Session) -> bool:
    # Session keeps its event queue only while a run is active; events emitted otherwise are dropped.
    return getattr(session, "_queue", None) is not None


def _chain_pending(
    first: Callable[[], list[str]] | None, second: Callable[[], list[str]]
) -> Callable[[], list[str]]:
    if first is None:
        return second

    def both() -> list[str]:
        return [*first(), *second()]

    return both


def _chain_before_turn(
    first: Callable[[Session], Awaitable[None]] | None, second: Callable[[Session], Awaitable[None]]
) -> Callable[[Session], Awaitable[None]]:
    if first is None:
        return second

    async def both(session: Session) -> None:
        await first(session)
        await second(session)

    return both


def resumable_history(messages: list[Message]) -> list[Message]:
    """A saved conversation the model can continue: tool calls that never got their result are dropped.

    A stopped or interrupted agent's last message may call tools that never ran; sent back as they
    are, the API refuses the conversation (every tool_use needs its tool_result).
    """
    answered = {
        str(block.get("tool_use_id"))
        for message in messages
        if message.get("role") == "user"
        for block in blocks_of(message)
        if block.get("type") == "tool_result"
    }
    out: list[Message] = []
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            out.append(message)
            continue
        blocks = [b for b in blocks_of(message) if b.get("type") != "tool_use" or str(b.get("id")) in answered]
        if any(b.get("type") in ("text", "tool_use") for b in blocks):
            out.append({**message, "content": blocks})
    return out


def _read_meta(transcript: Path, agent_id: str) -> dict[str, Any]:
    """The ``meta.json`` beside a transcript (``<id>.meta.json`` or ``agent-<id>.meta.json``), or {}."""
    for name in (f"{agent_id}.meta.json", f"agent-{agent_id}.meta.json"):
        try:
            data = json.loads(transcript.with_name(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


def _transcript_start_and_tool_uses(path: Path) -> tuple[float | None, int]:
    """The first line's timestamp (epoch seconds) and the number of tool calls in a JSONL transcript."""
    from datetime import datetime

    started: float | None = None
    tools = 0
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None, 0
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        stamp = record.get("timestamp")
        if started is None and isinstance(stamp, str):
            with contextlib.suppress(ValueError):
                started = datetime.fromisoformat(stamp).timestamp()
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            tools += sum(1 for b in blocks_of(message) if b.get("type") == "tool_use")
    return started, tools


def _last_uuid(path: Path) -> str | None:
    """The ``uuid`` of a JSONL transcript's last whole line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("uuid"), str):
            return str(record["uuid"])
    return None


def install_background(app: Any, runtime: SubagentRuntime) -> BackgroundAgents | None:
    """Give ``app`` background agents (unless background tasks are disabled or there is no task registry)."""
    from catui.config.flags import auto_background_ms, background_tasks_disabled

    env = dict(app.services.get("env") or {})
    if background_tasks_disabled(env) or app.tasks is None:
        return None
    settings = getattr(app.settings, "merged", app.settings) or {}
    manager = BackgroundAgents(
        runtime, app.tasks, app.session, auto_background_ms=auto_background_ms(env, settings)
    )
    manager.install()
    app.services["background"] = manager
    app.session.ctx.services["background"] = manager
    return manager
