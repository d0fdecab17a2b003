"""The worker side of a remote child: its own checkout, its session loop, model calls and tools.

:class:`AgentWorker` is a plain class; the Ray executor makes it a Ray actor
(``ray.remote(AgentWorker)``), so this module imports nothing of Ray at the
top and is type-checked like the rest of catui. One worker runs one child:
:meth:`start` opens the checkout and starts the loop, :meth:`next_events`
hands the events over in batches, :meth:`send` queues a SendMessage for the
child's next tool round, :meth:`stop` aborts it, :meth:`finish` commits its
changes and returns them as a bundle.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.mcp.manager import McpManager
from catui.models.resolve import create_provider
from catui.sandbox.policy import BashSandbox
from catui.session.events import ErrorEvent, Event
from catui.session.session import Session, SessionConfig
from catui.subagents.executors.remote_extras import sandbox_on_worker, start_mcp_on_worker, worker_hook_runner
from catui.subagents.executors.remote_job import RemoteJob
from catui.subagents.executors.repo_bundle import bundle_changes, open_checkout
from catui.telemetry.hooks import RunTelemetry
from catui.telemetry.switch import start_telemetry
from catui.tools.base import ToolContext, ToolServices
from catui.tools.registry import builtin_tools


@dataclass
class WorkerOutcome:
    """What comes back when the child has ended: totals, its changes (a bundle or None), an error."""

    usage: dict[str, Any] = field(default_factory=dict)
    num_turns: int = 0
    changes: bytes | None = None
    error: str | None = None


class AgentWorker:
    """Runs one child on the worker it was placed on (see the module docstring)."""

    def __init__(self, job: RemoteJob, bundle: bytes | None, ref: str | None, base: str | None) -> None:
        self.job = job
        self._bundle, self._ref, self._base = bundle, ref, base
        self._events: list[Event] = []
        self._arrived = asyncio.Event()
        self._inbox: list[str] = []
        self._session: Session | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._error: str | None = None
        self._scratch = Path(tempfile.mkdtemp(prefix=f"agent-{job.agent_id}-", dir=host_scratch_dir()))
        self._checkout = self._scratch / "checkout"
        self._mcp: McpManager | None = None

    async def start(self) -> dict[str, Any]:
        """Open the checkout, build the session and start its loop; returns where it runs."""
        if self._bundle is not None and self._ref is not None:
            await asyncio.to_thread(open_checkout, self._bundle, self._ref, self._checkout)
        else:
            self._checkout.mkdir(parents=True, exist_ok=True)
        self._bundle = None  # the checkout holds it now; free the memory
        if self.job.mcp_servers:
            self._mcp = await start_mcp_on_worker(self.job.mcp_servers, cwd=self._agent_cwd(), env=dict(os.environ),
                                                  notice=self._notice)
        self._session = self._build_session()
        self._loop_task = asyncio.get_running_loop().create_task(self._run_loop(self._session))
        return {"pid": os.getpid(), "host": socket.gethostname(), "node": _node_id()}

    def _agent_cwd(self) -> Path:
        cwd = (self._checkout / self.job.cwd_in_repo).resolve()
        return cwd if cwd.is_dir() else self._checkout

    def _build_session(self) -> Session:
        job = self.job
        cwd = self._agent_cwd()
        if job.resolved is None:
            raise RuntimeError("a remote agent needs a model given by name (--model or settings), not a provider object")
        provider = create_provider(job.resolved, job.settings, dict(os.environ))
        tools = [tool for tool in builtin_tools(interactive=False) if tool.name in job.tool_names]
        if self._mcp is not None:
            tools += [tool for tool in self._mcp.tools() if tool.name in job.tool_names]
        sandbox = None
        if job.sandbox is not None:
            sandbox = BashSandbox(sandbox_on_worker(job.sandbox, Path(job.caller_root), self._checkout),
                                  report=self._notice)
        hooks = None
        if job.hooks is not None:
            for dropped in job.hooks.dropped:
                self._notice(f"hook {dropped} is a Python callback and does not run on the Ray worker")
            hooks = worker_hook_runner(job.hooks, session_id=job.session_id, cwd=cwd, checkout=self._checkout,
                                       env=dict(os.environ), agent_id=job.agent_id, agent_type=job.agent_type)
        ctx = ToolContext(
            cwd=cwd, project_root=self._checkout,
            permissions=job.permissions.with_working_directories(self._checkout),
            agent_id=job.agent_id, agent_type=job.agent_type, services=ToolServices(sandbox=sandbox),
        )
        telemetry = self._telemetry()
        config = SessionConfig(
            provider=provider, model=job.model_id, tools=tools, tool_context=ctx,
            system_prompt=_rewrite_paths(job.system_prompt, job.caller_root, str(self._checkout)),
            session_id=job.session_id, max_turns=job.max_turns, max_tokens=job.max_tokens,
            temperature=job.temperature, thinking=job.thinking, effort=job.effort,
            agent_id=job.agent_id, parent_tool_use_id=job.parent_tool_use_id,
            request_metadata=dict(job.request_metadata), history=list(job.history),
            max_tool_use_concurrency=job.max_tool_use_concurrency, pending_messages=self._take_inbox,
            hooks=hooks, telemetry=telemetry,
            # the caller's Agent call, carried here: the child's span joins the caller's trace
            spawned_from=telemetry.from_carrier(job.telemetry_carrier) if telemetry is not None else None,
        )
        return Session(config)

    def _telemetry(self) -> RunTelemetry | None:
        """This worker's telemetry, from the variables the caller sent (OTEL_* and the switches), when on."""
        if not self.job.telemetry_carrier:
            return None
        try:
            return start_telemetry(os.environ)
        except ConfigurationError as exc:  # the worker's Python lacks the extra: the agent runs, unobserved
            self._notice(f"telemetry is off on this worker: {exc}")
            return None

    def _notice(self, text: str) -> None:
        """A one-time notice for the caller (the sandbox cannot run here, a hook cannot travel)."""
        self._events.append(ErrorEvent(message=f"[ray worker] {text}", agent_id=self.job.agent_id,
                                       parent_tool_use_id=self.job.parent_tool_use_id))
        self._arrived.set()

    async def _run_loop(self, session: Session) -> None:
        try:
            async for event in session.run(self.job.first_message):
                self._events.append(event)
                self._arrived.set()
        except Exception as exc:  # reported to the caller, which fails the task with it
            self._error = f"{type(exc).__name__}: {exc}"
        finally:
            self._arrived.set()

    def _take_inbox(self) -> list[str]:
        queued, self._inbox = self._inbox, []
        return queued

    async def next_events(self, wait_s: float) -> tuple[list[Event], bool]:
        """The events since the last call (waiting up to ``wait_s`` for one), and whether the loop has ended."""
        if not self._events and not self._loop_done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), wait_s)
        self._arrived.clear()
        events, self._events = self._events, []
        return events, self._loop_done() and not self._events

    def _loop_done(self) -> bool:
        return self._loop_task is not None and self._loop_task.done()

    def send(self, text: str) -> None:
        """Queue a message for the child's next tool round (SendMessage)."""
        self._inbox.append(text)

    def stop(self) -> None:
        """Abort the child now (TaskStop); its loop ends with a result event."""
        if self._session is not None:
            self._session.abort()

    async def finish(self) -> WorkerOutcome:
        """Once the loop has ended: commit the agent's changes and return them with the totals."""
        if self._loop_task is not None:
            with contextlib.suppress(BaseException):
                await self._loop_task
        outcome = WorkerOutcome(error=self._error)
        if self._session is not None and self._session.config.telemetry is not None:
            # the agent's spans and events leave before the caller hears it ended (the caller's app may exit)
            await asyncio.to_thread(self._session.config.telemetry.flush)
        if self._session is not None:
            outcome.usage = dict(self._session.usage)
            outcome.num_turns = self._session.totals.num_turns
        try:
            if self._base is not None and self._session is not None:
                message = f"catui agent {self.job.agent_id}: {self.job.description}"
                outcome.changes = await asyncio.to_thread(bundle_changes, self._checkout, self._base, message)
        finally:
            if self._mcp is not None:
                with contextlib.suppress(Exception):
                    await self._mcp.aclose()
            shutil.rmtree(self._scratch, ignore_errors=True)
        return outcome


