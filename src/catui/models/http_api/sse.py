"""A Server-Sent Events decoder for streamed HTTP bodies.

It follows the HTML living standard's event-stream interpretation (as the
official SDKs' decoders do): ``event:``/``data:``/``id:``/``retry:`` fields,
comment lines, multi-line data joined with newlines, and CR, LF or CRLF line
ends, whatever way the bytes are split across network reads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line a stream may send (Messages API events are a few KB); a longer one is a broken stream."""


class SSEStreamError(ValueError):
    """A byte stream that is not an event stream (a line over :data:`MAX_LINE_BYTES`)."""


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event; ``event`` is None when the stream gave no ``event:`` field."""

    event: str | None
    data: str
    id: str | None = None
    retry: int | None = None

    def json(self) -> Any:
        return json.loads(self.data)


class SSEDecoder:
    """Turns lines into events; feed it with :meth:`aiter_events` or line by line with :meth:`feed_line`."""

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._dirty = False

    def feed_line(self, line: str) -> ServerSentEvent | None:
        """Process one line (without its line end); returns an event when a blank line dispatches one."""
        if not line:
            if not self._dirty:
                return None
            sse = ServerSentEvent(self._event or None, "\n".join(self._data), self._id, self._retry)
            self._event, self._data, self._retry, self._dirty = None, [], None, False
            return sse
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            try:
                self._retry = int(value)
            except ValueError:
                return None
        else:
            return None
        self._dirty = True
        return None

    async def aiter_events(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        """Decode a byte stream. An event cut off before its blank line is dropped, as the standard says.

        Bytes that are not UTF-8 decode to U+FFFD (the standard's rule), so garbage in the body yields
        events a provider can refuse as such, never a decoding crash. A line over :data:`MAX_LINE_BYTES`
        raises SSEStreamError.
        """
        partial: list[bytes] = []  # the current line's pieces so far (no line end among them)
        partial_bytes = 0
        pending_cr = False
        async for chunk in chunks:
            if pending_cr and chunk.startswith(b"\n"):
                # The CR of a CRLF ended the previous chunk; its LF is not a second line end.
                chunk = chunk[1:]
            pending_cr = False
            if b"\n" not in chunk and b"\r" not in chunk:
                partial.append(chunk)  # still inside one line: kept as pieces, joined once (linear)
                partial_bytes += len(chunk)
                if partial_bytes > MAX_LINE_BYTES:
                    raise SSEStreamError(f"a line of the event stream is over {MAX_LINE_BYTES} bytes")
                continue
            lines = b"".join([*partial, chunk]).splitlines(keepends=True)
            partial, partial_bytes = [], 0
            if lines and not lines[-1].endswith((b"\n", b"\r")):
                rest = lines.pop()
                partial, partial_bytes = [rest], len(rest)
                if partial_bytes > MAX_LINE_BYTES:
                    raise SSEStreamError(f"a line of the event stream is over {MAX_LINE_BYTES} bytes")
            if lines and lines[-1].endswith(b"\r"):
                pending_cr = True
            for raw in lines:
                sse = self.feed_line(raw.rstrip(b"\r\n").decode("utf-8", "replace"))
                if sse is not None:
                    yield sse
