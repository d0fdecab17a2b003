"""Stopping a local child's loop at a clean point so that it can continue elsewhere (a Ray worker).

A foreground child that moves to the background keeps its loop running in this
process while it waits for the model or runs a tool round. A remote executor
that wants it on a worker asks the :class:`HandoffGate` to hold it: the next
time the loop is about to start a model turn (the current tool round has ended,
its results are in the conversation), the gate emits a :class:`HandoffPoint`
into the child's event stream and parks the loop there. Every event the child
emitted before that point precedes the marker in the stream, so the consumer
that sees the marker has seen the whole conversation so far and may close the
local stream (which cancels the parked loop) and continue the run remotely.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from catui.session.events import Event
from catui.session.session import Session


@dataclass(kw_only=True)
class HandoffPoint(Event):
    """The local loop stopped between model turns; never leaves the executor that asked for it."""


class HandoffGate:
    """Holds one session's loop before its next model turn once :meth:`request` was called."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.requested = False
        self.reached = False
        self._installed = False

    def install(self) -> None:
        """Chain the gate into the session's ``before_turn`` hook (after the hooks already there)."""
        if self._installed:
            return
        self._installed = True
        async def hold_for_handoff() -> None:
            session = self.session
            if self.requested and not session.ctx.abort.is_set():
                self.requested, self.reached = False, True  # once: a later local run is not held again
                session.emit(HandoffPoint(agent_id=session.config.agent_id,
                                          parent_tool_use_id=session.config.parent_tool_use_id))
                # Parked until the consumer closes the stream, which cancels this loop.
                await asyncio.get_running_loop().create_future()

        self.session.add_before_turn(hold_for_handoff)

    def request(self) -> None:
        """Hold the loop at its next clean point (a model turn under way or a tool round finishes first)."""
        self.requested = True
