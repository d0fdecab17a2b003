"""The input model of :mod:`catui.tools.edit`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class EditInput(ToolInput):
    file_path: str = Field(description="The absolute path of the file to change.")
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place (must differ from old_string).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )
