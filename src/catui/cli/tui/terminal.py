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
import termios
from collections.abc import Callable
from typing import Any

from catui.cli.tui.format import cell_width, fit
from catui.cli.tui.screen import Screen

KeyHandler = Callable[[str], None]

KEY_PREFIX = "\ue000"  # a private-use character: typed or pasted text never contains it


def key(name: str) -> str:
    """The token a named key (``enter``, ``ctrl-c``, ``up`` …) is delivered as.

    Handlers receive either such a token or literal text; the prefix keeps
    the two apart even when someone types or pastes the word "enter".
    """
    return KEY_PREFIX + name


def is_named(token: str) -> bool:
    return token.startswith(KEY_PREFIX)


NEWLINE_MARK = "↵"  # how a pasted line break shows inside the one-line editor
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

_CTRL_KEY_NAMES = {
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
_ESCAPE_KEY_NAMES = {
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
CTRL_KEYS = {seq: key(name) for seq, name in _CTRL_KEY_NAMES.items()}
ESCAPE_KEYS = {seq: key(name) for seq, name in _ESCAPE_KEY_NAMES.items()}


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
                    keys.append(key("esc"))
                    i += 1
            continue
        if ch in CTRL_KEYS:
            flush()
            keys.append(CTRL_KEYS[ch])
        elif ch >= " " and ch != KEY_PREFIX:
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
        self._paste: str | None = None  # text of a bracketed paste still arriving

    def start(self) -> None:
        self._saved = termios.tcgetattr(self.fd)
        mode = termios.tcgetattr(self.fd)
        mode[0] &= ~(termios.IXON | termios.ICRNL)  # Ctrl-S/Ctrl-Q as keys; Enter arrives as \r
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSAFLUSH, mode)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.fd, self._on_readable)

    @property
    def started(self) -> bool:
        return self._saved is not None

    def stop(self) -> None:
        """Give the terminal back as it was."""
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self.fd)
            self._loop = None
        if self._saved is not None:
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
            self._dispatch(key("ctrl-d"))
            return
        self._feed(self._decoder.decode(data))

    def _feed(self, text: str) -> None:
        """Dispatch decoded input; a bracketed paste arrives as one piece of literal text, newlines kept."""
        while text:
            if self._paste is not None:
                end = text.find(PASTE_END)
                if end < 0:
                    self._paste += text
                    return
                pasted = (self._paste + text[:end]).replace("\r\n", "\n").replace("\r", "\n")
                self._paste = None
                pasted = "".join(ch for ch in pasted if ch == "\n" or ch >= " ").replace(KEY_PREFIX, "")
                if pasted:
                    self._dispatch(pasted)
                text = text[end + len(PASTE_END) :]
                continue
            start = text.find(PASTE_START)
            before = text if start < 0 else text[:start]
            for token in split_keys(before):
                self._dispatch(token)
            if start < 0:
                return
            self._paste = ""
            text = text[start + len(PASTE_START) :]

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
        self._redraws: list[Callable[[], None]] = []  # one per read_line under way, the innermost last
        self.completer: Callable[[str], list[str]] | None = None
        """Tab at the end of a ``/name`` being typed: the names it may become (the terminal's slash commands)."""
        self.last_text = ""  # the buffer when the last read ended (kept when Ctrl-C or a cancel ends it)

    async def read_line(self, prompt: str, status: str = "", initial: str = "") -> str | None:
        """One line of input; None on Ctrl-D at an empty line. Ctrl-C raises KeyboardInterrupt."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()
        state = _EditState(list(initial), len(initial), len(self.history))
        history = [*self.history, ""]

        def redraw() -> None:
            self._draw(prompt, state, status)

        def on_key(token: str) -> None:
            if done.done():
                self.keys.defer(token)
                return
            if token == key("enter") and state.text.endswith("\\") and state.cursor == len(state.buffer):
                state.buffer[-1] = "\n"  # a backslash before Enter continues the input on a new line
                redraw()
            elif token == key("enter"):
                self._finish(prompt, state)
                done.set_result(state.text)
            elif token == key("ctrl-c"):
                self._finish(prompt, state)
                done.set_exception(KeyboardInterrupt())
            elif token == key("ctrl-d"):
                if not state.buffer:
                    self._finish(prompt, state)
                    done.set_result(None)
                else:
                    state.delete_forward()
                    redraw()
            elif token == key("tab") and self._completes(state):
                shown = self._complete(state)
                self._draw(prompt, state, "  ".join(shown) if shown else status)
            elif token in (key("up"), key("down")):
                history[state.history_index] = state.text
                step = -1 if token == key("up") else 1
                state.history_index = max(0, min(len(history) - 1, state.history_index + step))
                state.buffer = list(history[state.history_index])
                state.cursor = len(state.buffer)
                redraw()
            else:
                state.apply(token)
                redraw()

        redraw()
        self._redraws.append(redraw)
        try:
            with self.keys.focus(on_key):
                line = await done
        except asyncio.CancelledError:
            # something else needs the screen (a background agent's notification): take the prompt down
            self.screen.write_raw("\r\x1b[J")
            raise
        finally:
            self._redraws.remove(redraw)
            self.last_text = state.text
        if line and line.strip() and (not self.history or self.history[-1] != line):
            self.history.append(line)
        return line

    @property
    def reading(self) -> bool:
        """Whether a line is being read (the prompt and its status line are on the screen)."""
        return bool(self._redraws)

    def hide(self) -> None:
        """Take the prompt line and its status line off the screen, so that something else can use those rows
        (a background agent's permission prompt); :meth:`show` puts them back."""
        if self._redraws:
            self.screen.write_raw("\r\x1b[J")

    def show(self) -> None:
        """Draw the line being read again, as it was (after :meth:`hide`)."""
        if self._redraws:
            self._redraws[-1]()

    def _completes(self, state: _EditState) -> bool:
        """Whether Tab completes here: a ``/name`` being typed at the end of a one-word line."""
        text = state.text
        return (self.completer is not None and text.startswith("/") and state.cursor == len(state.buffer)
                and not any(ch.isspace() for ch in text))

    def _complete(self, state: _EditState) -> list[str]:
        """Extend the typed ``/name`` as far as the candidates agree (a lone match gets a space after it).

        The candidates, when more than one remains, for the status line.
        """
        assert self.completer is not None
        candidates = self.completer(state.text)
        if not candidates:
            return []
        completed = candidates[0] + " " if len(candidates) == 1 else _shared_start(candidates)
        if len(completed) > len(state.text):
            state.buffer = list(completed)
            state.cursor = len(state.buffer)
        return candidates if len(candidates) > 1 else []

    def _draw(self, prompt: str, state: _EditState, status: str) -> None:
        width = self.screen.width()
        room = max(10, width - cell_width(prompt) - 2)
        shown = [NEWLINE_MARK if ch == "\n" else ch for ch in state.buffer]
        # keep the cursor in view by scrolling the line horizontally
        start, used = state.cursor, 0
        while start > 0 and used + cell_width(shown[start - 1]) <= room:
            start -= 1
            used += cell_width(shown[start])
        visible: list[str] = []
        used = 0
        for ch in shown[start:]:
            w = cell_width(ch)
            if used + w > room:
                break
            visible.append(ch)
            used += w
        out = "\r\x1b[J" + prompt + "".join(visible)
        if status:
            out += "\n" + self.screen.style(fit(status, width - 1), "dim") + "\x1b[1A"
        column = cell_width(prompt) + cell_width("".join(shown[start : state.cursor]))
        out += "\r" + (f"\x1b[{column}C" if column else "")
        self.screen.write_raw(out)

    def _finish(self, prompt: str, state: _EditState) -> None:
        self.screen.write_raw("\r\x1b[J" + prompt + state.text.replace("\n", "\n  ") + "\n")


def _shared_start(texts: list[str]) -> str:
    """The longest text every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


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

    def apply(self, token: str) -> None:
        """Apply an editing key or insert literal text."""
        if not is_named(token):
            self.buffer[self.cursor : self.cursor] = list(token)
            self.cursor += len(token)
            return
        name = token[len(KEY_PREFIX) :]
        if name == "backspace":
            if self.cursor > 0:
                self.cursor -= 1
                del self.buffer[self.cursor]
        elif name == "delete":
            self.delete_forward()
        elif name == "left":
            self.cursor = max(0, self.cursor - 1)
        elif name == "right":
            self.cursor = min(len(self.buffer), self.cursor + 1)
        elif name in ("home", "ctrl-a"):
            self.cursor = 0
        elif name in ("end", "ctrl-e"):
            self.cursor = len(self.buffer)
        elif name == "ctrl-u":
            del self.buffer[: self.cursor]
            self.cursor = 0
        elif name == "ctrl-k":
            del self.buffer[self.cursor :]
        elif name == "ctrl-w":
            start = self.cursor
            while start > 0 and self.buffer[start - 1] == " ":
                start -= 1
            while start > 0 and self.buffer[start - 1] != " ":
                start -= 1
            del self.buffer[start : self.cursor]
            self.cursor = start
        elif name == "tab":
            self.apply("  ")
