"""The current contract's result keys on the in-process SDK's :class:`ResultMessage` (docs/compat.md, point 6).

catui's stream-json stamps each main-agent result object of the current profile (catui.cli.stream.turn_results);
the SDK's results get the same values from the same numbering (catui.session.result_numbering), so that
``catui.query`` / ``CatuiClient`` report what a claude-agent-sdk caller of catui's CLI would read: the turn's own
``num_turns``, ``result_index``, ``subagent_stats``, ``safety_stops``, ``queued_turn_count``,
``model_usage_since_last_result`` and the first request's timings. The 2.1.92 profile's results are left as they
are (the driver makes no :class:`CurrentResultKeys` for it).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from catui.session.result_numbering import ResultNumbering

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.sdk.types import ResultMessage
    from catui.session.events import ResultEvent


class CurrentResultKeys:
    """Numbers one client's main-agent results and fills in the current contract's keys.

    One per connected app: the numbering and the request count start again with a new connection, as they do
    with a new CLI process.
    """

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self._numbering = ResultNumbering()

    def apply(self, message: ResultMessage, event: ResultEvent) -> ResultMessage:
        """``message`` (the SDK's result for ``event``) with the current keys. Call it once per main-agent
        result, in order."""
        figures: dict[str, Any] = self._numbering.next(event.num_turns, event.model_usage, event.request_timings)
        system = self.app.services.subagents
        figures["subagent_stats"] = system.runtime.stats.snapshot() if system is not None else None
        # Each figure is the ResultMessage field of the same name (the timing keys only when the turn sent one).
        return dataclasses.replace(message, **figures)
