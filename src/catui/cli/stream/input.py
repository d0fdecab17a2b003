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

# A prompt may carry images as base64; the default 64 KiB line limit of asyncio streams is far too small.
MAX_LINE_BYTES = 256 * 1024 * 1024

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
    if isinstance(content, list) and content and all(isinstance(b, dict) and "type" in b for b in content):
        return UserInput(list(content), line, _origin(message))
    raise StreamInputError(
        f"stdin line {line}: message.content must be a string or a non-empty list of content blocks "
        f"({{\"type\": \"text\", \"text\": ...}}), not {json.dumps(content)[:60]}"
    )


def _origin(message: dict[str, Any]) -> dict[str, Any] | None:
    origin = message.get("origin")
    return dict(origin) if isinstance(origin, dict) else None


def parse_line(raw: bytes, line: int) -> dict[str, Any] | None:
    """One stdin line as a JSON object; None for a blank line. Raises StreamInputError for anything else."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StreamInputError(
            f"stdin line {line} is not JSON ({exc.msg} at column {exc.colno}); with --input-format stream-json "
            f"each line must be one JSON object, like {USER_LINE_EXAMPLE}"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise StreamInputError(f"stdin line {line} is not a message object with a 'type'; send {USER_LINE_EXAMPLE}")
    return data


async def stdin_lines(stream: BinaryIO | None = None) -> AsyncIterator[tuple[int, bytes]]:
    """(line number, bytes) of each line of ``stream`` (stdin), read without blocking the event loop."""
    loop = asyncio.get_running_loop()
    source = stream or sys.stdin.buffer
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    protocol = asyncio.StreamReaderProtocol(reader)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: protocol, source)
    except ValueError:  # a regular file (`catui ... < lines.jsonl`) is no pipe: read it in a thread
        number = 0
        while raw := await loop.run_in_executor(None, source.readline):
            number += 1
            yield number, raw
        return
    number = 0
    try:
        while True:
            raw = await reader.readline()
            if not raw:
                return
            number += 1
            yield number, raw
    finally:
        transport.close()


async def read_messages(on_message: Callable[[dict[str, Any], int], None], warn: Callable[[str], None],
                        stream: BinaryIO | None = None) -> None:
    """Parse stdin until it closes, handing each message object to ``on_message``; bad lines go to ``warn``."""
    async for number, raw in stdin_lines(stream):
        try:
            message = parse_line(raw, number)
        except StreamInputError as exc:
            warn(str(exc))
            continue
        if message is not None:
            on_message(message, number)
