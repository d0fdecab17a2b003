"""Edit: replace an exact string in a file, keeping its line endings and encoding."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.files import (
    UTF8,
    absolute_path_error,
    file_permission_request,
    freshness_error,
    line_ending_of,
    missing_file_error,
    number_lines,
    read_text,
    record_read,
    resolve_once,
    write_encoded_text,
)
from catui.tools.nofollow import write_resolved
from catui.tools.protected_config import isolated_config_refusal

SNIPPET_CONTEXT_LINES = 4
MAX_EDITED_FILE_CHARS = 256 * 1024 * 1024
"""The largest file Edit reads, and the largest result it builds (in characters)."""

DESCRIPTION = """\
Replace an exact string in a file.

- Read the file with the Read tool first; the edit is refused for a file you have not read or that changed \
on disk since you read it.
- old_string must match the file exactly, including indentation. Copy it from the Read output without the \
line-number prefix (everything after the tab).
- old_string must occur exactly once, or the edit is refused and the number of matches is reported: add \
surrounding lines to make it unique, or set replace_all to change every occurrence (handy for renames).
- new_string must differ from old_string.
- Line endings (LF or CRLF) and the file's encoding are kept as they were.
- An empty old_string creates a new file with new_string as its content."""


class EditTool(Tool):
    name = "Edit"
    input_model_ref: ClassVar[str] = "catui.tools.edit_input:EditInput"

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(self.name, args, args.file_path, ctx, is_edit=True, read_only=False)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.edit_input import EditInput
        assert isinstance(args, EditInput)
        error = absolute_path_error(args.file_path, ctx)
        if error:
            return ToolResult(error, is_error=True)
        if args.old_string == args.new_string:
            return ToolResult(
                "old_string and new_string are identical, so there is nothing to change.", is_error=True
            )
        path = resolve_once(args, args.file_path, ctx)
        if path.is_dir():
            return ToolResult(f"{path} is a directory; Edit changes files.", is_error=True)
        refusal = isolated_config_refusal(path, ctx, verb="edit")
        if refusal:
            return ToolResult(refusal, is_error=True)
        if not path.exists():
            if args.old_string == "":
                return self._create(path, args.new_string, ctx)
            return ToolResult(missing_file_error(path, ctx.cwd), is_error=True)
        error = freshness_error(path, ctx, verb="edit")
        if error:
            return ToolResult(error, is_error=True)
        try:
            size = path.stat().st_size
            if size > MAX_EDITED_FILE_CHARS:
                return ToolResult(
                    f"{path} is {size} bytes, over the {MAX_EDITED_FILE_CHARS}-byte limit for Edit; change it "
                    "with a streaming command through the Bash tool (e.g. `sed -i`).", is_error=True)
            original, encoding = read_text(path)
        except OSError as exc:
            return ToolResult(f"Cannot read {path}: {exc.strerror or exc}.", is_error=True)

        eol = line_ending_of(original)
        text, old, new = original, args.old_string, args.new_string
        if eol == "\r\n":
            # Match on LF-normalised text so that a model's "\n" strings work on CRLF files too.
            text, old, new = (s.replace("\r\n", "\n") for s in (original, old, new))
        elif eol == "mixed" and old not in text and "\n" in old:
            # Mixed endings are left as they are; retry the strings with CRLF breaks.
            crlf_old = old.replace("\r\n", "\n").replace("\n", "\r\n")
            if crlf_old in text:
                old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")

        if old == "":
            if text.strip():
                return ToolResult(
                    f"old_string is empty, which only creates files or fills empty ones, but {path} has content. "
                    "Give the exact text to replace.",
                    is_error=True,
                )
            updated = new
        else:
            matches = text.count(old)
            if matches == 0:
                return ToolResult(
                    f"old_string was not found in {path}. It must match the file exactly, including "
                    "whitespace and indentation; Read the file again and copy the text from it.",
                    is_error=True,
                )
            if matches > 1 and not args.replace_all:
                return ToolResult(
                    f"old_string occurs {matches} times in {path}. Add surrounding lines to old_string so that "
                    "it matches exactly once, or set replace_all to true to replace all of them.",
                    is_error=True,
                )
            grown = len(text) + (matches if args.replace_all else 1) * (len(new) - len(old))
            if grown > MAX_EDITED_FILE_CHARS:
                # Checked before replacing: the result is never built (a short old_string and a long
                # new_string with replace_all can ask for gigabytes).
                return ToolResult(
                    f"Replacing {matches if args.replace_all else 1} occurrence(s) would make {path} {grown} "
                    f"characters long, over the {MAX_EDITED_FILE_CHARS}-character limit for Edit. Replace fewer "
                    "occurrences at a time, or use a streaming command through the Bash tool.", is_error=True)
            updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        first_change = text.find(old) if old else 0

        final = updated.replace("\n", "\r\n") if eol == "\r\n" else updated
        error = write_encoded_text(path, final, encoding, content_name="new_string")
        if error:
            return ToolResult(error, is_error=True)
        record_read(path, ctx)
        snippet = _snippet(updated, first_change, new)
        replaced = text.count(old) if (args.replace_all and old) else 1
        data = {
            "file_path": str(path),
            "replacements": replaced,
            "encoding": encoding.codec,
            "line_ending": eol,
            "original_file": text,
            "updated_file": updated,
        }
        return ToolResult(
            f"The file {path} has been updated. A snippet of the result (`cat -n` style):\n{snippet}",
            data=data,
        )

    def _create(self, path: Any, content: str, ctx: ToolContext) -> ToolResult:
        try:
            write_resolved(path, UTF8.encode(content), make_parents=True)
        except OSError as exc:
            return ToolResult(f"Cannot create {path}: {exc.strerror or exc}.", is_error=True)
        record_read(path, ctx)
        return ToolResult(
            f"File created successfully at: {path}", data={"file_path": str(path), "type": "create"}
        )


def _snippet(text: str, change_offset: int, new: str) -> str:
    """The changed lines with a few lines of context around them, numbered."""
    lines = text.split("\n")
    first = text.count("\n", 0, max(change_offset, 0))
    last = first + new.count("\n")
    start = max(first - SNIPPET_CONTEXT_LINES, 0)
    end = min(last + SNIPPET_CONTEXT_LINES + 1, len(lines))
    return number_lines(lines[start:end], start + 1)
