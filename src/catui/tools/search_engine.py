"""The search behind Grep and Glob: the ``rg`` binary when present, a pure-Python twin otherwise.

Both backends return the same structures (:class:`FileHits`) in the same
order, so the tools format one result whichever ran: files_with_matches
sorted by modification time (newest first, then path), content and count
sorted by path, lines in file order.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from catui.tools.files import detect_encoding
from catui.tools.grep_types import RG_FILE_TYPES
from catui.tools.ignore import VCS_DIRECTORIES, walk_files
from catui.tools.search_process import DEFAULT_TIMEOUT_S, SearchInterrupted, run_search_process

OutputMode = Literal["content", "files_with_matches", "count"]
FALLBACK_ENV = "CATUI_GREP_FALLBACK"


class SearchError(Exception):
    """A search that cannot run (bad regex, unknown type); the message is for the model."""


def find_rg() -> str | None:
    """The ``rg`` binary: the one next to the running Python (PyPI ``ripgrep``) first, then PATH.

    None when ``CATUI_GREP_FALLBACK=1`` asks for the pure-Python search.
    """
    if os.environ.get(FALLBACK_ENV, "") not in ("", "0"):
        return None
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


@dataclass(frozen=True)
class GrepQuery:
    pattern: str
    root: Path
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    hidden: bool = False  # search hidden files too (never inside VCS_DIRECTORIES)


@dataclass
class FileHits:
    """One file's result. ``lines`` holds (line number, is_match, text) or None for a break between groups."""

    path: str
    count: int = 0
    lines: list[tuple[int, bool, str] | None] = field(default_factory=list)


# ---------------------------------------------------------------- ordering


def order_hits(hits: list[FileHits], mode: OutputMode) -> list[FileHits]:
    if mode == "files_with_matches":
        return sorted(hits, key=lambda h: (-_mtime(h.path), h.path))
    return sorted(hits, key=lambda h: h.path)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


# ---------------------------------------------------------------- rg backend


def rg_grep_args(rg: str, query: GrepQuery) -> list[str]:
    args = [rg, "--null", "--color", "never", "--no-heading", "--with-filename", "--no-config"]
    if query.ignore_case:
        args.append("-i")
    if query.multiline:
        args += ["-U", "--multiline-dotall"]
    for glob in query.globs:
        args += ["--glob", glob]
    if query.hidden:
        # After the user's globs, so that these exclusions win.
        args.append("--hidden")
        for name in sorted(VCS_DIRECTORIES):
            args += ["--glob", f"!{name}"]
    if query.file_type:
        args += ["--type", query.file_type]
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count")
    else:
        args.append("--line-number")
        # Context flags, even "0", take ripgrep off its fast path; pass them only when asked for.
        if query.before:
            args += ["--before-context", str(query.before)]
        if query.after:
            args += ["--after-context", str(query.after)]
    args += ["-e", query.pattern, "--", str(query.root)]
    return args


@dataclass
class SearchResult:
    """The hits of a search; ``cut`` when its output passed the cap and the rest was not read."""

    hits: list[FileHits]
    cut: bool = False


