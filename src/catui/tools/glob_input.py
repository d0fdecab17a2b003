"""The input model of :mod:`catui.tools.glob`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class GlobInput(ToolInput):
    pattern: str = Field(description="The glob pattern to match files against.")
    path: str | None = Field(
        default=None,
        description="The folder to search in. Omit it to search the current working directory; "
        "must be an existing folder when given.",
    )
