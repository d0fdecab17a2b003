"""Read: show a file with line numbers, an image as an image block, a PDF as a document block."""

from __future__ import annotations

import base64
from typing import Any

from pydantic import Field

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult
from catui.tools.files import (
    absolute_path_error,
    detect_encoding,
    file_permission_request,
    looks_binary,
    missing_file_error,
    number_lines,
    record_read,
    resolve_once,
)
from catui.tools.nofollow import read_resolved

DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 200_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_PDF_BYTES = 20 * 1024 * 1024
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
BINARY_SUFFIXES = frozenset(
    [
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".war",
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".o",
        ".a",
        ".lib",
        ".class",
        ".pyc",
        ".pyo",
        ".bin",
        ".dat",
        ".db",
        ".sqlite",
        ".sqlite3",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".ico",
        ".bmp",
        ".tiff",
        ".psd",
        ".mp3",
        ".mp4",
        ".wav",
        ".ogg",
        ".flac",
        ".avi",
        ".mov",
        ".mkv",
        ".webm",
        ".doc",
        ".docx",
        ".xls",
        ".xlsx",
        ".ppt",
        ".pptx",
        ".wasm",
    ]
)

DESCRIPTION = """\
Read a file from the local filesystem and return its contents.

- file_path must be an absolute path.
- Text comes back numbered like `cat -n`: the line number, a tab, then the line. The numbers are not part \
of the file; leave them out of old_string when you edit.
- At most 2000 lines are returned per call, starting at the first line. For longer files pass offset (the \
line number to start from, 1-based) and limit (how many lines) to read the part you need; reading the \
whole file is usually best when it fits.
- Lines longer than 2000 characters are cut.
- Images (PNG, JPEG, GIF, WebP) are returned as images you can see; PDFs are returned as documents.
- It reads files only. For a folder, list it with `ls` through the Bash tool or find files with Glob.
- Read a file before you change it with Edit or Write; those tools refuse files you have not read.
- Several independent reads can be issued in one message; they run in parallel."""


class ReadInput(ToolInput):
    file_path: str = Field(description="The absolute path of the file to read.")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based). Use it for large files.",
    )
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to read. Use it with offset for large files."
    )
    pages: str | None = Field(
        default=None,
        description='Page range of a PDF file, e.g. "1-5", "3" or "10-20". Only meaningful for PDFs.',
    )


class ReadTool(Tool):
    name = "Read"
    input_model = ReadInput
    read_only = True

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(self.name, args, args.file_path, ctx, is_edit=False, read_only=True)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        assert isinstance(args, ReadInput)
        error = absolute_path_error(args.file_path, ctx)
        if error:
            return ToolResult(error, is_error=True)
        path = resolve_once(args, args.file_path, ctx)
        if path.is_dir():
            return ToolResult(
                f"{path} is a directory, not a file. List it with `ls` through the Bash tool, "
                "or find files in it with the Glob tool.",
                is_error=True,
            )
        if not path.exists():
            return ToolResult(missing_file_error(path, ctx.cwd), is_error=True)
        reviewer = ctx.services.output_review
        if reviewer is not None:  # a background agent's output file: its deferred review lands in its last line
            await reviewer.review_file(path, ctx)
        try:
            data = read_resolved(path)  # through the path the permission check saw, following no new link
        except OSError as exc:
            return ToolResult(f"Cannot read {path}: {exc.strerror or exc}.", is_error=True)
        suffix = path.suffix.lower()
        if suffix in IMAGE_TYPES:
            return self._image(path, data, IMAGE_TYPES[suffix], ctx)
        if suffix == ".pdf":
            return self._pdf(path, data, args.pages, ctx)
        if suffix in BINARY_SUFFIXES or looks_binary(data):
            return ToolResult(
                f"{path} is a binary file ({len(data)} bytes); Read only shows text, images and PDFs. "
                "Inspect it with a suitable command through the Bash tool (e.g. `file`, `xxd | head`).",
                is_error=True,
            )
        text = detect_encoding(data).decode(data)
        record_read(path, ctx)
        return self._text(path, text, args.offset, args.limit)

    def _text(self, path: Any, text: str, offset: int | None, limit: int | None) -> ToolResult:
        lines = text.splitlines()
        total = len(lines)
        if total == 0:
            note = "Note: the file exists but is empty."
            return ToolResult(note, data={"file_path": str(path), "num_lines": 0, "total_lines": 0})
        start = max((offset or 1) - 1, 0)
        if start >= total:
            return ToolResult(
                f"Note: the file has only {total} lines, so offset {offset} is past its end. "
                f"Use an offset between 1 and {total}.",
                data={"file_path": str(path), "num_lines": 0, "total_lines": total},
            )
        count = limit if limit is not None else DEFAULT_LINE_LIMIT
        shown = lines[start : start + count]
        cut = [
            line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "… [line truncated]"
            for line in shown
        ]
        # Even within the line cap, wide files can be huge; stop at a line boundary under the char budget.
        used = 0
        for kept, line in enumerate(cut):
            used += len(line) + 8
            if used > MAX_OUTPUT_CHARS:
                cut, shown = cut[:kept], shown[:kept]
                break
        body = number_lines(cut, start + 1)
        end = start + len(shown)
        if end < total:
            body += (
                f"\n\n(Showing lines {start + 1}-{end} of {total}. To read further, call Read again with "
                f"offset={end + 1} and a limit.)"
            )
        data = {
            "file_path": str(path),
            "start_line": start + 1,
            "num_lines": len(shown),
            "total_lines": total,
        }
        return ToolResult(body, data=data)

    def _image(self, path: Any, data: bytes, media_type: str, ctx: ToolContext) -> ToolResult:
        if len(data) > MAX_IMAGE_BYTES:
            return ToolResult(
                f"{path} is an image of {len(data)} bytes, over the {MAX_IMAGE_BYTES}-byte limit for images. "
                "Shrink it first (e.g. with ImageMagick through the Bash tool).",
                is_error=True,
            )
        record_read(path, ctx)
        encoded = base64.b64encode(data).decode("ascii")
        block = {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}
        return ToolResult([block], data={"file_path": str(path), "type": "image", "bytes": len(data)})

    def _pdf(self, path: Any, data: bytes, pages: str | None, ctx: ToolContext) -> ToolResult:
        if len(data) > MAX_PDF_BYTES:
            return ToolResult(
                f"{path} is a PDF of {len(data)} bytes, over the {MAX_PDF_BYTES}-byte limit. "
                "Extract the pages you need first (e.g. `pdftotext -f N -l M` through the Bash tool).",
                is_error=True,
            )
        record_read(path, ctx)
        encoded = base64.b64encode(data).decode("ascii")
        blocks: list[dict[str, Any]] = [
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
            }
        ]
        if pages:
            blocks.append(
                {
                    "type": "text",
                    "text": f"Note: catui sends the whole PDF; look at pages {pages} of it.",
                }
            )
        return ToolResult(blocks, data={"file_path": str(path), "type": "pdf", "bytes": len(data)})
