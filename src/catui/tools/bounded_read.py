"""Reading a file for a tool without trusting what the path points at.

A path may name a FIFO (``open`` would block until a writer comes, ignoring
signals), a device (``/dev/zero`` never ends), a symbolic link loop, or a
regular file of many gigabytes. These helpers open without blocking, check
what was opened with ``fstat`` (so a swap between a check and the open cannot
slip a FIFO in), and read at most what the caller can hold.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from catui.tools.nofollow import PathChangedError, open_unfollowed

READ_CHUNK = 1024 * 1024


class UnreadableFile(Exception):
    """The path cannot be read as a regular file; the message says why and what to do instead."""


@dataclass(frozen=True)
class OpenedFile:
    """A regular file opened for reading: its descriptor and size when opened."""

    fd: int
    size: int

    def close(self) -> None:
        os.close(self.fd)


def describe_kind(mode: int) -> str:
    """How a message names what is not a regular file."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a special file"


def open_regular(path: Path, *, follow_links: bool = True) -> OpenedFile:
    """Open ``path`` for reading if it is a regular file; UnreadableFile otherwise (never blocks).

    FileNotFoundError passes through for the caller's "does not exist" message.
    """
    try:
        if follow_links:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        else:
            # A tool's path, resolved once and judged: opened as the check saw it, following no link that
            # appeared since (tools/nofollow.py).
            fd = open_unfollowed(path.absolute(), os.O_RDONLY)
    except FileNotFoundError:
        raise
    except PathChangedError as exc:
        raise UnreadableFile(str(exc)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFile(symlink_loop_message(path)) from None
        raise UnreadableFile(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(
                f"{path} is {describe_kind(info.st_mode)}, not a regular file; Read only reads files. "
                "Inspect it through the Bash tool with a bound (e.g. `head -c 4096`, `timeout 5 cat`)."
            )
        # Regular files do not block; reads go on in blocking mode so a short read means end of file.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return OpenedFile(fd, info.st_size)


def symlink_loop_message(path: Path) -> str:
    return (f"{path} is a symbolic link loop (following its links never reaches a file); "
            "fix or remove the link (`ls -l` shows where it points).")


def read_at_most(opened: OpenedFile, limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of the file (a file that grew, or a /proc file of size 0,
    still stops at the limit)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(opened.fd, min(left, READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


@dataclass
class LineWindow:
    """Lines ``first`` (0-based) onward of a file read as a stream; ``more`` when lines follow the window."""

    lines: list[bytes]
    first: int
    more: bool
    cut_lines: int = 0


def read_line_window(opened: OpenedFile, first: int, count: int, max_line_bytes: int) -> LineWindow:
    """Lines ``first`` .. ``first + count - 1`` of a large file, streaming; memory stays within
    ``count * max_line_bytes`` however big the file or its lines are (longer lines are cut)."""
    window = LineWindow([], first, False)
    os.lseek(opened.fd, 0, os.SEEK_SET)  # from the start, whatever was read before
    with os.fdopen(os.dup(opened.fd), "rb", buffering=READ_CHUNK) as stream:
        index = 0
        while True:
            line = stream.readline(max_line_bytes)
            if not line:
                break
            if len(line) >= max_line_bytes and not line.endswith(b"\n"):
                # Longer than the cap: the rest of this line is skipped in bounded pieces.
                while (rest := stream.readline(READ_CHUNK)) and not rest.endswith(b"\n"):
                    pass
                if first <= index < first + count:
                    window.cut_lines += 1
            if index >= first + count:
                window.more = True
                break
            if index >= first:
                window.lines.append(line.rstrip(b"\r\n"))
            index += 1
    return window
