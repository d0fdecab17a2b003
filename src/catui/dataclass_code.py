"""The code of the methods ``dataclasses`` generates, compiled once and reused by later runs (issue 28).

For each class it decorates, Python's ``dataclasses`` writes the source of the methods it adds
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__`` and ``__delattr__``)
and compiles it with ``exec``: on Python 3.11 one compile per method. A trivial ``catui -p`` run defines
about a hundred dataclasses and spent ~30 ms of its ~160 compiling some 400 such sources, the same texts
in every run. Within :func:`reused_dataclass_code` each text is compiled once per machine: the code is
looked up by its source in a file kept with catui's bytecode and only a text not seen before is compiled
(and added to the file when the block ends). docs/decisions.md has the measurements.

How: ``dataclasses`` calls ``exec`` by its global name, so during the block a function of that name sits
in the ``dataclasses`` module's namespace, where the lookup finds it before the builtin. Given a source
text it runs the code compiled from that text exactly as ``exec`` would compile it (file name
``<string>``, no ``__future__`` flags: ``dataclasses`` has none, and none of this module's leak in), with
the same globals and namespace; anything else goes to the builtin unchanged. So every class is the one
the plain decorator makes. The function is taken out when the outermost block ends. If a Python stops
calling ``exec`` this way the block finds nothing to serve and costs a dictionary load.

The file (:func:`cache_file_candidates`): ``__pycache__/dataclass-methods.<tag>.bin`` in catui's package
folder, as Python keeps ``.pyc`` files (under ``sys.pycache_prefix`` when that is set); where that folder
cannot be written (a system-wide install), the user's cache folder. It holds a header (the format,
Python's exact version and optimization level, a CRC-32 of the payload) and a marshalled
``{source: marshalled code}``: each code object is unmarshalled only when its text comes up, so a file that
grew with every feature a user ran costs a print run little more than the texts it uses (~1 ms for 1,500). A file missing, made by another Python, damaged or unreadable is ignored; writing is a
temporary file renamed over the old one, so a killed writer leaves the old file or none, never half of
one; a failed write (read-only or full disk) is ignored, and ``PYTHONDONTWRITEBYTECODE`` turns writing
off. A run then pays only the compiles it would have paid anyway.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import marshal
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FORMAT = b"catui dataclass methods 2\n"
FILE_STEM = "dataclass-methods"
MAX_ENTRIES = 2048
"""Beyond this many sources (old texts pile up as catui's classes change), a write keeps only what the
writing process used or compiled."""
MAX_FILE_BYTES = 32 * 1024 * 1024
"""A larger file is not this module's (2,048 entries take about 2.5 MB) and is not read."""

_CodeType = type(compile("", "<string>", "exec"))


def cache_file_candidates() -> list[Path]:
    """Where the compiled methods are kept, in the order they are tried: beside catui's bytecode, then
    the user's cache folder."""
    name = f"{FILE_STEM}.{sys.implementation.cache_tag}.bin"
    package = Path(__file__).resolve().parent
    if sys.pycache_prefix:
        first = Path(sys.pycache_prefix, *package.parts[1:]) / name
    else:
        first = package / "__pycache__" / name
    candidates = [first]
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache_home):  # the XDG rule: a relative path is ignored
        cache_home = os.path.join(os.path.expanduser("~"), ".cache")
    if os.path.isabs(cache_home):  # no home folder: no second place
        candidates.append(Path(cache_home) / "catui" / name)
    return candidates


def file_header(payload: bytes | memoryview) -> bytes:
    """The first line of a cache file: the format, this Python's exact version and optimization level,
    and the payload's CRC-32 (marshalled code from another interpreter, or damaged, must never run)."""
    import zlib

    identity = f"{sys.version}|{sys.flags.optimize}|{zlib.crc32(payload):08x}"
    return FORMAT + identity.encode("utf-8", "backslashreplace").replace(b"\n", b" ") + b"\n"


