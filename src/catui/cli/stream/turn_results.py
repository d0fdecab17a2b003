"""The current contract's keys of a turn's result object (observed-cc-now.md §9; catui.config.compat).

Claude Code 2.1.332 writes one ``result`` per turn of the main conversation and numbers them
(``result_index`` 0, 1, …); a turn a background task's notification started carries ``origin``
(``{"kind": "task-notification", "producer": "session-task", "runId"}``). Each result also has
``subagent_stats``, ``safety_stops``, ``api_error_status`` (null when no API call failed),
``queued_turn_count``, ``model_usage_since_last_result`` (the ``modelUsage`` counted since the previous
result) and the timings of the turn's first request (``time_to_request_ms``, ``ttft_stream_ms``,
``first_content_frame_ms``, ``ttft_ms``: catui.session.request_timing); its ``num_turns`` counts the turn's own
model requests (the session's count goes on across turns); catui.session.result_numbering works the figures
out, for the in-process SDK too. The 2.1.92 profile's result objects stay as recorded: :class:`TurnResults`
leaves them alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catui.session.result_numbering import ResultNumbering
from catui.tasks.notifications import notification_turn_origin as turn_origin

if TYPE_CHECKING:
    from catui.app.services import AgentApp


def notification_turn_origin(app: AgentApp) -> dict[str, Any]:
    """The ``origin`` of a turn a background task's notification started (catui.tasks.notifications)."""
    tasks = app.tasks
    last = tasks.notifications.last_started_turn if tasks is not None else None
    return turn_origin(last, current=app.compat.current)


class TurnResults:
    """Numbers the main agent's result objects of one run and adds the current contract's keys to them."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.numbering = ResultNumbering()

    @property
    def written(self) -> int:
        """How many results were stamped."""
        return self.numbering.written

    def stamp(self, obj: dict[str, Any], timings: Mapping[str, int] | None = None) -> dict[str, Any]:
        """``obj`` (a main-agent result object, ``subagent_stats`` already in) with the current keys before its
        ``uuid``; unchanged in the 2.1.92 profile. ``timings``: the run's ``ResultEvent.request_timings``.
        Call it once per result, in order."""
        figures = self.numbering.next(obj.get("num_turns"), obj.get("modelUsage"), timings)
        if not self.app.compat.current:
            return obj
        rest = {k: v for k, v in obj.items() if k != "uuid"}
        if "num_turns" in figures:  # 2.1.332 counts the turn's own requests (a notification turn's: 1)
            rest["num_turns"] = figures.pop("num_turns")
        rest.setdefault("api_error_status", None)
        return {**rest, **figures, "uuid": obj.get("uuid")}
