"""The current contract's keys of a turn's result object (observed-cc-now.md §9; catui.config.compat).

Claude Code 2.1.332 writes one ``result`` per turn of the main conversation and numbers them
(``result_index`` 0, 1, …); a turn a background task's notification started carries ``origin``
(``{"kind": "task-notification", "producer": "session-task", "runId"}``). Each result also has
``subagent_stats``, ``safety_stops``, ``api_error_status`` (null when no API call failed),
``queued_turn_count``, ``model_usage_since_last_result`` (the ``modelUsage`` counted since the previous
result) and the timings of the turn's first request (``time_to_request_ms``, ``ttft_stream_ms``,
``first_content_frame_ms``, ``ttft_ms``: catui.session.request_timing); its ``num_turns`` counts the turn's own
model requests (the session's count goes on across turns). The 2.1.92 profile's result objects
stay as recorded: :class:`TurnResults` leaves them alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catui.tasks.notifications import notification_turn_origin as turn_origin

if TYPE_CHECKING:
    from catui.app.services import AgentApp


def notification_turn_origin(app: AgentApp) -> dict[str, Any]:
    """The ``origin`` of a turn a background task's notification started (catui.tasks.notifications)."""
    tasks = app.tasks
    last = tasks.notifications.last_started_turn if tasks is not None else None
    return turn_origin(last, current=app.compat.current)


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


class TurnResults:
    """Numbers the main agent's result objects of one run and adds the current contract's keys to them."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.written = 0
        self._usage_before: Mapping[str, Any] = {}
        self._turns_before = 0

    def stamp(self, obj: dict[str, Any], timings: Mapping[str, int] | None = None) -> dict[str, Any]:
        """``obj`` (a main-agent result object, ``subagent_stats`` already in) with the current keys before its
        ``uuid``; unchanged in the 2.1.92 profile. ``timings``: the run's ``ResultEvent.request_timings``.
        Call it once per result, in order."""
        index = self.written
        self.written += 1
        found = obj.get("modelUsage")
        usage: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        since = usage_since(usage, self._usage_before)
        self._usage_before = dict(usage)
        turns = obj.get("num_turns")
        turns_before = self._turns_before
        # A count below the session's running one is not the session's (a /compact result says 0): it is the
        # result's own, and the next turn still counts from the session's last.
        session_count = turns if isinstance(turns, int) and turns >= turns_before else None
        if session_count is not None:
            self._turns_before = session_count
        if not self.app.compat.current:
            return obj
        rest = {k: v for k, v in obj.items() if k != "uuid"}
        if session_count is not None:  # 2.1.332 counts the turn's own requests (a notification turn's: 1)
            rest["num_turns"] = session_count - turns_before
        rest.setdefault("api_error_status", None)
        return {**rest, "safety_stops": 0, "queued_turn_count": 0, "result_index": index,
                "model_usage_since_last_result": since, **(timings or {}), "uuid": obj.get("uuid")}
