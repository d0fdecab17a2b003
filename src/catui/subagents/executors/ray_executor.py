"""The Ray executor: a child's session loop, model calls and tools run in a Ray actor on some node.

This module imports Ray at the top; only :mod:`.choice` imports this module,
and only when the Ray executor is chosen, so catui's start-up never loads Ray.

One remote run, step by step (docs/ray.md):

1. a local worktree the planner made is given back (a remote agent is always
   isolated, in its own checkout on the worker);
2. the caller's repository is bundled (HEAD plus uncommitted changes,
   :mod:`.repo_bundle`) and sent with a :class:`~.remote_job.RemoteJob` to a new
   host actor (:mod:`.ray_hosts`, a pool of reused worker processes) whose
   runtime environment alone carries the API keys;
3. its events stream back; the child's messages are mirrored into the local
   run, so its transcript and ``.catui/tasks/<id>.output`` grow as it works;
   SendMessage text queued for it is forwarded; a stop aborts it there;
4. at the end its commits come back as a bundle and become the branch of a
   fresh agent worktree, which the concluder keeps as it keeps any changed
   worktree; nothing changed leaves nothing;
5. a worker that dies fails the run with the reason (after ``ray.maxRetries``
   fresh attempts), never leaving a task that looks alive.

A foreground child runs in process; when it moves to the background
(:meth:`RayExecutor.moved_to_background`), its loop is held at its next clean
point (:mod:`.handoff_gate`: before the next model turn) and the same run
continues on a worker from its conversation so far, through the same stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import RayActorError, WorkerCrashedError

from catui.errors import CatuiError
from catui.models.resolve import ResolvedModel
from catui.session.events import AssistantMessageEvent, Event, UserMessageEvent
from catui.subagents.executors import AgentExecutor
from catui.subagents.executors.handoff_gate import HandoffGate, HandoffPoint
from catui.subagents.executors.ray_hosts import HostPool
from catui.subagents.executors.remote_job import job_from_run, worker_env
from catui.subagents.executors.remote_worker import WorkerOutcome
from catui.subagents.executors.repo_bundle import (
    RepoSnapshot,
    apply_changes,
    drop_snapshot_ref,
    snapshot_repository,
)
from catui.subagents.executors.shared_snapshots import SharedSnapshots
from catui.subagents.run import SubagentRun
from catui.subagents.worktrees import WorktreeLeases

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager

POLL_S = 1.0
"""How long one request for events waits on the worker when nothing happens (a stop does not wait for it)."""
STOP_GRACE_S = 10.0
"""How long a stopped worker has to end its loop and hand its changes back before it is killed."""


class RemoteWorkerDied(CatuiError):
    """The Ray worker running an agent died (its process was killed, its node was lost)."""


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` (``RAY_ADDRESS``), or start a local one on 127.0.0.1; once per process."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    else:
        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                 logging_level=logging.ERROR)


class RayExecutor:
    """Runs background children (and, with ``remote_foreground``, every child) on a Ray cluster.

    Children that stay local (foreground ones by default) go to ``local``, the in-process executor.
    """

    def __init__(
        self, local: AgentExecutor, worktrees: WorktreeLeases, *, settings: Mapping[str, Any],
        env: Mapping[str, str], parent_resolved: ResolvedModel | None, remote_foreground: bool = False,
        max_retries: int = 0, hosts: int | None = None, cpus_per_host: float = 0.5, mcp: McpManager | None = None,
    ) -> None:
        self.local = local
        self.mcp = mcp
        """The session's MCP servers: a job ships the configs of the servers its tools come from."""
        self.worktrees = worktrees
        self.settings = settings
        self.env = env
        self.parent_resolved = parent_resolved
        self.remote_foreground = remote_foreground
        self.max_retries = max(0, max_retries)
        self.hosts = hosts
        self.cpus_per_host = cpus_per_host
        self._pool: HostPool | None = None
        self._gates: dict[str, HandoffGate] = {}
        self._snapshots = SharedSnapshots(ray.put)
        """Repository snapshots shared by agents that ask for it (a workflow's, ``SpawnRequest.repository_share``)."""

    def execute(self, run: SubagentRun) -> AsyncIterator[Event]:
        """Run ``run`` on the cluster when it is a background run, asks for it (``SpawnRequest.remote``: a
        workflow's agents), or every run with ``remote_foreground``.

        A foreground run starts in process and moves to the cluster if it is moved to the background.
        """
        if run.is_async or run.request.remote or self.remote_foreground:
            return self._execute_remote(run)
        return self._local_until_moved(run)

    def moved_to_background(self, run: SubagentRun) -> None:
        """Continue ``run`` on the cluster once its current model turn and tool round have ended."""
        gate = self._gates.get(run.agent_id)
        if gate is not None:
            gate.request()

    async def _local_until_moved(self, run: SubagentRun) -> AsyncIterator[Event]:
        """The in-process stream of ``run``; when it is held at a handoff point, the rest runs remotely."""
        gate = HandoffGate(run.session)
        gate.install()
        self._gates[run.agent_id] = gate
        turns_before = run.session.totals.num_turns
        stream = self.local.execute(run)
        moved = False
        try:
            async for event in stream:
                if isinstance(event, HandoffPoint):
                    moved = True
                    break
                yield event
        finally:
            self._gates.pop(run.agent_id, None)
            closer = getattr(stream, "aclose", None)  # cancels the held loop; releases its timers and MCP servers
            if closer is not None:
                await closer()
        if moved:
            async for event in self._execute_remote(run, turns_done=run.session.totals.num_turns - turns_before):
                yield event

    async def aclose(self) -> None:
        """End the host actors this executor started (agents still on them are cut off)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _hosts(self) -> HostPool:
        if self._pool is None:
            connect(self.env.get("RAY_ADDRESS"))
            self._pool = HostPool(worker_env(self.env), size=self.hosts, cpus_per_host=self.cpus_per_host)
        return self._pool

    async def _execute_remote(self, run: SubagentRun, turns_done: int | None = None) -> AsyncIterator[Event]:
        """Run ``run`` on a host; ``turns_done``: it was moved mid-run after that many turns in process."""
        first_index = len(run.session.messages)
        pool = self._hosts()
        source = self.worktrees.project_root
        moved = turns_done is not None
        if run.worktree is not None and (run.is_resume or moved) and run.worktree.path.is_dir():
            # A resumed or moved agent continues from its worktree (its work so far), and its new commits go back there.
            source = run.worktree.path
        elif run.worktree is not None:
            # The agent gets its own checkout on the worker; the local worktree made for it is unused.
            await self.worktrees.settle(run.worktree)
            run.worktree = None
        share = run.request.repository_share if source == self.worktrees.project_root else None
        bundle: Any = None
        if share is not None:
            snapshot, bundle = await self._snapshots.take(share, source)
        else:
            snapshot = await asyncio.to_thread(snapshot_repository, source, run.agent_id)
            bundle = snapshot.bundle if snapshot is not None else None
        caller_root = snapshot.git_root if snapshot is not None else source
        run.start_limits()
        try:
            job = job_from_run(run, caller_root=caller_root, parent_resolved=self.parent_resolved,
                               settings=self.settings, turns_done=turns_done, mcp=self.mcp)
            start_args = (job, bundle, snapshot.ref if snapshot else None, snapshot.commit if snapshot else None)
            attempt = 0
            while True:
                attempt += 1
                slot = pool.take()
                finished = False
                try:
                    outcome = None
                    async for item in self._attempt(run, slot.actor, start_args, attempt, echoed=moved):
                        if isinstance(item, WorkerOutcome):
                            outcome, finished = item, True
                        else:
                            yield item
                except RemoteWorkerDied:
                    pool.drop(slot)
                    finished = True  # nothing left there to discard
                    if attempt > self.max_retries or run.stop_requested or run.stop_signal().is_set():
                        raise
                    # A fresh attempt starts the agent over: drop what the dead one said (its lines stay in the file).
                    del run.session.messages[first_index:]
                    run.tool_use_count, run.result_event = 0, None
                    continue
                finally:
                    pool.give_back(slot)
                    if not finished:  # stopped before it started, or the stream was closed early
                        with contextlib.suppress(Exception):
                            slot.actor.discard.remote(run.agent_id)
                if outcome is not None:
                    await self._take_outcome(run, outcome)
                return
        finally:
            run.stop_limits()
            if share is not None:
                await self._snapshots.give_back(share, source)
            elif snapshot is not None:
                await asyncio.to_thread(drop_snapshot_ref, snapshot)

    async def _attempt(self, run: SubagentRun, host: Any, start_args: tuple[Any, ...], attempt: int, *,
                       echoed: bool = False) -> AsyncIterator[Any]:
        """One attempt on ``host``: start, stream, forward messages, stop on request; yields events, then the outcome.

        ``echoed``: the worker's first message is already in the local conversation (a moved run continues
        from its last message), so the worker's echo of it is dropped.
        """
        stop = run.stop_signal()
        agent_id = run.agent_id
        try:
            placement = await _stoppable(host.start.remote(*start_args), run)
            if placement is None:  # stopped before it started
                run.aborted = True
                return
            run.report_placement({"executor": "ray", "attempt": attempt, **placement})
            stopping = False
            while True:
                if not stopping and (stop.is_set() or run.stop_request.is_set()):
                    stopping = True
                    host.stop.remote(agent_id)  # aborts the child's loop there, mid-request included
                    run.aborted = True
                self._forward_messages(run, host)
                if stopping:
                    events, done = await asyncio.wait_for(
                        _ref(host.next_events.remote(agent_id, POLL_S)), STOP_GRACE_S)
                else:
                    fetched = await _stoppable(host.next_events.remote(agent_id, POLL_S), run)
                    if fetched is None:
                        continue
                    events, done = fetched
                for event in events:
                    if echoed and event.agent_id == agent_id and isinstance(event, UserMessageEvent):
                        echoed = False
                        continue
                    self._mirror(run, event)
                    run.observe(event)
                    yield event
                if done:
                    break
            yield await asyncio.wait_for(_ref(host.finish.remote(agent_id)), STOP_GRACE_S * 6)
        except (RayActorError, WorkerCrashedError) as exc:
            where = run.placement or {}
            raise RemoteWorkerDied(
                f"the Ray worker running agent {agent_id} (pid {where.get('pid', '?')}, node "
                f"{str(where.get('node') or '?')[:12]}) died: {_first_line(exc)}"
            ) from None

    def _forward_messages(self, run: SubagentRun, host: Any) -> None:
        """SendMessage text queued locally for this run goes to the child's inbox on its host."""
        for text in run.session.pending_messages():
            host.send.remote(run.agent_id, text)

    def _mirror(self, run: SubagentRun, event: Event) -> None:
        """The child's own messages join the local conversation and its transcript sinks (the output file)."""
        if event.agent_id != run.agent_id or not isinstance(event, (AssistantMessageEvent, UserMessageEvent)):
            return
        run.session.messages.append(event.message)
        writer = run.session.config.transcript
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.append(event.message)

    async def _take_outcome(self, run: SubagentRun, outcome: WorkerOutcome) -> None:
        """Totals into the local run; the agent's commits onto a new agent worktree (kept by the concluder)."""
        for key, value in outcome.usage.items():  # this run's usage, added to what earlier runs spent
            current = run.session.usage.get(key)
            if isinstance(value, int) and isinstance(current, int):
                run.session.usage[key] = current + value
            elif current is None:
                run.session.usage[key] = value
        run.session.totals.num_turns += outcome.num_turns
        if outcome.changes is not None and run.worktree is not None:
            await asyncio.to_thread(apply_changes, run.worktree.path, outcome.changes)
        elif outcome.changes is not None:
            worktree = await self.worktrees.create(run.agent_id, run.session.session_id)
            try:
                await asyncio.to_thread(apply_changes, worktree.path, outcome.changes)
            except BaseException:
                await self.worktrees.discard(worktree)
                raise
            run.worktree = worktree
        if outcome.error is not None and run.result_event is None:
            raise RuntimeError(outcome.error)


async def _ref(ref: Any) -> Any:
    """Await a Ray object reference."""
    return await ref


async def _stoppable(ref: Any, run: SubagentRun) -> Any:
    """The value of ``ref``, or None as soon as the run is asked to stop (the reference is then abandoned)."""
    value = asyncio.ensure_future(_ref(ref))
    stopper = asyncio.ensure_future(run.wait_for_stop())
    try:
        await asyncio.wait({value, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if value.done():
        return value.result()
    value.cancel()
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


__all__ = ["RayExecutor", "RemoteWorkerDied", "RepoSnapshot", "connect"]
