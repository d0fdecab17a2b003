"""The input model of :mod:`catui.tools.tool_search`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class ToolSearchInput(ToolInput):
    query: str = Field(description='"select:Name1,Name2" to load tools by name, or words to search their names '
                                   "and descriptions")
    max_results: float = Field(default=5, description="How many tools a word search loads at most")
