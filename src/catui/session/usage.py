"""Token usage in the Anthropic usage shape, summed per model, with cost in USD."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from catui.models.pricing import cost_usd
from catui.models.resolve import default_max_tokens
from catui.session.context_window import table_context_window

USAGE_COUNTERS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def empty_usage() -> dict[str, Any]:
    """A zero usage record with every field of the Anthropic usage object."""
    return {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
    }


def add_usage(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    """Add one message's usage into a running total (in place)."""
    for key in USAGE_COUNTERS:
        total[key] = int(total.get(key) or 0) + int(usage.get(key) or 0)
    for nested in ("server_tool_use", "cache_creation"):
        src = usage.get(nested)
        if isinstance(src, Mapping):
            dst = total.setdefault(nested, {})
            for k, v in src.items():
                if isinstance(v, int | float):
                    dst[k] = dst.get(k, 0) + v
    if usage.get("service_tier"):
        total["service_tier"] = usage["service_tier"]


def total_tokens(usage: Mapping[str, Any]) -> int:
    """All tokens of a usage record: input, output and both cache counters."""
    return sum(int(usage.get(k) or 0) for k in USAGE_COUNTERS)


@dataclass
class ModelUsage:
    """One model's totals in print mode's ``modelUsage`` shape."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_search_requests: int = 0
    cost_usd: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadInputTokens": self.cache_read_input_tokens,
            "cacheCreationInputTokens": self.cache_creation_input_tokens,
            "webSearchRequests": self.web_search_requests,
            "costUSD": round(self.cost_usd, 6),
        }


@dataclass
class UsageTracker:
    """Per-model usage and cost; one tracker is shared by a session and all its sub-agents."""

    by_model: dict[str, ModelUsage] = field(default_factory=dict)
    listeners: list[Callable[[str, Mapping[str, Any]], None]] = field(default_factory=list)
    """Called with each response's (model, usage) after it is added (the session budget, catui.session.budget)."""

    def add(self, model: str, usage: Mapping[str, Any]) -> None:
        entry = self.by_model.setdefault(model, ModelUsage())
        entry.input_tokens += int(usage.get("input_tokens") or 0)
        entry.output_tokens += int(usage.get("output_tokens") or 0)
        entry.cache_read_input_tokens += int(usage.get("cache_read_input_tokens") or 0)
        entry.cache_creation_input_tokens += int(usage.get("cache_creation_input_tokens") or 0)
        server = usage.get("server_tool_use") or {}
        entry.web_search_requests += int(server.get("web_search_requests") or 0)
        entry.cost_usd += cost_usd(model, usage)
        for listener in self.listeners:
            listener(model, usage)

    @property
    def total_cost_usd(self) -> float:
        return sum(m.cost_usd for m in self.by_model.values())

    def model_usage_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for model, entry in self.by_model.items():
            out[model] = {
                **entry.to_json(),
                "contextWindow": context_window(model),
                "maxOutputTokens": default_max_tokens(model),
            }
        return out


def context_window(model: str) -> int:
    """The context window print mode reports for a model (the table of ``catui.session.context_window``)."""
    return table_context_window(model)