async def rg_search(rg: str, query: GrepQuery, abort: asyncio.Event | None = None,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> SearchResult:
    """Run rg for ``query`` with its output read as it comes (capped); abort or the time limit raise SearchError."""
    try:
        done = await run_search_process(
            rg_grep_args(rg, query), cwd=str(query.root if query.root.is_dir() else query.root.parent),
            abort=abort, timeout_s=timeout_s, separator=b"\0" if query.mode == "files_with_matches" else b"\n")
    except SearchInterrupted as exc:
        raise SearchError(_interrupted_text(exc)) from None
    if done.returncode not in (0, 1) and not done.stdout and not done.cut:
        # 2: a bad pattern or unreadable root; negative: rg died of a signal (out of memory, killed)
        raise SearchError(done.stderr.decode("utf-8", "replace").strip()
                          or f"ripgrep failed (exit status {done.returncode})")
    return SearchResult(order_hits(parse_rg_output(done.stdout, query.mode), query.mode), done.cut)


async def python_search_in_child(query: GrepQuery, abort: asyncio.Event | None = None,
                                 timeout_s: float = DEFAULT_TIMEOUT_S) -> SearchResult:
    """:func:`python_search` in a child Python process that an abort or the time limit can kill."""
    spec = {"pattern": query.pattern, "root": os.fsdecode(query.root), "mode": query.mode,
            "globs": list(query.globs), "file_type": query.file_type, "ignore_case": query.ignore_case,
            "multiline": query.multiline, "before": query.before, "after": query.after, "hidden": query.hidden}
    try:
        done = await run_search_process(
            [sys.executable, "-m", "catui.tools.python_search_worker"], cwd=str(query.root.parent),
            stdin=json.dumps(spec).encode("ascii"), abort=abort, timeout_s=timeout_s,
            cpu_limit_s=int(timeout_s) + 5)
    except SearchInterrupted as exc:
        raise SearchError(_interrupted_text(exc) + (
            " The pure-Python search backtracks on nested repetition such as (a+)+; simplify the pattern "
            "or install ripgrep (rg)." if exc.reason == "timeout" else "")) from None
    if done.returncode != 0 and not done.cut:
        raise SearchError(done.stderr.decode("utf-8", "replace").strip()
                          or f"the search process failed (exit status {done.returncode})")
    hits = []
    for line in done.stdout.splitlines():
        item = json.loads(line)
        hits.append(FileHits(item["path"], item["count"],
                             [None if entry is None else (entry[0], entry[1], entry[2]) for entry in item["lines"]]))
    return SearchResult(hits, done.cut)


def _interrupted_text(exc: SearchInterrupted) -> str:
    if exc.reason == "aborted":
        return "the search was interrupted"
    return f"the search was stopped after {exc.seconds:g} seconds"


def parse_rg_output(out: bytes, mode: OutputMode) -> list[FileHits]:
    if mode == "files_with_matches":
        return [FileHits(os.fsdecode(p)) for p in out.split(b"\0") if p.strip(b"\n")]
    hits: dict[str, FileHits] = {}
    if mode == "count":
        for line in out.splitlines():
            raw, _, count = line.rpartition(b"\0")
            if raw:
                hits[os.fsdecode(raw)] = FileHits(os.fsdecode(raw), count=int(count))
        return list(hits.values())
    pending_break = False
    for line in out.split(b"\n"):
        if line == b"--":
            pending_break = True
            continue
        raw_path, sep, rest = line.partition(b"\0")
        if not sep:
            continue
        name = os.fsdecode(raw_path)
        entry = hits.get(name)
        if entry is None:
            entry = hits[name] = FileHits(name)
        elif pending_break:
            entry.lines.append(None)
        pending_break = False
        match = re.match(rb"(\d+)([:-])", rest)
        if match is None:
            continue
        is_match = match.group(2) == b":"
        text = rest[match.end() :].decode("utf-8", "replace")
        entry.lines.append((int(match.group(1)), is_match, text))
        if is_match:
            entry.count += 1
    return list(hits.values())


async def rg_files(rg: str, root: Path, globs: Iterable[str], abort: asyncio.Event | None = None,
                   timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """``rg --files`` under ``root``: at most the first 32 MB of names (a tree of millions of files stays
    bounded); abort or the time limit raise SearchError."""
    args = [rg, "--files", "--null", "--no-config"]
    for glob in globs:
        args += ["--glob", glob]
    args += ["--", str(root)]
    try:
        done = await run_search_process(args, cwd=str(root), abort=abort, timeout_s=timeout_s, separator=b"\0")
    except SearchInterrupted as exc:
        raise SearchError(_interrupted_text(exc)) from None
    if done.returncode not in (0, 1) and not done.stdout and not done.cut:
        raise SearchError(done.stderr.decode("utf-8", "replace").strip()
                          or f"ripgrep failed (exit status {done.returncode})")
    names = done.stdout.split(b"\0")
    return [os.fsdecode(p) for p in names if p]


# ---------------------------------------------------------------- Python backend


def python_files(root: Path, globs: Iterable[str]) -> list[str]:
    return [str(p) for p in walk_files(root, globs=tuple(globs))]


def python_search(query: GrepQuery) -> list[FileHits]:
    flags = re.IGNORECASE if query.ignore_case else 0
    if query.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        regex = re.compile(query.pattern, flags)
    except re.error as exc:
        raise SearchError(f"regex parse error in {query.pattern!r}: {exc}") from None
    if query.root.is_file():
        candidates: Iterable[Path] = [query.root]
    else:
        type_globs = None
        if query.file_type:
            type_globs = RG_FILE_TYPES.get(query.file_type)
            if type_globs is None:
                raise SearchError(f"unrecognized file type: {query.file_type}")
        candidates = walk_files(query.root, globs=query.globs, type_globs=type_globs, hidden=query.hidden)
    hits = []
    for path in candidates:
        found = _search_file(path, regex, query)
        if found is not None:
            hits.append(found)
    return order_hits(hits, query.mode)


def _search_file(path: Path, regex: re.Pattern[str], query: GrepQuery) -> FileHits | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    encoding = detect_encoding(data)
    if encoding.codec == "utf-8" and not encoding.bom and b"\x00" in data:
        return None  # binary, as ripgrep skips it
    text = encoding.decode(data) if encoding.bom else data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    regions = 0
    if query.multiline:
        matched, regions = _multiline_matches(regex, text, len(lines))
    elif query.mode == "files_with_matches":
        return FileHits(str(path)) if any(regex.search(line) for line in lines) else None
    else:
        matched = [i for i, line in enumerate(lines) if regex.search(line)]
    if not matched:
        return None
    # ripgrep counts a match spanning several lines once (matches sharing a line merge).
    hits = FileHits(str(path), count=regions if query.multiline else len(matched))
    if query.mode == "content":
        hits.lines = _with_context(lines, matched, query.before, query.after)
    return hits


def _multiline_matches(regex: re.Pattern[str], text: str, line_count: int) -> tuple[list[int], int]:
    """The indexes of lines touched by a match, and the number of separate matched regions."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    matched: set[int] = set()
    regions = 0
    region_end = -1
    for m in regex.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last_pos = m.end() - 1 if m.end() > m.start() else m.start()
        last = bisect.bisect_right(starts, last_pos) - 1
        if first >= line_count:
            continue
        if first > region_end:
            regions += 1
        region_end = max(region_end, last)
        matched.update(range(first, min(last, line_count - 1) + 1))
    return sorted(matched), regions


def _with_context(
    lines: list[str], matched: list[int], before: int, after: int
) -> list[tuple[int, bool, str] | None]:
    match_set = set(matched)
    shown: list[int] = sorted(
        {j for i in matched for j in range(max(i - before, 0), min(i + after, len(lines) - 1) + 1)}
    )
    out: list[tuple[int, bool, str] | None] = []
    previous = None
    for index in shown:
        # ripgrep prints a "--" break between non-adjacent groups only when context lines are on.
        if (before or after) and previous is not None and index != previous + 1:
            out.append(None)
        out.append((index + 1, index in match_set, lines[index]))
        previous = index
    return out
