"""The control protocol's plumbing: requests catui sends to the program driving it, and answers to its requests.

With ``--input-format stream-json`` catui and its driver (claude-agent-sdk,
or anything speaking Claude Code's protocol) exchange, besides the
conversation's messages, JSON lines of these shapes::

    {"type": "control_request", "request_id": "...", "request": {"subtype": "...", ...}}
    {"type": "control_response", "response": {"subtype": "success", "request_id": "...", "response": {...}}}
    {"type": "control_response", "response": {"subtype": "error", "request_id": "...", "error": "..."}}
    {"type": "control_cancel_request", "request_id": "..."}

Either side may send requests. :class:`ControlChannel` numbers catui's own
(``can_use_tool``, ``hook_callback``, ``mcp_message``), waits for their
answers, withdraws those nobody needs any more, and writes catui's answers
to the driver's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

from catui.errors import CatuiError


class ControlRequestFailed(CatuiError):
    """The driver answered a control request with an error, or can no longer answer (its input closed)."""


class ControlChannel:
    """Requests to the driver and answers from it, over one JSON-lines output (``write_line``)."""

    def __init__(self, write_line: Callable[[dict[str, Any]], None]) -> None:
        self._write_line = write_line
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed_reason: str | None = None

    async def request(self, request: dict[str, Any], *, abort: asyncio.Event | None = None) -> dict[str, Any]:
        """Send ``request`` (``{"subtype": ..., ...}``) and return the driver's ``response`` object.

        Raises ControlRequestFailed for an error answer or a closed channel. If
        ``abort`` is set first (the run was interrupted), the request is
        withdrawn with a ``control_cancel_request`` and CancelledError is raised.
        """
        if self._closed_reason is not None:
            raise ControlRequestFailed(f"cannot ask the driver for {request.get('subtype')}: {self._closed_reason}")
        request_id = f"catui_req_{next(self._ids)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        self._write_line({"type": "control_request", "request_id": request_id, "request": request})
        try:
            if abort is None:
                return await answer
            aborted: asyncio.Future[Any] = asyncio.ensure_future(abort.wait())
            try:
                waiting: set[asyncio.Future[Any]] = {answer, aborted}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            finally:
                aborted.cancel()
            if not answer.done():
                raise asyncio.CancelledError
            return answer.result()
        except asyncio.CancelledError:
            if not answer.done():
                self._write_line({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
            if not answer.done():
                answer.cancel()

    def deliver(self, message: dict[str, Any]) -> None:
        """Take a ``control_response`` line from the driver; an answer to nothing pending is ignored."""
        response = message.get("response")
        if not isinstance(response, dict):
            return
        answer = self._pending.get(str(response.get("request_id")))
        if answer is None or answer.done():
            return
        if response.get("subtype") == "error":
            answer.set_exception(ControlRequestFailed(str(response.get("error") or "the driver answered with an error")))
        else:
            body = response.get("response")
            answer.set_result(body if isinstance(body, dict) else {})

    def close(self, reason: str) -> None:
        """No more answers will come (the driver closed catui's input): fail every request still waiting."""
        self._closed_reason = reason
        for answer in list(self._pending.values()):
            if not answer.done():
                answer.set_exception(ControlRequestFailed(f"no answer from the driver: {reason}"))
                with contextlib.suppress(BaseException):
                    answer.exception()  # retrieved: a request nobody awaits any more is not an unhandled error

    def respond(self, request_id: str, response: dict[str, Any] | None = None) -> None:
        """Answer the driver's request ``request_id`` with success."""
        self._write_line({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": response or {}}})

    def respond_error(self, request_id: Any, error: str) -> None:
        """Answer the driver's request ``request_id`` with an error message, on one line and of bounded length
        (an error naming a huge value the driver sent does not send it back whole)."""
        self._write_line({"type": "control_response", "response": {
            "subtype": "error", "request_id": request_id, "error": one_line_error(error)}})


MAX_ERROR_CHARS = 1000
"""The longest error text catui answers a control request with; longer ones are cut, saying by how much."""


def one_line_error(error: str) -> str:
    """``error`` on one line, cut to :data:`MAX_ERROR_CHARS` characters."""
    line = " ".join(error.splitlines()) if "\n" in error or "\r" in error else error
    if len(line) <= MAX_ERROR_CHARS:
        return line
    return f"{line[:MAX_ERROR_CHARS]}… ({len(line) - MAX_ERROR_CHARS} more characters)"
