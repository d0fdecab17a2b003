"""The current contract's per-turn figures of the main agent's results (observed-cc-now.md §9; catui.config.compat).

Claude Code 2.1.332 numbers the results of a session (``result_index`` 0, 1, …), counts in each only its own
turn's model requests (``num_turns``: a notification turn answered at once says 1), reports the ``modelUsage``
counted since the previous result (``model_usage_since_last_result``), ``safety_stops`` and
``queued_turn_count`` (0) and the timings of the turn's first request (catui.session.request_timing). Both front
ends number their results with :class:`ResultNumbering`: stream-json and ``--output-format json``
(catui.cli.stream.turn_results) and the in-process SDK (catui.sdk._internal.result_keys), so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def usage_since(now: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    """Per model, what ``now`` (a ``modelUsage`` object) counted beyond ``before``; models with nothing new left
    out. Counters are subtracted; other values (``contextWindow``, ``maxOutputTokens``) are kept as they are."""
    out: dict[str, Any] = {}
    for model, entry in now.items():
        if not isinstance(entry, Mapping):
            continue
        earlier = before.get(model) if isinstance(before.get(model), Mapping) else {}
        changed = False
        delta: dict[str, Any] = {}
        for key, value in entry.items():
            previous = earlier.get(key) if isinstance(earlier, Mapping) else None
            if key in _KEPT or isinstance(value, bool) or not isinstance(value, (int, float)):
                delta[key] = value
                continue
            difference = value - (previous if isinstance(previous, (int, float)) else 0)
            if isinstance(value, float):
                difference = round(difference, 6)
            changed = changed or difference != 0
            delta[key] = difference
        if changed:
            out[model] = delta
    return out


_KEPT = frozenset({"contextWindow", "maxOutputTokens"})


class ResultNumbering:
    """Numbers the main agent's results of one session run, in order, and works out each one's per-turn figures."""

    def __init__(self) -> None:
        self.written = 0
        self._usage_before: Mapping[str, Any] = {}
        self._turns_before = 0

    def next(self, num_turns: Any, model_usage: Any, timings: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The figures of the next result, given its session-wide ``num_turns`` and ``modelUsage`` and its
        ``ResultEvent.request_timings``: ``num_turns`` (the turn's own; absent when ``num_turns`` is not a count),
        ``safety_stops``, ``queued_turn_count``, ``result_index``, ``model_usage_since_last_result`` and the
        timing keys the turn's first request reached. Call it once per result."""
        index = self.written
        self.written += 1
        usage: Mapping[str, Any] = model_usage if isinstance(model_usage, Mapping) else {}
        since = usage_since(usage, self._usage_before)
        self._usage_before = dict(usage)
        figures: dict[str, Any] = {}
        # A count below the session's running one is not the session's (a /compact result says 0): it is the
        # result's own, and the next turn still counts from the session's last.
        if isinstance(num_turns, int) and not isinstance(num_turns, bool):
            if num_turns >= self._turns_before:
                figures["num_turns"] = num_turns - self._turns_before
                self._turns_before = num_turns
            else:
                figures["num_turns"] = num_turns
        return {**figures, "safety_stops": 0, "queued_turn_count": 0, "result_index": index,
                "model_usage_since_last_result": since, **(timings or {})}
