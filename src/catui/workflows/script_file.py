"""Reading a workflow script from a file a caller named (the Workflow tool's ``scriptPath``, ``catui workflow
run FILE``): a regular file, read with a size ceiling, so that ``/dev/zero``, a FIFO nobody writes or a
multi-gigabyte file ends in a one-line error instead of filling memory or blocking the event loop."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from catui.errors import CatuiError

SCRIPT_FILE_MAX_CHARS = 524288
"""The longest script a file may hold: the Workflow tool's ``script`` limit."""


def read_script_file(path: Path, max_chars: int = SCRIPT_FILE_MAX_CHARS) -> str:
    """The text of ``path`` (UTF-8); CatuiError naming the file when it is not a regular file, is longer than
    ``max_chars`` characters, is not UTF-8 or cannot be read."""
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused as not a regular file).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise CatuiError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError:  # a NUL in the name
        raise CatuiError(f"cannot read {str(path)!r}: a file name cannot hold a NUL character") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CatuiError(f"cannot read {path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as source:
            data = source.read(max_chars * 4 + 1)  # UTF-8 takes at most four bytes a character
    except OSError as exc:
        raise CatuiError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatuiError(f"cannot read {path}: not UTF-8 text (byte {exc.start})") from None
    if len(text) > max_chars or len(data) > max_chars * 4:
        raise CatuiError(f"cannot read {path}: a workflow script is at most {max_chars:,} characters")
    return text
