"""The input side of the terminal: keys read without blocking the event loop, and a small line editor.

While catui runs interactively on a terminal, stdin is in cbreak mode with
signals off, so that Ctrl-C, Ctrl-D, Ctrl-B and Esc arrive as keys and the
event loop keeps running (background agents, the spinner) while the user
types. Exactly one handler receives keys at a time: the line editor at the
prompt, the permission prompt, or the running turn (interrupt, background).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from catui.cli.ui_format import cell_width
from catui.cli.ui_screen import Screen

KeyHandler = Callable[[str], None]

# Named keys; anything else delivered to a handler is literal text (one or more characters).
CTRL_KEYS = {
    "\x01": "ctrl-a",
    "\x02": "ctrl-b",
    "\x03": "ctrl-c",
    "\x04": "ctrl-d",
    "\x05": "ctrl-e",
    "\x0b": "ctrl-k",
    "\x0c": "ctrl-l",
    "\x15": "ctrl-u",
    "\x17": "ctrl-w",
    "\t": "tab",
    "\r": "enter",
    "\n": "enter",
    "\x7f": "backspace",
    "\x08": "backspace",
}
ESCAPE_KEYS = {
    "[A": "up",
    "[B": "down",
    "[C": "right",
    "[D": "left",
    "[H": "home",
    "[F": "end",
    "OH": "home",
    "OF": "end",
    "[1~": "home",
    "[4~": "end",
    "[3~": "delete",
}
NAMED_KEYS = frozenset(CTRL_KEYS.values()) | frozenset(ESCAPE_KEYS.values()) | {"esc"}


def split_keys(text: str) -> list[str]:
    """Split decoded input into key names and runs of literal text."""
    keys: list[str] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            keys.append("".join(literal))
            literal.clear()

    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            flush()
            for seq, name in ESCAPE_KEYS.items():
                if text.startswith(seq, i + 1):
                    keys.append(name)
                    i += 1 + len(seq)
                    break
            else:
                if text.startswith("[", i + 1):
                    # an unknown CSI sequence: skip up to its final byte
                    j = i + 2
                    while j < len(text) and not ("@" <= text[j] <= "~"):
                        j += 1
                    i = j + 1
                else:
                    keys.append("esc")
                    i += 1
            continue
        if ch in CTRL_KEYS:
            flush()
            keys.append(CTRL_KEYS[ch])
        elif ch >= " ":
            literal.append(ch)
        i += 1
    flush()
    return keys


class KeyReader:
    """Reads stdin of a terminal in cbreak mode (no echo, no signals) and passes keys to one handler."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.handler: KeyHandler | None = None
        self._saved: Any = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = asyncio.Event()
        self._unclaimed: list[str] = []

    def start(self) -> None:
        import termios

        self._saved = termios.tcgetattr(self.fd)
        mode = termios.tcgetattr(self.fd)
        mode[0] &= ~(termios.IXON | termios.ICRNL)  # Ctrl-S/Ctrl-Q as keys; Enter arrives as \r
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSAFLUSH, mode)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.fd, self._on_readable)

    def stop(self) -> None:
        """Give the terminal back as it was."""
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self.fd)
            self._loop = None
        if self._saved is not None:
            import termios

            with contextlib.suppress(Exception):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    def _on_readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            self.closed.set()
            if self._loop is not None:
                self._loop.remove_reader(self.fd)
            self._dispatch("ctrl-d")
            return
        for key in split_keys(self._decoder.decode(data)):
            self._dispatch(key)

    def _dispatch(self, key: str) -> None:
        if self.handler is not None:
            self.handler(key)
        else:
            self._unclaimed.append(key)  # typed between prompts: the next handler gets it

    def defer(self, key: str) -> None:
        """Hand a key on to whichever handler takes focus next (its current handler is finishing)."""
        self._unclaimed.append(key)

    @contextlib.contextmanager
    def focus(self, handler: KeyHandler) -> Any:
        """Route keys to ``handler`` for the duration of the block."""
        previous, self.handler = self.handler, handler
        waiting, self._unclaimed = self._unclaimed, []
        for key in waiting:
            handler(key)
        try:
            yield
        finally:
            self.handler = previous


