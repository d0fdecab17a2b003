"""An Anthropic loopback server that counts the requests it is answering at once.

``InFlightServer(script, marker=...)`` counts only requests whose first user
message contains ``marker`` (the children of a fan-out, not their parent).
With ``hold_until=N`` each such request waits, before it is answered, until N
of them are in flight at once (or ``hold_timeout_s`` passes): the widest
window the client allows is then reached whatever the machine's speed, so a
test can assert the width exactly instead of hoping for an overlap.
A request stops counting just before the first byte of its answer's body
leaves (after the script's ``delay_ms``): the client cannot have finished
with it, and started another in its place, while it still counts.
``release()`` ends every hold at once (a test that holds requests on purpose
while it looks at the client, with ``hold_until`` above what the client allows).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from catui.models.replay.scripted import RequestView
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.loopback import Fault, RecordedRequest


class InFlightServer(AnthropicTestServer):
    """Messages API that records ``max_in_flight`` for requests whose first user text holds ``marker``."""

    def __init__(
        self, script: Any, *, marker: str, hold_until: int | None = None, hold_timeout_s: float = 5.0,
        **options: Any,
    ) -> None:
        super().__init__(script, **options)
        self.marker = marker
        self.hold_until = hold_until
        self.hold_timeout_s = hold_timeout_s
        self.in_flight = 0
        self.max_in_flight = 0
        self._changed = threading.Condition()
        self._released = False
        self._counting = threading.local()

    def release(self) -> None:
        """Answer every held request now, and hold no more."""
        with self._changed:
            self._released = True
            self._changed.notify_all()

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if self.marker not in RequestView.from_anthropic(body).first_user_text:
            super().handle_post(handler, request, fault)
            return
        self._counting.active = True
        with self._changed:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._changed.notify_all()
            if self.hold_until is not None:
                self._changed.wait_for(lambda: self._released or self.max_in_flight >= (self.hold_until or 0),
                                       self.hold_timeout_s)
        try:
            super().handle_post(handler, request, fault)
        finally:
            self._stop_counting()

    def _record(self, raw: bytearray) -> None:
        self._stop_counting()  # called once the answer is ready, before its body is sent
        super()._record(raw)

    def _stop_counting(self) -> None:
        if getattr(self._counting, "active", False):
            self._counting.active = False
            with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()
