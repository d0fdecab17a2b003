"""What may start a turn while the user is at the prompt: background-agent notifications (and teammates'
messages) and due scheduled prompts (CronCreate).

Both only ever arrive between turns. One taken in the same instant as the
user's line is kept here and runs after that line's turn, never lost.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from catui.cli.tui.team import leading_team

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.messages import Block


class BetweenTurnArrivals:
    """Waiters for the next notification and the next due scheduled prompts, and the ones held back."""

    def __init__(self) -> None:
        self._scheduled: list[Any] = []
        self._notifications: list[str | list[Block] | None] = []

    def keep_notification(self, notification: str | list[Block] | None) -> None:
        """Hold a notification that came with the user's line: the next waiter hands it out."""
        self._notifications.append(notification)

    def keep_scheduled(self, entries: list[Any]) -> None:
        """Hold scheduled prompts that fell due with the user's line: the next waiter hands them out."""
        self._scheduled.extend(entries)

    def scheduled_waiter(self, app: AgentApp) -> asyncio.Future[Any] | None:
        """A future of the next due scheduled prompts (a list), or None when the session has no schedule."""
        if self._scheduled:
            pending, self._scheduled = self._scheduled, []
            done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            done.set_result(pending)
            return done
        schedule = app.schedule
        return None if schedule is None else asyncio.ensure_future(schedule.wait_due())

    def notification_waiter(self, app: AgentApp) -> asyncio.Future[Any] | None:
        """A future of the next notification (None in it: no background agent runs), or None without tasks."""
        if self._notifications:
            done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            done.set_result(self._notifications.pop(0))
            return done
        waiter = app.tasks.next_notification
        if waiter is None:
            return None
        teams = leading_team(app)
        if teams is not None:  # teammates' messages start lead turns too; the team lives as long as the session
            return asyncio.ensure_future(teams.next_lead_input(waiter, end_team=False))
        return asyncio.ensure_future(waiter())
