"""Scheduled prompts of a session (CronCreate / CronDelete / CronList).

A scheduled prompt has a 5-field cron expression read in local time, is
recurring or fires once, and is either kept for the session only or
``durable``: written to the project's ``.catui/scheduled_tasks.json`` and
restored by the next interactive session. Front ends ask :meth:`CronSchedule.take_due`
between turns, so a prompt never fires inside one. Expressions are parsed by
``cronsim`` (a maintained library); the clock is injected so that tests can
move time without sleeping.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from catui.errors import CatuiError

SCHEDULE_FILE = Path(".catui") / "scheduled_tasks.json"
"""Where a project's durable scheduled prompts live, relative to its root."""

MAX_SCHEDULED = 50
"""How many scheduled prompts one session may hold; more is almost certainly a runaway loop."""


class CronExpressionError(CatuiError):
    """A cron expression that is not 5 valid fields."""


def local_now() -> datetime:
    """The current local time, timezone-aware (cron fields are read in local time)."""
    return datetime.now().astimezone()


@dataclass(frozen=True)
class ScheduleClock:
    """Where the schedule gets the time and how it waits; tests pass a fake one to move time without sleeping."""

    now: Callable[[], datetime] = local_now
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


POLL_SECONDS = 1.0
"""How often a waiting front end looks at the schedule again: prompts created by background agents, and
clock changes (suspend, daylight saving), are noticed within this time."""


def validate_cron(expression: str, now: datetime) -> datetime:
    """The first time after ``now`` that ``expression`` matches; raises :class:`CronExpressionError`."""
    fields = expression.split()
    if len(fields) != 5:
        raise CronExpressionError(
            f"Invalid cron expression '{expression}': expected 5 fields (minute hour day-of-month month "
            f"day-of-week), got {len(fields)}. Example: '*/5 * * * *' for every five minutes."
        )
    from cronsim import CronSim, CronSimError  # lazy (catui.lazy): cron expressions, when one is scheduled

    try:
        return next(CronSim(" ".join(fields), now))
    except CronSimError as exc:
        raise CronExpressionError(f"Invalid cron expression '{expression}': {exc}. Fix the field it names.") from exc
    except StopIteration as exc:
        raise CronExpressionError(f"Cron expression '{expression}' never matches a future time.") from exc


