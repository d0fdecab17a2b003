"""Background agents: launch, drive, conclude, notify (spec 6.2, 8.2, 11.3, 13; observed section 4).

A run that starts in the background (the call's ``run_in_background``, the
definition's ``background: true``) or moves there from the foreground
(:class:`~catui.subagents.foreground.Handover`) becomes a ``local_agent``
task; its driver consumes the executor's events in an asyncio task of this
process. When the run ends (completed, failed or stopped) its
``<task-notification>`` is queued in the task registry and reaches the parent
exactly once (see :mod:`catui.subagents.parent_notices`).

At most ``max_running`` of them run at once (``CATUI_MAX_CONCURRENT_SUBAGENTS``,
see :mod:`catui.config.concurrency`): a launch beyond that is accepted at once,
its task ``queued``, and its driver waits for a free place before the child's
first request. A run moved here from the foreground is already running and
never waits (nor does it take a place).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from catui.config.compat import CompatProfile
from catui.config.concurrency import DEFAULT_MAX_CONCURRENT_SUBAGENTS
from catui.session.events import AssistantMessageEvent, Event
from catui.subagents import task_events
from catui.subagents.background_tasks import AgentTaskRecords, launched_result
from catui.subagents.child_session import hang_under_current_call, mark_meta_finished, record_agent_selected
from catui.subagents.executors import AgentExecutor
from catui.subagents.foreground import Handoff
from catui.subagents.hand_back import tools_used
from catui.subagents.handoff_notes import record_review, with_warning
from catui.subagents.live import LiveAgents
from catui.subagents.outcome import RunConcluder, answer_text
from catui.subagents.output_scan import scanned_notification_result
from catui.subagents.parent_notices import ParentNotices
from catui.subagents.progress_summary import ProgressSummaries
from catui.subagents.resume_state import Carried, carried_from_memory, reset_for_next_message
from catui.subagents.run import SubagentRun
from catui.tasks.notifications import (
    NOTIFICATION_POSTED_KEY,
    TaskNotification,
    current_task_notification,
    format_task_notification,
    notification_summary,
    tools_used_reminder,
)
from catui.tasks.registry import Task, TaskRegistry, TaskStatus
from catui.tools.base import ToolResult

CANCEL_GRACE_S = 2.0


class BackgroundAgents:
    """The background agents of one application; the launcher of the spawner and the foreground's handover."""

    def __init__(
        self, tasks: TaskRegistry, records: AgentTaskRecords, executor: AgentExecutor, concluder: RunConcluder,
        live: LiveAgents, notices: ParentNotices, summaries: ProgressSummaries | None = None, *,
        max_running: int = DEFAULT_MAX_CONCURRENT_SUBAGENTS, compat: CompatProfile | None = None,
    ) -> None:
        self.compat = compat or CompatProfile()
        """The contract the launch text and notifications follow (catui.config.compat)."""
        self.tasks = tasks
        self.records = records
        self.executor = executor
        self.concluder = concluder
        self.live = live
        self.notices = notices
        self.summaries = summaries
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._active: dict[str, SubagentRun] = {}
        self._stopping: set[str] = set()
        self._notes: dict[str, str] = {}
        self.max_running = max(1, max_running)
        self._places_taken = 0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    # -- starting ---------------------------------------------------------------------------------

    def launch(self, run: SubagentRun) -> ToolResult:
        """Start a prepared run as a background task; returns the parent's immediate result."""
        run.is_async = True
        run.stop_event = asyncio.Event()
        task = self._start_task(run, copy_existing=False)
        placed = self._place_or_queue(task)
        self.live.attach_inbox(run)
        self._start_driver(run, task, None, placed=placed)
        # The current contract announces the new set of background agents first, then the task's start.
        self._announce_set(run)
        task_events.emit(run, task_events.task_started(run, status=None if placed else "queued"))
        return launched_result(run, task, current=self.compat.hand_back_framing())

    def adopt(self, run: SubagentRun, handoff: Handoff) -> ToolResult:
        """Take over a foreground run that moves here (auto-background, Ctrl-B); its driver continues the stream."""
        run.is_async = True
        task = self._start_task(run, copy_existing=True)
        self._start_driver(run, task, handoff)
        # A remote executor continues it on a worker from its next clean point (the stream stays the same).
        self.executor.moved_to_background(run)
        return launched_result(run, task, current=self.compat.hand_back_framing())

    def relaunch(
        self, run: SubagentRun, carried: Carried, *, copy_existing: bool, note: str | None = None
    ) -> None:
        """Continue a resumed run (its next message set) in the background, its task covering its whole life."""
        task = self._start_task(run, copy_existing=copy_existing, resumed=True, carried=carried)
        if note is not None:
            self._notes[run.agent_id] = note
        placed = self._place_or_queue(task)
        self.live.attach_inbox(run)
        self._start_driver(run, task, None, placed=placed)
        self._announce_set(run)
        task_events.emit(run, task_events.task_started(run, status=None if placed else "queued"))

    def resume_held(self, agent_id: str, text: str, *, tool_use_id: str | None = None) -> bool:
        """Continue a finished agent this process still holds, with ``text``; False when it is not held.

        ``tool_use_id``: the SendMessage call that resumes it, named by its next notification (current contract).
        """
        run = self.live.take_finished(agent_id)
        if run is None:
            return False
        if tool_use_id is not None:
            run.request = replace(run.request, tool_use_id=tool_use_id)
        carried = carried_from_memory(run, self.tasks.get(agent_id))
        reset_for_next_message(run, text)
        if run.worktree is not None and not run.worktree.path.is_dir():
            # Its unchanged worktree was removed when it finished: it continues in the parent's folder,
            # as an agent resumed after a restart does.
            ctx, parent = run.session.ctx, run.parent_ctx
            ctx.cwd, ctx.project_root = parent.cwd, parent.project_root
            ctx.permissions = ctx.permissions.with_working_directories(*parent.permissions.working_directories)
            run.worktree = None
        # A worktree it kept is where it continues, and is settled (kept and reported) again at the end.
        # A foreground agent continued for the first time gets an output file with its whole conversation.
        first_time = not self.tasks.output_path(agent_id).exists()
        run.is_resume = True
        hang_under_current_call(run)
        record_agent_selected(self.concluder.deps.telemetry, run.definition, run.model, is_async=True,
                              is_fork=run.is_fork, depth=run.depth, is_resume=True)
        self.relaunch(run, carried, copy_existing=first_time)
        return True

    def running_run(self, agent_id: str) -> SubagentRun | None:
        """The run of a background agent running now, or None."""
        return self._active.get(agent_id)

    def is_running(self, agent_id: str) -> bool:
        """Whether ``agent_id`` is a background agent running now, or queued to run."""
        task = self.tasks.get(agent_id)
        return task is not None and task.type == "local_agent" and task.is_live

    def _start_task(
        self, run: SubagentRun, *, copy_existing: bool, resumed: bool = False, carried: Carried | None = None
    ) -> Task:
        task = self.records.start(run, stop=lambda: self.stop(run.agent_id), copy_existing=copy_existing,
                                  resumed=resumed, carried=carried)
        self._active[run.agent_id] = run
        return task

    def _place_or_queue(self, task: Task) -> bool:
        """Take a place for a new run now (True), or mark its task ``queued`` (False); decided at once, in order."""
        if self._places_taken < self.max_running and not self._waiting:
            self._places_taken += 1
            return True
        task.status = "queued"
        task.changed()
        return False

    async def _wait_for_place(self, run: SubagentRun, task: Task) -> bool:
        """Wait (first come, first served) for a place, or for a stop; True once a place is held."""
        if run.stop_event is None:
            run.stop_event = asyncio.Event()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        stopping: asyncio.Future[Any] = asyncio.ensure_future(run.stop_event.wait())
        try:
            await asyncio.wait([turn, stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if turn.done():
                held = not turn.cancelled()
            else:
                held = False
                turn.cancel()
                with contextlib.suppress(ValueError):
                    self._waiting.remove(turn)
        if held and run.stop_event.is_set():
            self._free_place()  # stopped as its turn came: the place goes to the next in line
            held = False
        if held:
            task.status = "running"
            task.changed()
            task_events.emit(run, task_events.task_progress(run, status="running"))
        return held

    def _free_place(self) -> None:
        """A run that held a place ended: the first one waiting takes it over, or it is free."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._places_taken -= 1

    def _start_driver(self, run: SubagentRun, task: Task, handoff: Handoff | None, *, placed: bool = False) -> None:
        runner = asyncio.get_running_loop().create_task(self._drive(run, task, handoff, placed),
                                                        name=f"agent-{run.agent_id}")
        task.runner = runner
        self._runners[run.agent_id] = runner
        if self.summaries is not None:
            self.summaries.start(run, task, lambda line: task_events.emit(run, task_events.task_progress(run, line)))

    def _announce_set(self, origin: SubagentRun) -> None:
        """The current contract's ``background_tasks_changed``: the background agents running now."""
        if origin.current_contract and origin.parent_ctx.emit is not None:
            running = [r for r in self._active.values() if r.agent_id in self._runners]
            # An idle parent hears it with its next turn, after the ended task's notification events.
            self.notices.announce_events(origin, [task_events.background_tasks_changed(running, origin)])

    # -- driving ----------------------------------------------------------------------------------

    async def _drive(self, run: SubagentRun, task: Task, handoff: Handoff | None, placed: bool) -> None:
        emit = run.parent_ctx.emit
        crash: BaseException | None = None
        events: AsyncIterator[Event]
        holds_place = placed
        try:
            if handoff is None and not placed:
                holds_place = await self._wait_for_place(run, task)
                if not holds_place:  # stopped while queued: it never ran
                    raise asyncio.CancelledError
            events = self.executor.execute(run) if handoff is None else handoff
            async for event in events:
                if emit is not None:
                    emit(event)
                if isinstance(event, AssistantMessageEvent) and event.agent_id == run.agent_id:
                    self.records.update(run, task)
                    if emit is not None:
                        emit(task_events.task_progress(run))
        except asyncio.CancelledError:
            crash = asyncio.CancelledError()
        except Exception as exc:  # a bug in a child must not take the parent down: it is reported as failed
            crash = exc
        try:
            await self._conclude(run, task, crash)
        finally:
            if self.summaries is not None:
                self.summaries.stop(run.agent_id)
            if holds_place:
                self._free_place()
            for ended in run.on_end:
                ended()
            self._runners.pop(run.agent_id, None)
            self._active.pop(run.agent_id, None)
            self._announce_set(run)
            self._stopping.discard(run.agent_id)

    async def _conclude(self, run: SubagentRun, task: Task, crash: BaseException | None) -> None:
        if self.summaries is not None:
            self.summaries.stop(run.agent_id)  # no summary request while the end is being settled
        stopped = run.agent_id in self._stopping or run.stop_requested or isinstance(crash, asyncio.CancelledError)
        worktree: tuple[str | None, str | None] = (None, None)
        error: str | None = None
        result: str | None
        warning: str | None = None
        limit_status: TaskStatus | None = None
        if crash is not None:
            worktree = await self.concluder.worktrees.discard(run.worktree)  # a kept one is named in the notice
            result = run.latest_text()
            if not stopped:
                error = f"{type(crash).__name__}: {crash}"
        else:
            try:
                outcome, warning = await self.concluder.finish_reviewed(run)
            except Exception as exc:  # the task must still end, or the parent would wait for it forever
                outcome = ToolResult(f"Agent \"{run.description}\" failed: {type(exc).__name__}: {exc}",
                                     is_error=True)
            data = outcome.data if isinstance(outcome.data, dict) else {}
            worktree = (data.get("worktreePath"), data.get("worktreeBranch"))
            if run.limit_hit is not None and run.aborted:
                # Stopped at a limit: the result says which, what was spent, and the last text.
                limit_status, result = run.limit_hit.status, answer_text(outcome)
            elif stopped:
                result = run.latest_text()
            elif outcome.is_error:
                error, result = answer_text(outcome), None
            else:
                result = with_warning(answer_text(outcome), warning)
        status: TaskStatus = limit_status or (
            "stopped" if stopped else ("failed" if error is not None else "completed"))
        run.end_status = status
        mark_meta_finished(run.transcript_path)
        usage = run.progress_usage()  # the notification reports this run; the task, the agent's whole life
        self.records.finish_counts(run, task)
        note = self._notes.pop(run.agent_id, None)
        if note is not None:
            result = f"{note}\n\n{result}" if result else note
        summary = notification_summary(run.description, status, error)
        report = result
        if result and self.compat.scans_output():
            result = scanned_notification_result(result)
        if self.compat.hand_back_framing():
            text = current_task_notification(
                task_id=run.agent_id, tool_use_id=run.request.tool_use_id, output_file=str(task.output_file),
                status=status, description=run.description, error=error, result=result, usage=usage,
                worktree_path=worktree[0], worktree_branch=worktree[1],
            )
        else:
            text = format_task_notification(
                task_id=run.agent_id, tool_use_id=run.request.tool_use_id, output_file=str(task.output_file),
                status=status, summary=summary, result=result, usage=usage,
                worktree_path=worktree[0], worktree_branch=worktree[1],
            )
        lead: str | None = None
        if self.compat.hand_back_framing():
            # The current contract's event summary is the report itself, the error, or the description.
            if status == "completed":
                summary = report or run.description
            elif status == "failed":
                summary = error or summary
            elif status == "stopped":
                summary = run.description
            lead = tools_used_reminder(tools_used(run.own_messages()))
        event = task_events.task_notification(run, status=status, output_file=str(task.output_file), summary=summary,
                                              summary_is_report=bool(report) and status == "completed"
                                              and self.compat.hand_back_framing())
        if status == "completed" and run.parent_ctx.permissions.mode == "auto":
            # The review ran (spec 12.1): its verdict is the output file's last line, which also tells the
            # deferred review (on read) that it is done. Empty content: nothing was flagged.
            record_review(task.output_file, run.agent_id, warning or "")
        self.live.keep_finished(run)
        unread = self.live.close_inbox(run.agent_id)
        woken = self.live.take_wake(run.agent_id)
        self.records.names.release(run.agent_id)
        # The notification is queued before the task ends, so a waiter never sees "nothing running,
        # nothing waiting" in between.
        # Recorded before it is posted: a catui started after this process dies knows the parent was told
        # (or was about to be), and does not resume the agent to tell it again.
        task.metadata[NOTIFICATION_POSTED_KEY] = True
        task.changed()
        if not self._deliver_to_parent_agent(run, text):
            self.tasks.post_notification(TaskNotification(run.agent_id, text, data={"status": status, "run_id": run.run_id},
                                                           lead=lead))
        self.notices.announce(run, event)
        if unread and (status == "completed" or woken):
            # Messages queued during its last model request were never read (no tool round followed): it
            # continues with them, as a finished agent messaged by id does, instead of losing them. Soon, not
            # now: this driver's own bookkeeping for the agent id ends after this returns. Scheduled before the
            # task ends, so that whoever waits for background work sees it running again, not a gap.
            asyncio.get_running_loop().call_soon(self.continue_with_unread, run.agent_id, unread)
        task.finish(status, result, error=error)

    def continue_with_unread(self, agent_id: str, unread: list[str]) -> None:
        """Continue a finished agent this process holds with the messages it never read (if not running)."""
        if not self.is_running(agent_id):
            self.resume_held(agent_id, "\n\n".join(unread))

    def _deliver_to_parent_agent(self, run: SubagentRun, text: str) -> bool:
        """A nested agent's notification goes to the agent that launched it; False when it goes to the main session.

        A running parent reads it at its next tool round (or continues with it, when it ends first); a parent
        that has ended and is still held continues in the background with it. A parent this process no
        longer holds cannot hear it: the main session gets it instead.
        """
        parent_id = run.parent_ctx.agent_id
        if run.depth < 2 or parent_id is None:
            return False
        if parent_id in self.live.inboxes:
            self.live.queue_notice(parent_id, text)
            return True
        if parent_id in self.live.finished:
            self.continue_with_unread(parent_id, [text])  # now: its task is running before this one ends
            return True
        return False

    async def stop(self, agent_id: str) -> None:
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
