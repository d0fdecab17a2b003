"""Reading agent definition files: size limit, one descriptor, UTF-8, and errors that say what to do.

Every loader (Markdown agents, plugins, skills, ``catui agents validate``) reads
through here, so a file too large, unreadable or not UTF-8 gets the same message.
"""

from __future__ import annotations

import os
import stat as stat_module
from pathlib import Path

MAX_AGENT_FILE_BYTES = 1024 * 1024
# O_NONBLOCK: a FIFO named like an agent file must not block the start (it is refused after fstat).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


class AgentFileError(Exception):
    """A definition file could not be read; the message says why and what to do."""


def read_agent_file(path: str | Path, *, size_hint: int | None = None) -> str:
    """The file's text (UTF-8, BOM kept for the parser to handle). Raises AgentFileError."""
    return decode_agent_file(read_agent_bytes(path, size_hint=size_hint))


def read_agent_bytes(path: str | Path, *, size_hint: int | None = None) -> bytes:
    """The file's bytes, at most MAX_AGENT_FILE_BYTES of them. Raises AgentFileError."""
    try:
        size = size_hint if size_hint is not None else os.stat(path).st_size
        _check_size(size)
        descriptor = os.open(path, _OPEN_FLAGS)
        try:
            _check_regular(os.fstat(descriptor).st_mode)
            return _read_descriptor(descriptor, size)
        finally:
            os.close(descriptor)
    except OSError as exc:
        raise _file_error(exc) from None


def stat_and_read_agent_file(path: str, unchanged_key: tuple[int, int] | None) -> tuple[int, int, bytes | None]:
    """``(mtime_ns, size, bytes)`` of the file, through one descriptor; raises AgentFileError.

    ``bytes`` is None when ``(mtime_ns, size)`` equals ``unchanged_key``: the caller already has the
    file's result. Taking the stat from the open descriptor saves a second lookup of the path (a
    scan that does not stat every file, then this, costs less than stat in the scan and open here).
    """
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
        try:
            st = os.fstat(descriptor)
            key = (st.st_mtime_ns, st.st_size)
            if key == unchanged_key:
                return key[0], key[1], None
            if stat_module.S_ISDIR(st.st_mode):
                raise IsADirectoryError
            _check_regular(st.st_mode)
            _check_size(st.st_size)
            return key[0], key[1], _read_descriptor(descriptor, st.st_size)
        finally:
            os.close(descriptor)
    except OSError as exc:
        raise _file_error(exc) from None


def _check_regular(mode: int) -> None:
    if not stat_module.S_ISREG(mode) and not stat_module.S_ISDIR(mode):
        raise AgentFileError("not a regular file (a FIFO, a device or a socket); replace it with a file")


def _check_size(size: int) -> None:
    if size > MAX_AGENT_FILE_BYTES:
        raise AgentFileError(
            f"file is {size:,} bytes; agent definitions are limited to {MAX_AGENT_FILE_BYTES:,} bytes"
        )


def _read_descriptor(descriptor: int, size: int) -> bytes:
    # One read of the expected size plus a byte (to notice a file that grew since its stat), on a raw
    # descriptor: a Python file object costs more than the read itself for a small file.
    data = os.read(descriptor, size + 1)
    if len(data) != size:  # grew or shrank since the stat (or a short read): read to the end
        chunks = [data]
        while chunk := os.read(descriptor, 65536):
            chunks.append(chunk)
            if sum(map(len, chunks)) > MAX_AGENT_FILE_BYTES:
                break
        data = b"".join(chunks)
    if len(data) > MAX_AGENT_FILE_BYTES:
        raise AgentFileError(
            f"file is larger than {MAX_AGENT_FILE_BYTES:,} bytes, the limit for agent definitions"
        )
    return data


def _file_error(exc: OSError) -> AgentFileError:
    """The AgentFileError for an OSError met while opening or reading a definition file."""
    if isinstance(exc, IsADirectoryError):
        return AgentFileError("is a directory, not a Markdown file")
    if isinstance(exc, FileNotFoundError):
        return AgentFileError("file not found (a broken symbolic link?)")
    if isinstance(exc, PermissionError):
        return AgentFileError("permission denied; make the file readable")
    return AgentFileError(f"cannot read the file: {exc.strerror or exc}")


def decode_agent_file(data: bytes) -> str:
    """The text of a definition file's bytes. Raises AgentFileError naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentFileError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as UTF-8"
        ) from None