@dataclass
class ScheduledPrompt:
    """One scheduled prompt; ``next_fire`` is an ISO timestamp with its UTC offset."""

    id: str
    cron: str
    prompt: str
    recurring: bool
    durable: bool
    created_at: str
    next_fire: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CronSchedule:
    """The session's scheduled prompts, with the durable ones mirrored to ``store_path``."""

    def __init__(self, store_path: Path | None, *, clock: ScheduleClock | None = None) -> None:
        self.store_path = store_path
        self._clock = clock or ScheduleClock()
        self.clock = self._clock.now
        self._prompts: dict[str, ScheduledPrompt] = {}
        self.restore_warnings: list[str] = []

    # -- the tools' operations --------------------------------------------------------------------

    def create(self, cron: str, prompt: str, *, recurring: bool = True, durable: bool = False) -> ScheduledPrompt:
        """Schedule ``prompt``; raises :class:`CronExpressionError` or :class:`CatuiError` (too many, no store)."""
        if not prompt.strip():
            raise CatuiError("The prompt to schedule is empty; give the text the session should receive.")
        if len(self._prompts) >= MAX_SCHEDULED:
            raise CatuiError(
                f"This session already has {MAX_SCHEDULED} scheduled prompts; delete some with CronDelete first."
            )
        if durable and self.store_path is None:
            raise CatuiError("Durable scheduled prompts need a project folder to keep them in; use durable: false.")
        now = self.clock()
        first = validate_cron(cron, now)
        entry = ScheduledPrompt(
            id=secrets.token_hex(4), cron=" ".join(cron.split()), prompt=prompt, recurring=recurring,
            durable=durable, created_at=now.isoformat(), next_fire=first.isoformat(),
        )
        self._prompts[entry.id] = entry
        if durable:
            self._save()
        return entry

    def delete(self, prompt_id: str) -> ScheduledPrompt | None:
        """Remove a scheduled prompt; the removed entry, or None when no prompt has that id."""
        entry = self._prompts.pop(prompt_id, None)
        if entry is not None and entry.durable:
            self._save()
        return entry

    def entries(self) -> list[ScheduledPrompt]:
        """Every scheduled prompt, soonest first."""
        return sorted(self._prompts.values(), key=lambda e: datetime.fromisoformat(e.next_fire))

    # -- firing -----------------------------------------------------------------------------------

    def take_due(self) -> list[ScheduledPrompt]:
        """The prompts due now, soonest first; recurring ones move to their next time, one-shots go.

        A recurring prompt whose times were missed (the session was busy) fires once, not once per miss.
        """
        now = self.clock()
        due = [e for e in self.entries() if datetime.fromisoformat(e.next_fire) <= now]
        durable_changed = False
        for entry in due:
            if entry.recurring:
                entry.next_fire = validate_cron(entry.cron, now).isoformat()
            else:
                del self._prompts[entry.id]
            durable_changed = durable_changed or entry.durable
        if durable_changed:
            self._save()
        return due

    def seconds_until_next(self) -> float | None:
        """How long until the soonest prompt is due (0 when one is due), or None when none is scheduled."""
        upcoming = self.entries()
        if not upcoming:
            return None
        return max(0.0, (datetime.fromisoformat(upcoming[0].next_fire) - self.clock()).total_seconds())

    async def wait_due(self) -> list[ScheduledPrompt]:
        """Wait until at least one prompt is due and take the due ones (front ends call it between turns)."""
        while True:
            due = self.take_due()
            if due:
                return due
            remaining = self.seconds_until_next()
            await self._clock.sleep(POLL_SECONDS if remaining is None else min(max(remaining, 0.01), POLL_SECONDS))

    # -- the durable file -------------------------------------------------------------------------

    def restore(self) -> int:
        """Load the durable prompts of the store file (the next interactive session); how many were loaded.

        A broken file or entry is skipped with a warning in ``restore_warnings``, never fatal.
        """
        if self.store_path is None or not self.store_path.is_file():
            return 0
        try:
            raw = json.loads(self.store_path.read_text(encoding="utf-8"))
            entries = raw["tasks"]
            if not isinstance(entries, list):
                raise TypeError("'tasks' is not a list")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.restore_warnings.append(
                f"{self.store_path}: cannot read scheduled prompts ({exc}); fix or delete the file."
            )
            return 0
        now = self.clock()
        loaded = 0
        for index, item in enumerate(entries):
            try:
                entry = ScheduledPrompt(**{**item, "durable": True})
                next_fire = datetime.fromisoformat(entry.next_fire)
                if next_fire.tzinfo is None:
                    raise ValueError("next_fire has no UTC offset")
                if next_fire < now and entry.recurring:
                    # times missed while no session ran are not replayed; the next one is
                    entry.next_fire = validate_cron(entry.cron, now).isoformat()
            except (TypeError, ValueError, CatuiError) as exc:
                self.restore_warnings.append(f"{self.store_path}: entry {index} skipped ({exc}).")
                continue
            self._prompts[entry.id] = entry
            loaded += 1
        return loaded

    def _save(self) -> None:
        """Write the durable prompts atomically: a temporary file in the same folder, then a rename."""
        assert self.store_path is not None
        durable = [e.to_json() for e in self.entries() if e.durable]
        self.store_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".scheduled_tasks.", suffix=".tmp", dir=self.store_path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"tasks": durable}, handle, indent=2)
                handle.write("\n")
            os.replace(tmp, self.store_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
