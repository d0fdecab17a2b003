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
        """Decode a byte stream. An event cut off before its blank line is dropped, as the standard says."""
        buffer = b""
        pending_cr = False
        async for chunk in chunks:
            if pending_cr and chunk.startswith(b"\n"):
                # The CR of a CRLF ended the previous chunk; its LF is not a second line end.
                chunk = chunk[1:]
            pending_cr = False
            buffer += chunk
            lines = buffer.splitlines(keepends=True)
            buffer = b""
            if lines and not lines[-1].endswith((b"\n", b"\r")):
                buffer = lines.pop()
            if lines and lines[-1].endswith(b"\r"):
                pending_cr = True
            for raw in lines:
                sse = self.feed_line(raw.rstrip(b"\r\n").decode("utf-8"))
                if sse is not None:
                    yield sse
