"""How hard the model thinks: effort levels and extended-thinking budgets, checked once, sent by providers.

*Effort* is one of ``low``, ``medium``, ``high``, ``xhigh``, ``max`` (the
claude-agent-sdk's ``EffortLevel``) or a positive integer (agent definitions
may give one). The Messages API only takes the names, so an integer is mapped
onto a name by :func:`effort_level` (1–50 low, 51–85 medium, 86–100 high,
above 100 max). The Anthropic provider sends it as ``output_config.effort``,
OpenAI-compatible providers as ``reasoning_effort``; nothing is sent when no
effort is set, so models without the parameter keep working.

*Extended thinking* is ``{"type": "enabled", "budget_tokens": N}`` (N at least
1,024, the API's minimum), ``{"type": "adaptive"}`` or ``{"type": "disabled"}``,
from ``--max-thinking-tokens``, ``MAX_THINKING_TOKENS`` or the SDK's
``thinking`` / ``max_thinking_tokens``. A budget of 0 switches thinking off:
it is kept as ``{"type": "disabled"}`` so that it wins over the environment,
and no ``thinking`` field is sent (:func:`thinking_is_on`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catui.errors import ConfigurationError

EFFORT_NAMES: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""The effort levels the API and the claude-agent-sdk accept, lowest first."""

MIN_THINKING_BUDGET = 1024
"""The Messages API refuses a smaller ``budget_tokens``."""

Effort = str | int


def effort_level(effort: Effort) -> str:
    """The level name sent on the wire for ``effort`` (an integer is bucketed; see the module docstring)."""
    if isinstance(effort, str):
        return effort
    if effort <= 50:
        return "low"
    if effort <= 85:
        return "medium"
    if effort <= 100:
        return "high"
    return "max"


def parse_effort(value: object, where: str) -> Effort | None:
    """A user-given effort (flag, setting, SDK option) checked; ``where`` names it in the error.

    Accepts a level name in any case, a positive integer, or a string of digits; ``None`` and ``""`` mean unset.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ConfigurationError(_effort_problem(value, where))
    if isinstance(value, int):
        if value > 0:
            return value
        raise ConfigurationError(_effort_problem(value, where))
    if isinstance(value, str):
        text = value.strip().lower()
        if text in EFFORT_NAMES:
            return text
        if text.isdigit() and int(text) > 0:
            return int(text)
    raise ConfigurationError(_effort_problem(value, where))


def _effort_problem(value: object, where: str) -> str:
    return (
        f"{where}: effort {value!r} is not one of {', '.join(EFFORT_NAMES)} or a positive integer; "
        "use one of those (e.g. --effort high)"
    )


DISABLED: dict[str, Any] = {"type": "disabled"}


def thinking_from_budget(value: object, where: str) -> dict[str, Any] | None:
    """``{"type": "enabled", "budget_tokens": N}`` for a token budget; 0 is ``{"type": "disabled"}``; unset None."""
    if value is None or value == "":
        return None
    budget: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        budget = value
    elif isinstance(value, str) and value.strip().isdigit():
        budget = int(value.strip())
    if budget is None or budget < 0:
        raise ConfigurationError(
            f"{where}: thinking budget {value!r} is not a whole number of tokens; "
            f"give 0 (off) or at least {MIN_THINKING_BUDGET}"
        )
    if budget == 0:
        return dict(DISABLED)
    if budget < MIN_THINKING_BUDGET:
        raise ConfigurationError(
            f"{where}: thinking budget {budget} is below the API's minimum of {MIN_THINKING_BUDGET} tokens; "
            f"give 0 (off) or at least {MIN_THINKING_BUDGET}"
        )
    return {"type": "enabled", "budget_tokens": budget}


def parse_thinking_config(value: object, where: str) -> dict[str, Any] | None:
    """The SDK's ``thinking`` option (``ThinkingConfig``) checked; unset gives ``None``."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f'{where}: thinking must be a dict such as {{"type": "enabled", "budget_tokens": 4000}}, '
            f"not {type(value).__name__}"
        )
    kind = value.get("type")
    if kind == "disabled":
        return dict(DISABLED)
    if kind == "enabled":
        budget = value.get("budget_tokens")
        if budget is None:
            raise ConfigurationError(f'{where}: an "enabled" thinking config needs "budget_tokens" (at least '
                                     f"{MIN_THINKING_BUDGET})")
        return thinking_from_budget(budget, f"{where}.budget_tokens")
    if kind == "adaptive":
        config: dict[str, Any] = {"type": "adaptive"}
        if value.get("display") in ("summarized", "omitted"):
            config["display"] = value["display"]
        return config
    raise ConfigurationError(
        f"{where}: thinking type {kind!r} is not one of enabled, adaptive, disabled; "
        'use e.g. {"type": "enabled", "budget_tokens": 4000}'
    )


def thinking_for_request(thinking: Mapping[str, Any] | None, max_tokens: int) -> dict[str, Any] | None:
    """The ``thinking`` field of one request: the budget kept below ``max_tokens``, as the API requires."""
    if thinking is None or not thinking_is_on(thinking):
        return None
    config = dict(thinking)
    budget = config.get("budget_tokens")
    if config.get("type") == "enabled" and isinstance(budget, int) and budget >= max_tokens:
        config["budget_tokens"] = max(MIN_THINKING_BUDGET, max_tokens - 1)
    return config


def thinking_is_on(thinking: Mapping[str, Any] | None) -> bool:
    """Whether a request's thinking config makes the model think (the API then refuses ``temperature``)."""
    return thinking is not None and thinking.get("type") in ("enabled", "adaptive")
