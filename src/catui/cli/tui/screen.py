"""The output side of the terminal: permanent lines above, a redrawable live region below.

On a terminal, running tool calls and sub-agent progress lines live in a
small region at the bottom that is erased and redrawn as they change (the
job ``rich.live.Live`` does, done here in a few ANSI sequences so that it
cooperates with catui's own line editor and permission prompt). Anything
permanent is printed above it. On a pipe or file there is no live region:
callers print milestones instead, as plain text without escape codes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import TextIO

from catui.cli.tui.format import fit, wrap_cells

RESET = "\x1b[0m"
STYLES = {
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "magenta": "\x1b[35m",
    "cyan": "\x1b[36m",
}


class Screen:
    """Writes to a text stream; on a terminal, keeps a live region of lines at the bottom."""

    def __init__(self, stream: TextIO, *, tty: bool | None = None, color: bool | None = None) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.color = (self.tty and "NO_COLOR" not in os.environ) if color is None else color
        self._live: list[str] = []
        self._live_drawn = 0
        self._at_line_start = True
        self._pending_text = ""
        self.live_locked = False  # a prompt owns the bottom of the screen; the turn view must not draw
        self.text_styler: Callable[[str], str] | None = None  # styles complete lines of streamed text

    # -- styling ----------------------------------------------------------------------------------

    def style(self, text: str, *names: str) -> str:
        """``text`` wrapped in the named ANSI styles, or unchanged without colour."""
        if not self.color or not names:
            return text
        return "".join(STYLES[n] for n in names) + text + RESET

    def height(self) -> int:
        return shutil.get_terminal_size((100, 24)).lines if self.tty else 1000

    def width(self) -> int:
        return shutil.get_terminal_size((100, 24)).columns if self.tty else 1000

    # -- permanent output -------------------------------------------------------------------------

    def print(self, text: str = "", *, live: list[str] | None = None) -> None:
        """Print whole line(s) above the live region; ``live`` replaces the region in the same redraw."""
        self._erase_live()
        if live is not None and self.tty and not self.live_locked:
            self._live = self._fit_lines(live)
        self._end_partial_line()
        self.stream.write(text + "\n")
        self._at_line_start = True
        self._draw_live()
        self.stream.flush()

    def stream_text(self, text: str) -> None:
        """Streamed model text: written as it comes, or a line at a time while a live region shows."""
        if not text:
            return
        if self._live:
            # complete lines go above the live region; the unfinished one is shown inside it, at its top
            self._pending_text += text
            if "\n" in self._pending_text:
                complete, _, self._pending_text = self._pending_text.rpartition("\n")
                self.print(self._styled(complete))
            else:
                self._redraw_live()
            return
        self.stream.write(text)
        self._at_line_start = text.endswith("\n")
        self.stream.flush()

    def end_text(self) -> None:
        """Finish a streamed text block: flush what was held back and end the line."""
        if self._pending_text:
            pending, self._pending_text = self._pending_text, ""
            self.print(self._styled(pending))
        elif not self._at_line_start:
            self.stream.write("\n")
            self._at_line_start = True
            self.stream.flush()

    def _styled(self, text: str) -> str:
        if self.text_styler is None or not self.color:
            return text
        return "\n".join(self.text_styler(line) for line in text.split("\n"))

    def write_raw(self, text: str) -> None:
        """Write escape sequences or a prompt as is (the caller manages the cursor)."""
        self.stream.write(text)
        self.stream.flush()

    # -- live region ------------------------------------------------------------------------------

    def set_live(self, lines: list[str], *, force: bool = False) -> None:
        """Replace the live region (ignored when not on a terminal, or while a prompt holds it)."""
        if not self.tty or (self.live_locked and not force):
            return
        new = self._fit_lines(lines)
        if new == self._live and self._live_drawn == len(new):
            return
        self._erase_live()
        self._live = new
        self._end_partial_line()
        self._draw_live()
        self.stream.flush()

    def _fit_lines(self, lines: list[str]) -> list[str]:
        width = self.width() - 1  # never let a line wrap, so that erasing counts lines exactly
        return [fit(line, width) for line in lines]

    def suspend_live(self) -> None:
        """Erase the live region (before a prompt takes the bottom of the screen)."""
        self._erase_live()
        self._live = []
        if self._pending_text:
            # an unfinished line of text becomes ordinary output; later text continues it
            self.stream.write(self._pending_text)
            self._pending_text = ""
            self._at_line_start = False
        self.stream.flush()

    def _end_partial_line(self) -> None:
        if not self._at_line_start:
            self.stream.write("\n")
            self._at_line_start = True

    def _erase_live(self) -> None:
        if not self._live_drawn:
            return
        self.stream.write("\r\x1b[2K" + "\x1b[1A\x1b[2K" * (self._live_drawn - 1))
        self._live_drawn = 0

    def _redraw_live(self) -> None:
        self._erase_live()
        self._draw_live()
        self.stream.flush()

    def _draw_live(self) -> None:
        if not self._live or not self.tty:
            return
        lines = self._live
        rows = self.height()
        if self._pending_text:
            # a long unfinished paragraph shows its end, where the text is arriving
            pending = wrap_cells(self._pending_text, self.width() - 1)
            lines = pending[-max(1, rows // 2) :] + lines
        if len(lines) > rows - 1:
            # a region taller than the screen could not be erased: keep its head and its last line
            keep = max(1, rows - 3)
            lines = [*lines[:keep], f"… {len(lines) - keep - 1} more lines", lines[-1]]
        self.stream.write("\n".join(lines) + "\r")
        # the cursor stays on the last live line; erasing walks back up from there
        self._live_drawn = len(lines)

    @property
    def live_lines(self) -> list[str]:
        return list(self._live)
