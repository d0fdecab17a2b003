"""When a run's first model request went out and when its answer's first frames came back.

Claude Code 2.1.332's result objects carry four timings of the turn's first request, in milliseconds from the
turn's start (observed with a server that paused before each frame, observed-cc-now.md §9):
``time_to_request_ms`` (the request sent), ``ttft_stream_ms`` (the stream's first event, ``message_start``),
``first_content_frame_ms`` (the first ``content_block_start``) and ``ttft_ms`` (the first
``content_block_delta``: the first token, text, thinking or tool input alike). :class:`FirstFrames` notes one
request's frames as they stream (the loop also tells telemetry of the first event through it);
:class:`RunTimings` keeps the run's first request and reports the keys.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any


class FirstFrames:
    """One request's moments (monotonic seconds): sent, first event, first content block, first delta."""

    def __init__(self) -> None:
        self.sent = time.monotonic()
        self.first_event: float | None = None
        self.first_content: float | None = None
        self.first_delta: float | None = None

    def feed(self, event: Mapping[str, Any]) -> bool:
        """Note ``event``'s arrival; True when it is the stream's first event."""
        now = time.monotonic()
        first = self.first_event is None
        if first:
            self.first_event = now
        kind = event.get("type")
        if kind == "content_block_start" and self.first_content is None:
            self.first_content = now
        elif kind == "content_block_delta" and self.first_delta is None:
            self.first_delta = now
        return first


class RunTimings:
    """The current run's first request: :meth:`start_run` at the run's start, :meth:`request` per request."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.first: FirstFrames | None = None

    def start_run(self, started: float) -> None:
        """A run starting at ``started`` (monotonic seconds): its first request is still to come."""
        self.started, self.first = started, None

    def request(self) -> FirstFrames:
        """A request being sent now; the run's first is kept for :meth:`keys`."""
        frames = FirstFrames()
        if self.first is None:
            self.first = frames
        return frames

    def keys(self) -> dict[str, int]:
        """The result object's timing keys, those the first request reached (none before a request went out)."""
        frames = self.first
        if frames is None:
            return {}
        moments = {"time_to_request_ms": frames.sent, "ttft_stream_ms": frames.first_event,
                   "first_content_frame_ms": frames.first_content, "ttft_ms": frames.first_delta}
        return {key: max(0, int((at - self.started) * 1000)) for key, at in moments.items() if at is not None}