def read_cache_file(path: Path) -> dict[str, Any] | None:
    """The ``{source: marshalled code}`` mapping kept in ``path``, or None when there is none this Python
    may use."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    if not data.startswith(FORMAT):
        return None
    end = data.find(b"\n", len(FORMAT))
    if end < 0:
        return None
    payload = memoryview(data)[end + 1:]  # no copy of a large file
    if data[:end + 1] != file_header(payload):
        return None
    try:
        loaded = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(loaded, dict):
        return None
    return loaded


def write_cache_file(path: Path, entries: dict[str, Any]) -> bool:
    """Replace ``path`` with ``entries``, atomically; False (and nothing changed) when it cannot be written."""
    payload = marshal.dumps(entries)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "wb") as stream:
            stream.write(file_header(payload))
            stream.write(payload)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink()
        except OSError:
            pass
        return False
    return True


class DataclassCodeCache:
    """Compiled method sources for ``dataclasses``: loaded from the first usable file, served through
    :meth:`exec`, and written back by :meth:`save` when something new was compiled."""

    def __init__(self, files: Sequence[Path], *, write: bool = True) -> None:
        self.files = list(files)
        self.write = write
        self.entries: dict[str, Any] = {}
        for path in self.files:
            loaded = read_cache_file(path)
            if loaded is not None:
                self.entries = loaded
                break
        self.used: set[str] = set()
        self.compiled = 0
        self.reused = 0
        self.unsaved = 0

    def code_for(self, source: str) -> Any:
        """The code compiled from ``source`` as ``exec`` compiles a string."""
        code = None
        kept = self.entries.get(source)
        if type(kept) is bytes:
            try:
                code = marshal.loads(kept)
            except (EOFError, ValueError, TypeError):
                code = None
        if type(code) is _CodeType:
            self.reused += 1
        else:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.entries[source] = marshal.dumps(code)
            self.compiled += 1
            self.unsaved += 1
        self.used.add(source)
        return code

    def exec(self, source: Any, namespace: Any = None, local_namespace: Any = None, /, **options: Any) -> None:
        """``exec`` for the ``dataclasses`` module: the same call, with a source text's code reused."""
        if namespace is None:
            # The builtin would take the caller's globals; the only callers are in ``dataclasses``.
            namespace = vars(dataclasses)
        if isinstance(source, str):
            source = self.code_for(source)
        builtins.exec(source, namespace, local_namespace, **options)

    def save(self) -> None:
        """Write what this process compiled, merged with what other processes wrote meanwhile (one attempt
        per batch of new texts: a read-only disk is not tried again at every block's end)."""
        if not self.unsaved or not self.write:
            return
        self.unsaved = 0
        for path in self.files:
            on_disk = read_cache_file(path) or {}
            merged = {**on_disk, **self.entries}
            if len(merged) > MAX_ENTRIES:
                merged = {source: self.entries[source] for source in self.used}
            if write_cache_file(path, merged):
                return


@functools.cache
def process_cache() -> DataclassCodeCache:
    """The cache of the default files, read once per process: the SDK enters a block for each name it
    resolves lazily, and reading a file grown to ~2,000 texts at each of them cost an SDK ``query()`` ~10 ms."""
    return DataclassCodeCache(cache_file_candidates())


@contextmanager
def reused_dataclass_code(files: Sequence[Path] | None = None, *,
                          write: bool | None = None) -> Iterator[DataclassCodeCache | None]:
    """Within the block, dataclasses reuse compiled method code kept in ``files``
    (:func:`cache_file_candidates` by default), and what was compiled anew is written back at the end
    unless ``write`` is False (by default: unless Python writes no bytecode, ``PYTHONDONTWRITEBYTECODE``).
    Yields the cache, or None inside another such block (the outer one serves and saves)."""
    namespace = vars(dataclasses)
    if "exec" in namespace:
        yield None
        return
    cache = process_cache() if files is None else DataclassCodeCache(files)
    cache.write = not sys.dont_write_bytecode if write is None else write
    namespace["exec"] = cache.exec
    try:
        yield cache
    finally:
        if namespace.get("exec") == cache.exec:
            del namespace["exec"]
        cache.save()
