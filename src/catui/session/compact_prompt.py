"""A ``/compact [instructions]`` prompt in print mode (``catui -c -p "/compact"``) or the SDK
(``client.query("/compact")``): compact the session instead of running a turn.

The run's events are the ``compact_boundary`` system event and a result whose
text says what was summarised; a failure (nothing to compact, a PreCompact hook
refusing, the summary request failing) is an error result with the reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from catui.errors import CatuiError
from catui.session.events import Event, ResultEvent, SystemEvent
from catui.session.transcript import COMPACT_BOUNDARY

if TYPE_CHECKING:
    from catui.session.session import Session

COMPACT_PROMPT = re.compile(r"^\s*/compact(?:\s+(.*))?\s*$", re.DOTALL)


def compact_instructions(prompt: str) -> str | None:
    """The instructions of a ``/compact`` prompt ("" without any), or None when ``prompt`` is something else."""
    found = COMPACT_PROMPT.match(prompt)
    return None if found is None else (found.group(1) or "").strip()


async def compact_events(session: Session, instructions: str) -> AsyncIterator[Event]:
    """Compact ``session`` by hand and yield what a run would: the boundary event, then the result."""
    started = time.monotonic()
    try:
        if not session.messages:
            raise CatuiError("there is nothing to compact: start from a saved session with -c or -r ID")
        outcome = await session.compact(instructions or None)
        yield SystemEvent(subtype=COMPACT_BOUNDARY,
                          data={"compact_metadata": {"trigger": "manual", "pre_tokens": outcome.pre_tokens}})
        subtype, is_error = "success", False
        text = (f"Compacted: {outcome.summarised} earlier messages summarised, {outcome.kept} kept "
                f"({outcome.pre_tokens} → {outcome.post_tokens} tokens).")
    except CatuiError as exc:
        subtype, is_error, text = "error_during_execution", True, str(exc)
    tracker = session.config.usage_tracker
    yield ResultEvent(subtype=subtype, is_error=is_error, result=text, session_id=session.session_id, num_turns=0,
                      duration_ms=int((time.monotonic() - started) * 1000), duration_api_ms=0,
                      usage=dict(session.usage), model_usage=tracker.model_usage_json(),
                      total_cost_usd=round(tracker.total_cost_usd, 6))
