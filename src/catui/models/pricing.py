"""What model usage costs, in US dollars.

Prices are Anthropic's public list prices per million tokens as of
2025-11-24 (the Claude Opus 4.5 launch; unchanged for Opus/Sonnet 4.6):

| family                         | input | output |
|--------------------------------|-------|--------|
| Opus 4.5, 4.6 (and later 4.x)  | 5     | 25     |
| Opus 4, 4.1, Claude 3 Opus     | 15    | 75     |
| Sonnet 3.5 – 4.6               | 3     | 15     |
| Haiku 4.5                      | 1     | 5      |
| Haiku 3.5                      | 0.80  | 4      |
| Haiku 3                        | 0.25  | 1.25   |

Cache writes cost 1.25x the input price for the 5-minute cache and 2x for
the 1-hour cache; cache reads cost 0.1x. Web searches cost $10 per 1,000.
Models not in the table (OpenAI models, the scripted provider) cost 0:
catui does not guess. Long-context (over 200k input tokens) surcharges are
not applied.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PRICES_AS_OF = "2025-11-24"
WEB_SEARCH_USD = 0.01


@dataclass(frozen=True)
class ModelPrice:
    """US dollars per million tokens."""

    input: float
    output: float

    @property
    def cache_write_5m(self) -> float:
        return self.input * 1.25

    @property
    def cache_write_1h(self) -> float:
        return self.input * 2.0

    @property
    def cache_read(self) -> float:
        return self.input * 0.1


# claude-opus-4-6, claude-sonnet-4-5-20250929, claude-haiku-4-5, claude-opus-4-20250514
# (an 8-digit date is not a minor version)
_NEW_NAMING = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")
# claude-3-5-sonnet-20241022, claude-3-7-sonnet-latest, claude-3-haiku-20240307
_OLD_NAMING = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")


def _family_version(model_id: str) -> tuple[str, float] | None:
    name = model_id.lower()
    match = _NEW_NAMING.search(name)
    if match:
        return match.group(1), float(f"{match.group(2)}.{match.group(3) or 0}")
    match = _OLD_NAMING.search(name)
    if match:
        return match.group(3), float(f"{match.group(1)}.{match.group(2) or 0}")
    return None


@functools.lru_cache(maxsize=256)
def price_for(model_id: str) -> ModelPrice | None:
    """The price of a Claude model id (any provider prefix or region qualifier), or None if unknown.

    Cached: every model response of every agent is priced (usage totals, limits, the session budget),
    and a session uses a handful of model ids.
    """
    found = _family_version(model_id)
    if found is None:
        return None
    family, version = found
    if family == "opus":
        return ModelPrice(5.0, 25.0) if version >= 4.5 else ModelPrice(15.0, 75.0)
    if family == "sonnet":
        return ModelPrice(3.0, 15.0)
    if version >= 4.5:
        return ModelPrice(1.0, 5.0)
    if version >= 3.5:
        return ModelPrice(0.8, 4.0)
    return ModelPrice(0.25, 1.25)


def _tokens(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return int(value) if isinstance(value, (int, float)) else 0


def cost_usd(model_id: str, usage: Mapping[str, Any]) -> float:
    """The cost of one response's usage (Anthropic usage shape); 0.0 for models without a known price."""
    price = price_for(model_id)
    if price is None:
        return 0.0
    cache_creation = usage.get("cache_creation")
    if isinstance(cache_creation, Mapping) and cache_creation:
        write_5m = _tokens(cache_creation, "ephemeral_5m_input_tokens")
        write_1h = _tokens(cache_creation, "ephemeral_1h_input_tokens")
    else:
        write_5m, write_1h = _tokens(usage, "cache_creation_input_tokens"), 0
    server_tools = usage.get("server_tool_use")
    searches = _tokens(server_tools, "web_search_requests") if isinstance(server_tools, Mapping) else 0
    per_million = (
        _tokens(usage, "input_tokens") * price.input
        + _tokens(usage, "output_tokens") * price.output
        + _tokens(usage, "cache_read_input_tokens") * price.cache_read
        + write_5m * price.cache_write_5m
        + write_1h * price.cache_write_1h
    )
    return per_million / 1_000_000 + searches * WEB_SEARCH_USD