def _rewrite_paths(blocks: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    """The system prompt with the caller's repository path replaced by the worker's checkout."""
    out = []
    for block in blocks:
        if block.get("type") == "text" and old in str(block.get("text", "")):
            block = {**block, "text": str(block["text"]).replace(old, new)}
        out.append(block)
    return out


SCRATCH_FOLDER = "catui-agents"
"""Under the worker machine's temporary folder: one ``host-<pid>`` folder per host process, holding its
children's checkouts."""


def host_scratch_dir() -> Path:
    """This process's folder for its children's checkouts (made on first use)."""
    folder = Path(tempfile.gettempdir()) / SCRATCH_FOLDER / f"host-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sweep_scratch() -> None:
    """Remove the checkouts a host left behind when its process died without finishing its children (the caller
    killed with -9 ends its Ray job, and Ray kills the hosts), and this process's own leftovers from a dead host
    that had the same pid. Called when a host starts, before it has children."""
    root = Path(tempfile.gettempdir()) / SCRATCH_FOLDER
    if not root.is_dir():
        return
    for folder in root.glob("host-*"):
        try:
            pid = int(folder.name.removeprefix("host-"))
        except ValueError:
            continue
        if pid == os.getpid() or not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _node_id() -> str | None:
    """The Ray node this worker is on (None outside Ray)."""
    try:
        import ray  # already loaded in a Ray worker process; never imported by catui's own start-up

        return str(ray.get_runtime_context().get_node_id())
    except Exception:
        return None


class AgentHost:
    """A long-lived worker process that runs many children at once, each an :class:`AgentWorker`.

    Starting a Ray actor costs a new worker process (about a second); a host is started once and reused,
    so an agent's start costs one actor call. Killing the host's process ends every child on it, and the
    caller fails each of them with that reason.
    """

    def __init__(self) -> None:
        self.workers: dict[str, AgentWorker] = {}
        sweep_scratch()

    async def start(self, job: RemoteJob, bundle: bytes | None, ref: str | None, base: str | None) -> dict[str, Any]:
        """Start ``job`` here; returns where it runs (``pid``, ``host``, ``node``)."""
        worker = AgentWorker(job, bundle, ref, base)
        self.workers[job.agent_id] = worker
        try:
            return await worker.start()
        except BaseException:
            self.workers.pop(job.agent_id, None)
            await worker.finish()
            raise

    async def next_events(self, agent_id: str, wait_s: float) -> tuple[list[Event], bool]:
        return await self.workers[agent_id].next_events(wait_s)

    def send(self, agent_id: str, text: str) -> None:
        if agent_id in self.workers:
            self.workers[agent_id].send(text)

    def stop(self, agent_id: str) -> None:
        if agent_id in self.workers:
            self.workers[agent_id].stop()

    async def finish(self, agent_id: str) -> WorkerOutcome:
        """The child's outcome once its loop has ended; the host forgets it."""
        worker = self.workers.pop(agent_id)
        return await worker.finish()

    async def discard(self, agent_id: str) -> None:
        """Abort and forget a child whose caller has gone (its changes are dropped)."""
        worker = self.workers.pop(agent_id, None)
        if worker is not None:
            worker.stop()
            with contextlib.suppress(Exception):
                await worker.finish()

    def running(self) -> list[str]:
        """The ids of the children running here."""
        return list(self.workers)
