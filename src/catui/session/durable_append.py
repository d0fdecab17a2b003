"""Appending bytes to a JSONL file so that they land whole or not at all.

What a transcript promises rests on this one function:

- every byte is written (``write()`` may write less than asked on a full disk;
  the rest is written by further calls, and a failure among them undoes the
  part already written by truncating the file back to its size before);
- a file whose last line was torn (by a crash, or a writer older than this
  one) never has the next line glued to that fragment: the first append
  through a writer starts on a new line, so the fragment stays a line of its
  own that readers skip with a warning;
- ``sync=True`` flushes the file to the disk before returning, for writes a
  later promise depends on (a compaction, a fork's copy).

One writer per file is assumed (a session's transcript has one process writing
it); the rollback would cut another process's line appended in the same
instant.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def append_whole(path: Path, data: bytes, *, repair_torn_end: bool = False, sync: bool = False) -> None:
    """Append ``data`` to ``path`` (created if missing) completely, or leave the file as it was.

    Raises OSError (with the file's name) when the data cannot be written; the
    file then has the size it had before the call.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        size = os.fstat(fd).st_size
        if repair_torn_end and size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # the torn fragment keeps its own line; this line starts cleanly
        try:
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass  # the error below still tells the caller nothing of this write counts
            if exc.filename is None:
                exc.filename = str(path)
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # not seen on Linux, but a zero-length write must not loop forever
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]
