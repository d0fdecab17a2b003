"""The current contract's result keys on the in-process SDK's :class:`ResultMessage` (docs/compat.md, point 6).

catui's stream-json stamps each main-agent result object of the current profile (catui.cli.stream.turn_results);
the SDK's results get the same values from the same numbering, so that ``catui.query`` / ``CatuiClient`` report
what a claude-agent-sdk caller of catui's CLI would read: the turn's own ``num_turns``, ``result_index``,
``subagent_stats``, ``safety_stops``, ``queued_turn_count``, ``model_usage_since_last_result`` and the first
request's timings. The 2.1.92 profile's results are left as they are.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from catui.cli.stream.turn_results import TurnResults

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.sdk.types import ResultMessage
    from catui.session.events import ResultEvent

STAMPED_FIELDS = ("num_turns", "result_index", "safety_stops", "queued_turn_count", "model_usage_since_last_result",
                  "time_to_request_ms", "ttft_stream_ms", "first_content_frame_ms", "ttft_ms")
"""The ResultMessage fields TurnResults sets (each the stream-json result key of the same name); ``subagent_stats``
comes from the sub-agent runtime, as the CLI's does."""


class CurrentResultKeys:
    """Numbers one client's main-agent results and fills in the current contract's keys.

    One per connected app: the numbering and the request count start again with a new connection, as they do
    with a new CLI process.
    """

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self._numbered = TurnResults(app)

    def apply(self, message: ResultMessage, event: ResultEvent) -> ResultMessage:
        """``message`` (the SDK's result for ``event``) with the current keys. Call it once per main-agent
        result, in order, and only in the current profile (the driver makes none for the 2.1.92 profile)."""
        counted: dict[str, Any] = {"num_turns": event.num_turns, "modelUsage": dict(event.model_usage)}
        stamped = self._numbered.stamp(counted, event.request_timings)
        system = self.app.services.subagents
        stats = system.runtime.stats.snapshot() if system is not None else None
        values: dict[str, Any] = {name: stamped.get(name) for name in STAMPED_FIELDS}
        return dataclasses.replace(message, **values, subagent_stats=stats)
