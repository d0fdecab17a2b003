"""Read: show a file with line numbers, an image as an image block, a PDF as a document block."""

from __future__ import annotations

import base64
import errno
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.bounded_read import (
    OpenedFile,
    UnreadableFile,
    open_regular,
    read_at_most,
    read_line_window,
    symlink_loop_message,
)
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

if TYPE_CHECKING:
    from catui.tools.read_input import ReadInput

DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 200_000
MAX_WHOLE_TEXT_BYTES = 16 * 1024 * 1024
"""A text file up to this size is read whole (its total line count is known); a larger one is streamed, and only
the lines asked for are held."""
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


class ReadTool(Tool):
    name = "Read"
    input_model_ref: ClassVar[str] = "catui.tools.read_input:ReadInput"
    read_only = True

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(self.name, args, args.file_path, ctx, is_edit=False, read_only=True)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.read_input import ReadInput
        assert isinstance(args, ReadInput)
        error = absolute_path_error(args.file_path, ctx)
        if error:
            return ToolResult(error, is_error=True)
        path = resolve_once(args, args.file_path, ctx)
        try:
            info = path.stat()
        except FileNotFoundError:
            return ToolResult(missing_file_error(path, ctx.cwd), is_error=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return ToolResult(symlink_loop_message(path), is_error=True)
            return ToolResult(f"Cannot read {path}: {exc.strerror or exc}.", is_error=True)
        if stat.S_ISDIR(info.st_mode):
            return ToolResult(
                f"{path} is a directory, not a file. List it with `ls` through the Bash tool, "
                "or find files in it with the Glob tool.",
                is_error=True,
            )
        reviewer = ctx.services.output_review
        if reviewer is not None:  # a background agent's output file: its deferred review lands in its last line
            await reviewer.review_file(path, ctx)
        try:
            # through the path the permission check saw, following no new link; a FIFO or a device is
            # refused here, before a byte is read
            opened = open_regular(path, follow_links=False)
        except FileNotFoundError:
            return ToolResult(missing_file_error(path, ctx.cwd), is_error=True)
        except UnreadableFile as exc:
            return ToolResult(str(exc), is_error=True)
        try:
            return self._read_opened(path, opened, args, ctx)
        except OSError as exc:
            return ToolResult(f"Cannot read {path}: {exc.strerror or exc}.", is_error=True)
        finally:
            opened.close()

    def _read_opened(self, path: Path, opened: OpenedFile, args: ReadInput, ctx: ToolContext) -> ToolResult:
        suffix = path.suffix.lower()
        limit = MAX_IMAGE_BYTES if suffix in IMAGE_TYPES else MAX_PDF_BYTES if suffix == ".pdf" else MAX_WHOLE_TEXT_BYTES
        if suffix in IMAGE_TYPES or suffix == ".pdf":
            if opened.size > limit:  # checked before reading: a 2 GB "image" costs a stat, not the memory
                return self._too_large(path, opened.size, suffix)
            data = read_at_most(opened, limit + 1)
            if suffix in IMAGE_TYPES:
                return self._image(path, data, IMAGE_TYPES[suffix], ctx)
            return self._pdf(path, data, args.pages, ctx)
        head = read_at_most(opened, limit + 1)
        if suffix in BINARY_SUFFIXES or looks_binary(head):
            return ToolResult(
                f"{path} is a binary file ({max(opened.size, len(head))} bytes); Read only shows text, images and "
                "PDFs. Inspect it with a suitable command through the Bash tool (e.g. `file`, `xxd | head`).",
                is_error=True,
            )
        if len(head) > limit:
            return self._large_text(path, opened, head, args, ctx)
        text = detect_encoding(head).decode(head)
        record_read(path, ctx)
        return self._text(path, text, args.offset, args.limit)

    def _large_text(self, path: Path, opened: OpenedFile, head: bytes, args: ReadInput,
                    ctx: ToolContext) -> ToolResult:
        """A text file over MAX_WHOLE_TEXT_BYTES: only the asked-for lines are read, as a stream."""
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            return ToolResult(
                f"{path} is a UTF-16 text file of {opened.size} bytes, too large to read whole; convert a part "
                "with `iconv` through the Bash tool.", is_error=True)
        start = max((args.offset or 1) - 1, 0)
        count = args.limit if args.limit is not None else DEFAULT_LINE_LIMIT
        window = read_line_window(opened, start, count, MAX_LINE_CHARS * 4)
        record_read(path, ctx)
        if not window.lines:
            return ToolResult(
                f"Note: offset {args.offset} is past the end of {path}, which has fewer lines. Use a smaller offset.",
                data={"file_path": str(path), "num_lines": 0, "total_lines": None},
            )
        # UTF-8 with U+FFFD for stray bytes, as the search tools read (a 4 KB sniff can cut a character).
        lines = [line.decode("utf-8", "replace") for line in window.lines]
        if start == 0:
            lines[0] = lines[0].removeprefix("\ufeff")
        cut = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "… [line truncated]"
               for line in lines]
        used = 0
        for kept, line in enumerate(cut):
            used += len(line) + 8
            if used > MAX_OUTPUT_CHARS:
                cut = cut[:kept]
                break
        body = number_lines(cut, start + 1)
        end = start + len(cut)
        if window.more or len(cut) < len(lines):
            body += (f"\n\n(Showing lines {start + 1}-{end} of a {opened.size}-byte file. To read further, call "
                     f"Read again with offset={end + 1} and a limit.)")
        return ToolResult(body, data={"file_path": str(path), "start_line": start + 1, "num_lines": len(cut),
                                      "total_lines": None, "bytes": opened.size})

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
            "content": "\n".join(shown),
        }
        return ToolResult(body, data=data)

    def _too_large(self, path: Path, size: int, suffix: str) -> ToolResult:
        if suffix == ".pdf":
            return ToolResult(
                f"{path} is a PDF of {size} bytes, over the {MAX_PDF_BYTES}-byte limit. "
                "Extract the pages you need first (e.g. `pdftotext -f N -l M` through the Bash tool).",
                is_error=True,
            )
        return ToolResult(
            f"{path} is an image of {size} bytes, over the {MAX_IMAGE_BYTES}-byte limit for images. "
            "Shrink it first (e.g. with ImageMagick through the Bash tool).",
            is_error=True,
        )

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