class LineEditor:
    """An input line with cursor movement, history, and a status line drawn under it."""

    def __init__(self, screen: Screen, keys: KeyReader) -> None:
        self.screen = screen
        self.keys = keys
        self.history: list[str] = []
        self.last_text = ""  # the buffer when the last read ended (kept when Ctrl-C or a cancel ends it)

    async def read_line(self, prompt: str, status: str = "", initial: str = "") -> str | None:
        """One line of input; None on Ctrl-D at an empty line. Ctrl-C raises KeyboardInterrupt."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()
        state = _EditState(list(initial), len(initial), len(self.history))
        history = [*self.history, ""]

        def redraw() -> None:
            self._draw(prompt, state, status)

        def on_key(key: str) -> None:
            if done.done():
                self.keys.defer(key)
                return
            if key == "enter":
                self._finish(prompt, state)
                done.set_result(state.text)
            elif key == "ctrl-c":
                self._finish(prompt, state)
                done.set_exception(KeyboardInterrupt())
            elif key == "ctrl-d":
                if not state.buffer:
                    self._finish(prompt, state)
                    done.set_result(None)
                else:
                    state.delete_forward()
                    redraw()
            elif key in ("up", "down"):
                history[state.history_index] = state.text
                step = -1 if key == "up" else 1
                state.history_index = max(0, min(len(history) - 1, state.history_index + step))
                state.buffer = list(history[state.history_index])
                state.cursor = len(state.buffer)
                redraw()
            else:
                state.apply(key)
                redraw()

        redraw()
        try:
            with self.keys.focus(on_key):
                line = await done
        except asyncio.CancelledError:
            # something else needs the screen (a background agent's notification): take the prompt down
            self.screen.write_raw("\r\x1b[J")
            raise
        finally:
            self.last_text = state.text
        if line and line.strip() and (not self.history or self.history[-1] != line):
            self.history.append(line)
        return line

    def _draw(self, prompt: str, state: _EditState, status: str) -> None:
        width = self.screen.width()
        room = max(10, width - cell_width(prompt) - 2)
        # keep the cursor in view by scrolling the line horizontally
        start = 0
        while cell_width("".join(state.buffer[start : state.cursor])) > room:
            start += 1
        visible = []
        used = 0
        for ch in state.buffer[start:]:
            w = cell_width(ch)
            if used + w > room:
                break
            visible.append(ch)
            used += w
        out = "\r\x1b[J" + prompt + "".join(visible)
        if status:
            from catui.cli.ui_format import fit

            out += "\n" + self.screen.style(fit(status, width - 1), "dim") + "\x1b[1A"
        column = cell_width(prompt) + cell_width("".join(state.buffer[start : state.cursor]))
        out += "\r" + (f"\x1b[{column}C" if column else "")
        self.screen.write_raw(out)

    def _finish(self, prompt: str, state: _EditState) -> None:
        self.screen.write_raw("\r\x1b[J" + prompt + state.text + "\n")


class _EditState:
    def __init__(self, buffer: list[str], cursor: int, history_index: int) -> None:
        self.buffer = buffer
        self.cursor = cursor
        self.history_index = history_index

    @property
    def text(self) -> str:
        return "".join(self.buffer)

    def delete_forward(self) -> None:
        if self.cursor < len(self.buffer):
            del self.buffer[self.cursor]

    def apply(self, key: str) -> None:
        """Apply an editing key or insert literal text."""
        if key == "backspace":
            if self.cursor > 0:
                self.cursor -= 1
                del self.buffer[self.cursor]
        elif key == "delete":
            self.delete_forward()
        elif key == "left":
            self.cursor = max(0, self.cursor - 1)
        elif key == "right":
            self.cursor = min(len(self.buffer), self.cursor + 1)
        elif key in ("home", "ctrl-a"):
            self.cursor = 0
        elif key in ("end", "ctrl-e"):
            self.cursor = len(self.buffer)
        elif key == "ctrl-u":
            del self.buffer[: self.cursor]
            self.cursor = 0
        elif key == "ctrl-k":
            del self.buffer[self.cursor :]
        elif key == "ctrl-w":
            start = self.cursor
            while start > 0 and self.buffer[start - 1] == " ":
                start -= 1
            while start > 0 and self.buffer[start - 1] != " ":
                start -= 1
            del self.buffer[start : self.cursor]
            self.cursor = start
        elif key == "tab":
            self.apply("  ")
        elif key not in NAMED_KEYS:
            self.buffer[self.cursor : self.cursor] = list(key)
            self.cursor += len(key)
