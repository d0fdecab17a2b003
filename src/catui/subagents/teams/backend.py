"""Where a teammate runs: the ``TeammateBackend`` seam and the in-process backend.

A backend keeps a teammate alive between its turns. It runs a turn with the
run's executor, tells its host when the turn ended, then waits for the host to
hand it the next message (its unread inbox) — or for the end. A process- or
Ray-backed teammate implements the same protocol; the coordinator does not
change.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from catui.messages import Message
from catui.session.events import Event
from catui.subagents.executors import AgentExecutor
from catui.subagents.teams.roster import Member


class TeammateHost(Protocol):
    """What a backend asks of the team (``catui.subagents.teams.coordinator.TeamCoordinator``)."""

    def forward(self, member: Member, event: Event) -> None:
        """One of the teammate's events, for the lead's stream."""
        ...

    def turn_ended(self, member: Member, failure: str | None) -> None:
        """A turn ended (``failure``: why it failed, for the lead)."""
        ...

    async def next_message(self, member: Member) -> Message | None:
        """Wait for the teammate's next turn (its unread messages as one user message); None: it ends."""
        ...

    def stopped(self, member: Member) -> None:
        """The teammate has stopped for good."""
        ...


class TeammateBackend(Protocol):
    """Runs teammates; ``backend_type`` is what ``config.json`` records (``in-process``)."""

    backend_type: str

    def start(self, member: Member, host: TeammateHost) -> None:
        """Start ``member``'s first turn (its run's ``first_message``) and keep it alive after."""
        ...

    async def stop(self, member: Member) -> None:
        """Stop ``member`` now (mid-turn included) and wait until it has."""
        ...


class InProcessTeammates:
    """Teammates as asyncio tasks on this event loop, each turn run by the executor."""

    backend_type = "in-process"

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, member: Member, host: TeammateHost) -> None:
        task = asyncio.get_running_loop().create_task(self._live(member, host), name=f"teammate {member.agent_id}")
        self._tasks[member.agent_id] = task

    async def _live(self, member: Member, host: TeammateHost) -> None:
        run = member.run
        try:
            while True:
                member.busy = True
                failure: str | None = None
                try:
                    async for event in self.executor.execute(run):
                        host.forward(member, event)
                except Exception as exc:  # a broken turn is reported to the lead, never lost
                    failure = f"{type(exc).__name__}: {exc}"
                member.busy = False
                result = run.result_event
                if failure is None and result is not None and result.is_error and not run.aborted:
                    failure = result.result or result.subtype
                if member.exiting or run.stop_requested:
                    return
                host.turn_ended(member, failure)
                message = await host.next_message(member)
                if message is None:
                    return
                run.first_message = message
                run.result_event = None
        except Exception as exc:  # its inbox or the team's files failed: it stops, and the host says why
            member.crash = f"{type(exc).__name__}: {exc}"
        finally:
            member.busy = False
            self._tasks.pop(member.agent_id, None)
            host.stopped(member)

    async def stop(self, member: Member) -> None:
        member.run.request_stop()
        task = self._tasks.get(member.agent_id)
        if task is None:
            return
        member.wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except Exception:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
