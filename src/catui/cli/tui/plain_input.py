"""Reading lines from a stdin that is not a terminal (piped input), without blocking the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TextIO


class PlainLineReader:
    """Lines of a non-terminal stdin, each read on a thread; a read abandoned by its caller is kept."""

    def __init__(self, stdin: TextIO) -> None:
        self.stdin = stdin
        self._pending: asyncio.Future[str | None] | None = None

    async def read(self) -> str | None:
        """The next line (without its newline); None at end of input."""
        if self._pending is None:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[str | None] = loop.create_future()

            def read() -> None:
                try:
                    line = self.stdin.readline()
                except (OSError, ValueError):
                    line = ""
                value = line.rstrip("\n") if line else None

                def deliver() -> None:
                    if not future.done():
                        future.set_result(value)

                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver)

            threading.Thread(target=read, name="catui-stdin", daemon=True).start()
            self._pending = future
        # A read abandoned by a cancelled caller (a notification won the race) keeps its line for the next
        # caller: the future is forgotten only once its line has been handed out.
        value = await asyncio.shield(self._pending)
        self._pending = None
        return value

    def end(self) -> None:
        """Answer a read under way with end of input (the session is exiting)."""
        if self._pending is not None and not self._pending.done():
            self._pending.set_result(None)
