"""Glob: find files by name pattern, newest first, honouring .gitignore."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.files import file_permission_request, resolve_path

MAX_RESULTS = 100
GLOB_CHARS = frozenset("*?[{")

DESCRIPTION = """\
Find files by name with a glob pattern such as `**/*.py` or `src/**/*.{ts,tsx}`.

- Matching paths come back newest first (by modification time), at most 100 per call.
- path is the folder to search (default: the current working directory); omit it rather than passing \
"undefined" or "null".
- A pattern without a slash matches file names at any depth (`*.md` finds every Markdown file).
- Files ignored by .gitignore (and .ignore) and hidden files are skipped.
- Use it to locate files by name; to search inside files use Grep. For open-ended exploration that needs \
several rounds of searching, delegate to an agent with the Agent tool."""


def split_absolute_pattern(pattern: str) -> tuple[Path | None, str]:
    """``/repo/src/**/*.py`` → (``/repo/src``, ``**/*.py``); relative patterns are returned unchanged."""
    if not pattern.startswith("/"):
        return None, pattern
    parts = PurePosixPath(pattern).parts
    base: list[str] = []
    for part in parts:
        if GLOB_CHARS & set(part):
            break
        base.append(part)
    rest = parts[len(base) :]
    if not rest:  # no glob characters at all: the pattern names one file
        return Path(*base[:-1]), base[-1]
    return Path(*base), "/".join(rest)


class GlobTool(Tool):
    name = "Glob"
    input_model_ref: ClassVar[str] = "catui.tools.glob_input:GlobInput"
    read_only = True

    def __init__(self, *, force_fallback: bool = False) -> None:
        self.force_fallback = force_fallback

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # An absolute pattern replaces path as the folder searched, so it is what the permission check sees.
        base, _ = split_absolute_pattern(args.pattern)
        searched = str(base) if base is not None else args.path or str(ctx.cwd)
        return file_permission_request(self.name, args, searched, ctx, is_edit=False, read_only=True)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.glob_input import GlobInput
        assert isinstance(args, GlobInput)
        root = resolve_path(args.path, ctx) if args.path else ctx.cwd
        base, pattern = split_absolute_pattern(args.pattern)
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if base is not None:
            root = base
        if not root.is_dir():
            what = "is not a folder" if root.exists() else "does not exist"
            return ToolResult(
                f"Cannot search {root}: it {what}. Give an existing folder as path.", is_error=True
            )
        # lazy (catui.lazy): the file walker, ignore rules and rg loader, with the first search
        from catui.tools.ignore import glob_to_regex
        from catui.tools.search_engine import SearchError, find_rg, python_files, rg_files
        from catui.tools.search_process import search_timeout

        rg = None if self.force_fallback else find_rg()
        # List every visible, non-ignored file, then match the pattern here: a --glob given to rg would
        # whitelist files that .gitignore excludes.
        try:
            if rg:
                listed = await rg_files(rg, root, [], ctx.abort, search_timeout(ctx.services.env))
            else:
                listed = await asyncio.to_thread(python_files, root, [])
        except SearchError as exc:
            return ToolResult(f"Glob failed: {exc}", is_error=True)
        regex, _ = glob_to_regex(pattern)
        prefix = len(str(root).rstrip("/")) + 1
        files = [p for p in listed if regex.match(p[prefix:])]
        ordered = sorted(files, key=lambda p: (-_mtime(p), p))
        shown = ordered[:MAX_RESULTS]
        data = {"num_files": len(ordered), "truncated": len(ordered) > MAX_RESULTS, "filenames": shown}
        if not shown:
            return ToolResult("No files found", data=data)
        body = "\n".join(shown)
        if len(ordered) > MAX_RESULTS:
            body += (
                f"\n(Showing the {MAX_RESULTS} newest of {len(ordered)} matching files. "
                "Use a more specific pattern or path to see the rest.)"
            )
        return ToolResult(body, data=data)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
