"""Per-agent limits: a watcher that stops a child at its budget, token, wall-clock or stall limit.

The watcher is fed the child's events (:meth:`SubagentRun.observe`) and owns two timers. When a
limit is reached it records which one and calls ``on_hit`` once; the run then stops through its
ordinary stop path (:meth:`SubagentRun.request_stop`), so tools end and the worktree is settled
as for any stopped child. :mod:`.outcome` turns the record into the parent's result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from catui.agents.definition import AgentDefinition
from catui.models.pricing import cost_usd, price_for
from catui.session.events import Event, UsageEvent
from catui.session.usage import USAGE_COUNTERS, total_tokens

LimitStatus = Literal["budget_exceeded", "timed_out", "stalled"]


@dataclass(frozen=True)
class RunLimits:
    """The limits of one child, from its definition (None: no such limit)."""

    max_budget_usd: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    stall_timeout_s: float | None = None

    @classmethod
    def of(cls, definition: AgentDefinition) -> RunLimits | None:
        """The definition's limits, or None when it sets none (the common case costs nothing)."""
        if (definition.max_budget_usd is None and definition.max_tokens is None
                and definition.timeout is None and definition.stall_timeout is None):
            return None
        return cls(definition.max_budget_usd, definition.max_tokens, definition.timeout, definition.stall_timeout)


@dataclass(frozen=True)
class LimitHit:
    """Which limit stopped the child, in the definition's words, and what it had spent by then."""

    status: LimitStatus
    field: str
    """The definition field (``maxBudgetUsd``, ``maxTokens``, ``timeout``, ``stallTimeout``)."""
    limit: float
    tokens: int
    cost_usd: float | None
    """None when a model the child used has no known price (tokens only)."""

    def describe(self) -> str:
        """One sentence: which limit, and what was spent."""
        if self.field == "maxBudgetUsd":
            what = f"it reached its budget of ${self.limit:.4f} (maxBudgetUsd)"
        elif self.field == "maxTokens":
            what = f"it reached its limit of {int(self.limit):,} tokens (maxTokens)"
        elif self.field == "timeout":
            what = f"it ran for its whole time limit of {_seconds(self.limit)} (timeout)"
        else:
            what = f"it produced no output and no tool progress for {_seconds(self.limit)} (stallTimeout)"
        return f"{what}; it had spent {self.spent_text()}"

    def spent_text(self) -> str:
        if self.cost_usd is None:
            return f"{self.tokens:,} tokens (cost unknown: no price for its model)"
        return f"{self.tokens:,} tokens, ${self.cost_usd:.4f}"


def _seconds(value: float) -> str:
    return f"{value:g}s" if value < 120 else f"{value / 60:g}m"


class LimitWatcher:
    """Counts a child's tokens and cost, times it, and reports the first limit it reaches."""

    def __init__(self, limits: RunLimits, on_hit: Callable[[LimitHit], None]) -> None:
        self.limits = limits
        self.on_hit = on_hit
        self.tokens = 0
        self.cost_usd = 0.0
        self.priced = True
        self.hit: LimitHit | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._seen: dict[str, int] = {}

    def start(self, session_usage: Mapping[str, Any]) -> None:
        """Arm the timers (call on the running loop when the child starts); usage so far is not counted."""
        if self.hit is not None or self._loop is not None:
            return
        self._seen = {key: int(session_usage.get(key) or 0) for key in USAGE_COUNTERS}
        self._loop = asyncio.get_running_loop()
        if self.limits.timeout_s is not None:
            self._deadline = self._loop.call_later(self.limits.timeout_s, self._trip, "timed_out", "timeout",
                                                   self.limits.timeout_s)
        self._arm_stall()

    def stop(self) -> None:
        """Disarm the timers (the run ended)."""
        for handle in (self._deadline, self._stall):
            if handle is not None:
                handle.cancel()
        self._deadline = self._stall = None

    def observe(self, event: Event, own: bool, session_usage: Mapping[str, Any]) -> None:
        """One event of the child (``own``) or of its descendants: progress; usage when it is the child's."""
        if self.hit is not None:
            return
        self._arm_stall()
        if own and isinstance(event, UsageEvent):
            self.sample(session_usage, event.model)

    def sample(self, session_usage: Mapping[str, Any], model: str) -> None:
        """Count what the child's cumulative ``session_usage`` added since the last sample; check the budgets.

        Called for each usage event, and before each model turn (the child's loop runs ahead of its
        event consumer, so the check before a turn is the one that keeps it from a request past its limit).
        """
        if self.hit is not None:
            return
        delta = {key: int(session_usage.get(key) or 0) - self._seen.get(key, 0) for key in USAGE_COUNTERS}
        if not any(delta.values()):
            return
        self._seen = {key: int(session_usage.get(key) or 0) for key in USAGE_COUNTERS}
        self.tokens += total_tokens(delta)
        if price_for(model) is None:
            self.priced = False
        else:
            self.cost_usd += cost_usd(model, delta)
        limits = self.limits
        if limits.max_budget_usd is not None and self.priced and self.cost_usd >= limits.max_budget_usd:
            self._trip("budget_exceeded", "maxBudgetUsd", limits.max_budget_usd)
        elif limits.max_tokens is not None and self.tokens >= limits.max_tokens:
            self._trip("budget_exceeded", "maxTokens", float(limits.max_tokens))

    def spent_cost(self) -> float | None:
        """The cost so far, or None when a model without a known price was used."""
        return self.cost_usd if self.priced else None

    def _arm_stall(self) -> None:
        if self.limits.stall_timeout_s is None or self._loop is None:
            return
        if self._stall is not None:
            self._stall.cancel()
        self._stall = self._loop.call_later(self.limits.stall_timeout_s, self._trip, "stalled", "stallTimeout",
                                            self.limits.stall_timeout_s)

    def _trip(self, status: LimitStatus, field: str, limit: float) -> None:
        if self.hit is not None:
            return
        self.hit = LimitHit(status, field, limit, self.tokens, self.spent_cost())
        self.stop()
        self.on_hit(self.hit)
