"""Write: create a file or replace one that was read first."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.files import (
    UTF8,
    absolute_path_error,
    detect_encoding,
    file_permission_request,
    freshness_error,
    record_read,
    resolve_once,
    write_encoded_text,
)
from catui.tools.nofollow import read_resolved
from catui.tools.protected_config import isolated_config_refusal

DESCRIPTION = """\
Write a file to the local filesystem, replacing it completely if it exists.

- file_path must be an absolute path; missing parent folders are created.
- An existing file must have been read with the Read tool first, and must not have changed since; otherwise \
the write is refused.
- Prefer Edit for changing part of an existing file: it sends only the change.
- Create new files only when the task needs them; do not write documentation or README files unless asked."""


class WriteTool(Tool):
    name = "Write"
    input_model_ref: ClassVar[str] = "catui.tools.write_input:WriteInput"

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(self.name, args, args.file_path, ctx, is_edit=True, read_only=False)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.write_input import WriteInput
        assert isinstance(args, WriteInput)
        error = absolute_path_error(args.file_path, ctx)
        if error:
            return ToolResult(error, is_error=True)
        path = resolve_once(args, args.file_path, ctx)
        if path.is_dir():
            return ToolResult(f"{path} is a directory; give the path of a file inside it.", is_error=True)
        refusal = isolated_config_refusal(path, ctx, verb="write")
        if refusal:
            return ToolResult(refusal, is_error=True)
        existed = path.exists()
        encoding = UTF8
        if existed:
            error = freshness_error(path, ctx, verb="overwrite")
            if error:
                return ToolResult(error, is_error=True)
            try:
                encoding = detect_encoding(read_resolved(path))
            except OSError:
                encoding = UTF8
        error = write_encoded_text(
            path, args.content, encoding, content_name="The content", make_parents=True
        )
        if error:
            return ToolResult(error, is_error=True)
        record_read(path, ctx)
        lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
        data = {"type": "update" if existed else "create", "file_path": str(path), "lines": lines}
        if existed:
            return ToolResult(f"The file {path} has been overwritten ({lines} lines).", data=data)
        return ToolResult(f"File created successfully at: {path} ({lines} lines).", data=data)
