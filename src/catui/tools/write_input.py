"""The input model of :mod:`catui.tools.write`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class WriteInput(ToolInput):
    file_path: str = Field(description="The absolute path of the file to write.")
    content: str = Field(description="The complete new content of the file.")
