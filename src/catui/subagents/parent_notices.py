"""How a background agent's end reaches its parent (spec 11.3).

The ``<task-notification>`` text reaches the parent exactly once, by whichever comes first:

1. the parent's next tool round: the main session's ``pending_messages`` hook appends waiting
   notifications to that round's tool_result message, so the model sees them before its next request;
2. a new parent turn: front ends (print mode, the SDK, the interactive UI) await
   ``app.tasks.next_notification()`` once the parent's turn has ended.

The ``system/task_notification`` event is emitted when the run ends if the parent is mid-turn, else at
the start of the parent's next turn (its ``before_turn`` hook), so that print mode's stream-json shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.session.events import SystemEvent
from catui.session.session import Session
from catui.subagents import task_events
from catui.tasks.registry import TaskRegistry

if TYPE_CHECKING:  # the run's module loads with the sub-agent runtime (catui.lazy)
    from catui.subagents.run import SubagentRun


class ParentNotices:
    """Delivers background agents' notifications to the main session."""

    def __init__(self, session: Session, tasks: TaskRegistry) -> None:
        self.session = session
        self.tasks = tasks
        self._unannounced: list[SystemEvent] = []

    def connect(self) -> None:
        """Chain this object's hooks onto the main session's (its pending-messages and before-turn hooks)."""
        self.session.add_pending_messages(self.notifications_for_round)
        self.session.add_before_turn(self.before_parent_turn)

    def announce(self, run: SubagentRun, event: SystemEvent) -> None:
        """Emit ``event`` (and the ``task_updated`` it implies) now if the parent is mid-turn, else at the
        start of its next turn."""
        self.announce_events(run, task_events.with_status_update(run, event))

    def announce_events(self, run: SubagentRun, events: list[SystemEvent]) -> None:
        """Emit ``events`` now if the parent is mid-turn, else at the start of its next turn (after any
        announced before them, so their order holds)."""
        if self.session.is_running() and run.parent_ctx.emit is not None:
            for each in events:
                run.parent_ctx.emit(each)
        else:
            self._unannounced.extend(events)

    def notifications_for_round(self) -> list[str]:
        return [text for n in self.tasks.drain_notifications() for text in n.texts()]

    async def before_parent_turn(self) -> None:
        events, self._unannounced = self._unannounced, []
        for event in events:
            self.session.emit(event)
