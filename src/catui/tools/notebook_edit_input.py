"""The input model of :mod:`catui.tools.notebook_edit`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput


class NotebookEditInput(ToolInput):
    notebook_path: str = Field(description="The absolute path of the notebook to change.")
    cell_id: str | None = Field(
        default=None,
        description="The id of the cell to change (or `cell-N`). With insert, the new cell goes after it; "
        "omitted, at the beginning.",
    )
    new_source: str = Field(description="The new source of the cell (ignored by delete).")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None, description="The cell's type. Required for insert; for replace it changes the type."
    )
    edit_mode: Literal["replace", "insert", "delete"] | None = Field(
        default=None, description="replace (default), insert or delete."
    )
