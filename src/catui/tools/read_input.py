"""The input model of :mod:`catui.tools.read`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


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
