"""Reading a JSON input that someone else wrote (settings, ``.mcp.json``, plugin manifests, stdin lines), bounded.

A hostile or broken file must cost a one-line error, not the process:

- only regular files are read: a FIFO would block start-up forever and a
  symlink to ``/dev/zero`` would fill the memory; both are refused before the
  first byte is read (the file is opened non-blocking, then checked with fstat);
- at most :data:`MAX_CONFIG_BYTES` are read;
- nesting deeper than :data:`MAX_JSON_DEPTH` is refused (Python's parser would
  raise RecursionError, and everything that walks the value recursively after it).

Errors are :class:`JsonInputError`, whose text says what is wrong without the
file's name; callers put the name (and how to fix it) in front.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_CONFIG_BYTES = 16 * 1024 * 1024
"""Far above any real settings or manifest file (they are a few KB), far below a memory problem."""

MAX_JSON_DEPTH = 200
"""Nesting levels (objects and arrays) a JSON input may have; real ones have fewer than ten."""


class JsonInputError(ValueError):
    """A JSON input that cannot be used; the message names the problem (not the file) in a few words."""


def read_text_file(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES) -> str | None:
    """The UTF-8 text of the regular file ``path``; None when it does not exist.

    Raises JsonInputError for a folder, a FIFO, a device, a file over ``max_bytes``,
    text that is not UTF-8, a symbolic link loop, or a read error.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise JsonInputError("is a folder, not a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise JsonInputError("is a symbolic link loop") from None
        raise JsonInputError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise JsonInputError("is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise JsonInputError(f"is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise JsonInputError(f"is {info.st_size} bytes, over the {max_bytes}-byte limit")
        data = _read_at_most(fd, max_bytes + 1)  # /proc-style files report size 0: the cap still holds
    except OSError as exc:
        raise JsonInputError(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise JsonInputError(f"is over the {max_bytes}-byte limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth``.

    Raises json.JSONDecodeError for text that is not JSON (callers already report
    its line and column) and JsonInputError for nesting that is too deep.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonInputError(f"nests objects or arrays more than {max_depth} levels deep") from None
    if _deeper_than(value, max_depth):
        raise JsonInputError(f"nests objects or arrays more than {max_depth} levels deep")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` levels (walked with a stack, not recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
