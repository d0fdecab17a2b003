"""``--input-format stream-json``: reading the driver's JSON lines from stdin and telling them apart.

Each stdin line is one JSON object: a user message
(``{"type": "user", "message": {"role": "user", "content": ...}}``, the
content a string or a list of content blocks), or a control-protocol line
(see :mod:`catui.cli.stream.control_channel`). A line that is not such an object is
reported on stderr with its line number and skipped; the session goes on.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from catui.config.json_input import JsonInputError, loads_bounded
from catui.prompt_blocks import PromptBlockError, check_prompt_blocks

# A prompt may carry images as base64; the default 64 KiB line limit of asyncio streams is far too small.
MAX_LINE_BYTES = 256 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024

USER_LINE_EXAMPLE = '{"type": "user", "message": {"role": "user", "content": "your prompt"}}'


class StreamInputError(ValueError):
    """One stdin line that is not a message catui understands; the text names the line and the fix."""


@dataclass(frozen=True)
class UserInput:
    """A prompt from the driver: ``content`` is a string or a list of content blocks."""

    content: str | list[dict[str, Any]]
    line: int
    origin: dict[str, Any] | None = None
    """The line's ``origin`` (``{"kind": "human"}`` …), echoed on the turn's result as Claude Code does."""
    refused: str | None = None
    """Why the line cannot be a prompt (the session answers it with an error result instead of a turn)."""

    def is_command(self, name: str) -> bool:
        """Whether the prompt is exactly the slash command ``/name`` (as text, with or without blanks)."""
        content = self.content
        if isinstance(content, list):
            if len(content) != 1 or content[0].get("type") != "text":
                return False
            content = str(content[0].get("text", ""))
        return content.strip() == f"/{name}"


def user_input_from(message: dict[str, Any], line: int) -> UserInput:
    """The prompt of a ``{"type": "user"}`` line. Raises StreamInputError when its shape is wrong."""
    body = message.get("message")
    if not isinstance(body, dict):
        raise StreamInputError(f"stdin line {line}: a user line needs a 'message' object, like {USER_LINE_EXAMPLE}")
    content = body.get("content")
    if isinstance(content, str):
        if not content.strip():
            raise StreamInputError(f"stdin line {line}: the user message's content is empty; send some text")
        return UserInput(content, line, _origin(message))
    if isinstance(content, list) and content:
        try:
            check_prompt_blocks(content)
        except PromptBlockError as exc:
            raise StreamInputError(f"stdin line {line}: {exc}; the prompt was not sent") from None
        return UserInput(list(content), line, _origin(message))
    raise StreamInputError(
        f"stdin line {line}: message.content must be a string or a non-empty list of content blocks "
        f"({{\"type\": \"text\", \"text\": ...}}), not {_preview(content)}"
    )


def _origin(message: dict[str, Any]) -> dict[str, Any] | None:
    origin = message.get("origin")
    return dict(origin) if isinstance(origin, dict) else None


def _preview(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=True)[:60]
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def parse_line(raw: bytes, line: int) -> dict[str, Any] | None:
    """One stdin line as a JSON object; None for a blank line. Raises StreamInputError for anything else."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        data = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise StreamInputError(
            f"stdin line {line} is not JSON ({exc.msg} at column {exc.colno}); with --input-format stream-json "
            f"each line must be one JSON object, like {USER_LINE_EXAMPLE}"
        ) from None
    except JsonInputError as exc:
        raise StreamInputError(f"stdin line {line} {exc}; the line is skipped") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise StreamInputError(f"stdin line {line} is not a message object with a 'type'; send {USER_LINE_EXAMPLE}")
    return data


class LineSplitter:
    """Cuts a byte stream into lines of at most ``limit`` bytes (newline not counted); a longer line comes out
    as None (skipped whole).

    The over-long line's bytes are dropped as they arrive (never held), up to its newline; the next line is
    read normally, so one bad line costs that line only.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        lines: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if self._discarding:
                self._discarding = False
            elif len(self._buffer) + end - start > self.limit:
                self._buffer.clear()
                lines.append(None)
            else:
                self._buffer += chunk[start:end + 1]
                lines.append(bytes(self._buffer))
                self._buffer.clear()
            start = end + 1
        rest = chunk[start:]
        if not self._discarding and rest:
            if len(self._buffer) + len(rest) > self.limit:
                self._buffer.clear()
                self._discarding = True
                lines.append(None)
            else:
                self._buffer += rest
        return lines

    def finish(self) -> list[bytes | None]:
        """The last line when the stream ends without a newline."""
        if self._buffer:
            last = bytes(self._buffer)
            self._buffer.clear()
            return [last]
        return []


async def stdin_lines(stream: BinaryIO | None = None, *, limit: int = MAX_LINE_BYTES
                      ) -> AsyncIterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line of ``stream`` (stdin), read without blocking the event loop.

    A line longer than ``limit`` bytes comes as (number, None): it was skipped without being held in memory.
    """
    loop = asyncio.get_running_loop()
    source = stream or sys.stdin.buffer
    splitter = LineSplitter(limit)
    reader = asyncio.StreamReader(limit=CHUNK_BYTES)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport: asyncio.BaseTransport | None
    try:
        transport, _ = await loop.connect_read_pipe(lambda: protocol, source)
    except ValueError:  # a regular file (`catui ... < lines.jsonl`) is no pipe: read it in a thread
        transport = None
    number = 0
    try:
        while True:
            if transport is not None:
                chunk = await reader.read(CHUNK_BYTES)
            else:
                chunk = await loop.run_in_executor(None, source.read, CHUNK_BYTES)
            lines = splitter.feed(chunk) if chunk else splitter.finish()
            for raw in lines:
                number += 1
                yield number, raw
            if not chunk:
                return
    finally:
        if transport is not None:
            transport.close()


async def read_messages(on_message: Callable[[dict[str, Any], int], None], warn: Callable[[str], None],
                        stream: BinaryIO | None = None) -> None:
    """Parse stdin until it closes, handing each message object to ``on_message``; bad lines go to ``warn``.

    Every line is handled on its own: a line that is too long, too deep, not JSON, or that a handler fails
    on is reported with its number and the lines after it are read as usual.
    """
    async for number, raw in stdin_lines(stream):
        if raw is None:
            warn(f"stdin line {number} is longer than {MAX_LINE_BYTES} bytes; it is skipped (send large files "
                 "by path, not inline)")
            continue
        try:
            message = parse_line(raw, number)
            if message is not None:
                on_message(message, number)
        except StreamInputError as exc:
            warn(str(exc))
        except Exception as exc:  # a bug handling one line must not silently end the input
            warn(f"stdin line {number} could not be handled ({type(exc).__name__}: {exc}); it is skipped")
