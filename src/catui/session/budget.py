"""The session-wide spending limit (``--max-budget-usd``, the SDK's ``max_budget_usd``).

One :class:`SessionBudget` watches the :class:`~catui.session.usage.UsageTracker` that the main
session shares with every sub-agent (foreground and background) and with server-side web search,
so each response of any of them is counted once. When the total cost reaches the limit the budget
trips once and calls its ``on_exceeded`` callbacks (the application aborts the main session and
stops the background agents); the main session then ends with the result subtype
``error_max_budget_usd``, as Claude Code's print mode does.

Costs come from :mod:`catui.models.pricing`. A model without a known price cannot be counted in
dollars: its tokens are counted instead, and the budget says so once per model (``on_warning``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from catui.errors import ConfigurationError
from catui.models.pricing import cost_usd, price_for
from catui.session.usage import total_tokens

BUDGET_SUBTYPE = "error_max_budget_usd"


class SessionBudget:
    """A dollar limit over all usage of a session and its sub-agents; trips once when reached."""

    def __init__(self, limit_usd: float, *, on_warning: Callable[[str], None] | None = None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.exceeded = False
        self.on_exceeded: list[Callable[[], None]] = []
        self.on_warning = on_warning
        self.warnings: list[str] = []
        self.unpriced_tokens: dict[str, int] = {}
        """Tokens of each model without a known price (counted, but not in dollars)."""

    def observe(self, model: str, usage: Mapping[str, Any]) -> None:
        """Count one response's usage (the tracker's listener); trip when the limit is reached.

        This runs once per model response of every agent; it is a price lookup and a few additions.
        """
        if price_for(model) is None:
            self._count_unpriced(model, usage)
            return
        self.spent_usd += cost_usd(model, usage)
        if not self.exceeded and self.spent_usd >= self.limit_usd:
            self.exceeded = True
            for callback in list(self.on_exceeded):
                callback()

    def _count_unpriced(self, model: str, usage: Mapping[str, Any]) -> None:
        first = model not in self.unpriced_tokens
        self.unpriced_tokens[model] = self.unpriced_tokens.get(model, 0) + total_tokens(usage)
        if first:
            message = (f"--max-budget-usd: model {model!r} has no known price; its tokens are counted "
                       "but add nothing to the budget's dollar total")
            self.warnings.append(message)
            if self.on_warning is not None:
                self.on_warning(message)

    def describe(self) -> str:
        """The one-line result text of a run stopped by the budget: the limit and what was spent."""
        text = f"Reached the maximum budget of ${self.limit_usd:.4f} (--max-budget-usd): spent ${self.spent_usd:.4f}"
        if self.unpriced_tokens:
            tokens = sum(self.unpriced_tokens.values())
            models = ", ".join(sorted(self.unpriced_tokens))
            text += f", plus {tokens:,} tokens of models without a known price ({models}) not counted in dollars"
        return text + "."


def check_budget_amount(value: object, where: str) -> float | None:
    """A budget option's value as a positive float (None stays None); ConfigurationError names ``where``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or value != value:
        raise ConfigurationError(
            f"{where} must be a positive amount in US dollars, e.g. 0.50; got {value!r}")
    return float(value)
