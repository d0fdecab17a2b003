"""Grep: search file contents with ripgrep semantics (the ``rg`` binary, or its Python twin)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.files import file_permission_request, resolve_path

if TYPE_CHECKING:
    from catui.tools.search_engine import FileHits, GrepQuery

MAX_LINE_CHARS = 500
DEFAULT_HEAD_LIMIT = 250  # as Claude Code: an unset head_limit still caps the result; 0 lifts the cap
MAX_OUTPUT_CHARS = 20000

DESCRIPTION = """\
Search file contents with regular expressions, built on ripgrep.

- Use this tool for content searches instead of running grep or rg through Bash.
- pattern is a ripgrep (Rust) regular expression: `log.*Error`, `fn\\s+\\w+`. Escape literal braces \
(`interface\\{\\}` to find `interface{}`).
- Narrow the search with path (a folder or file; default: the current directory), glob (e.g. `*.py`, \
`*.{ts,tsx}`) or type (a ripgrep file type such as py, js, rust, go — faster than glob for standard types).
- output_mode: "files_with_matches" (default) lists matching files, newest first; "content" shows the \
matching lines (with -n line numbers, on by default, and -A/-B/-C context lines); "count" gives matches per file.
- head_limit keeps the first N lines or entries (250 unless given; 0 for all) and offset skips N first, for \
paging through large results.
- Patterns match within one line unless multiline is true, which lets `.` match newlines and patterns span lines.
- Hidden files are searched (version-control folders such as .git are not); files ignored by .gitignore \
are skipped.
- For open-ended searches that need several rounds of searching, delegate to an agent with the Agent tool."""


def split_globs(value: str) -> list[str]:
    """Split a glob argument on whitespace and on commas outside braces: ``"*.py, *.{ts,tsx}"`` → 2 globs."""
    globs: list[str] = []
    for word in value.split():
        depth = 0
        current = ""
        for ch in word:
            if ch == "{":
                depth += 1
            elif ch == "}" and depth:
                depth -= 1
            if ch == "," and depth == 0:
                if current:
                    globs.append(current)
                current = ""
                continue
            current += ch
        if current:
            globs.append(current)
    return globs


class GrepTool(Tool):
    name = "Grep"
    input_model_ref: ClassVar[str] = "catui.tools.grep_input:GrepInput"
    read_only = True

    def __init__(self, *, force_fallback: bool = False) -> None:
        self.force_fallback = force_fallback

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(
            self.name, args, args.path or str(ctx.cwd), ctx, is_edit=False, read_only=True
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.grep_input import GrepInput
        assert isinstance(args, GrepInput)
        # lazy (catui.lazy): the file walker, ignore rules and rg loader, with the first search
        from catui.tools.search_engine import (
            GrepQuery,
            SearchError,
            find_rg,
            python_search_in_child,
            rg_search,
        )
        from catui.tools.search_process import MAX_OUTPUT_BYTES, search_timeout

        root = resolve_path(args.path, ctx) if args.path else ctx.cwd
        if not root.exists():
            return ToolResult(f"Path does not exist: {root}. Give an existing file or folder.", is_error=True)
        mode = args.output_mode or "files_with_matches"
        context = args.context if args.context is not None else (args.context_flag or 0)
        query = GrepQuery(
            pattern=args.pattern,
            root=Path(root).absolute(),
            mode=mode,
            globs=tuple(split_globs(args.glob)) if args.glob else (),
            file_type=args.type,
            ignore_case=bool(args.case_insensitive),
            multiline=bool(args.multiline),
            before=args.before if args.before is not None else context,
            after=args.after if args.after is not None else context,
            hidden=True,  # as Claude Code's Grep: hidden files are searched, version-control folders are not
        )
        rg = None if self.force_fallback else find_rg()
        timeout_s = search_timeout(ctx.services.env)
        try:
            found = (await rg_search(rg, query, ctx.abort, timeout_s) if rg
                     else await python_search_in_child(query, ctx.abort, timeout_s))
        except SearchError as exc:
            return ToolResult(f"Grep failed: {exc}", is_error=True)
        show_numbers = args.line_numbers if args.line_numbers is not None else True
        result = format_result(found.hits, query, show_numbers, args.head_limit, args.offset or 0)
        if found.cut and isinstance(result.content, str):
            result.content += (f"\n\n[The search matched more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MB; only the "
                               "first part was read. Narrow the pattern, path or glob.]")
            if isinstance(result.data, dict):
                result.data["cut"] = True
        return result


def format_result(
    hits: list[FileHits], query: GrepQuery, line_numbers: bool, head_limit: int | None, offset: int
) -> ToolResult:
    """Render hits the way the model sees them, after offset/head_limit paging."""
    if query.mode == "files_with_matches":
        entries = [h.path for h in hits]
    elif query.mode == "count":
        entries = [f"{h.path}:{h.count}" for h in hits]
    else:
        entries = _content_lines(hits, line_numbers, query.before > 0 or query.after > 0)
    total = len(entries)
    page = entries[offset:]
    head_limit = DEFAULT_HEAD_LIMIT if head_limit is None else head_limit
    limited = bool(head_limit) and len(page) > head_limit
    if head_limit:
        page = page[:head_limit]
    data: dict[str, Any] = {
        "mode": query.mode,
        "num_files": len(hits),
        "num_entries": total,
        "shown": len(page),
    }

    if query.mode == "files_with_matches":
        data["filenames"] = list(page)
        if not page:
            return ToolResult("No files found", data=data)
        noun = "file" if total == 1 else "files"
        body = f"Found {total} {noun}\n" + "\n".join(page)
    elif query.mode == "count":
        if not page:
            return ToolResult("No matches found", data=data)
        occurrences = sum(h.count for h in hits)
        body = "\n".join(page) + (
            f"\n\nFound {occurrences} total {'occurrence' if occurrences == 1 else 'occurrences'} "
            f"across {len(hits)} {'file' if len(hits) == 1 else 'files'}."
        )
    else:
        if not page:
            return ToolResult("No matches found", data=data)
        body = "\n".join(page)
    if limited or offset:
        body += f"\n\n[Showing entries {offset + 1}-{offset + len(page)} of {total} (offset={offset}, head_limit={head_limit}).]"
    if len(body) > MAX_OUTPUT_CHARS:
        body = body[:MAX_OUTPUT_CHARS] + (
            f"\n\n[Output cut at {MAX_OUTPUT_CHARS} characters. Narrow the search, or page with head_limit and offset.]"
        )
    return ToolResult(body, data=data)


def _content_lines(hits: list[FileHits], line_numbers: bool, with_context: bool) -> list[str]:
    out: list[str] = []
    for index, hit in enumerate(hits):
        if with_context and index > 0:
            out.append("--")
        for item in hit.lines:
            if item is None:
                out.append("--")
                continue
            number, is_match, text = item
            sep = ":" if is_match else "-"
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + " [… line truncated]"
            out.append(f"{hit.path}{sep}{number}{sep}{text}" if line_numbers else f"{hit.path}{sep}{text}")
    return out
