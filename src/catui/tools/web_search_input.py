"""The input model of :mod:`catui.tools.web_search`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class WebSearchInput(ToolInput):
    query: str = Field(min_length=2, description="The search query.")
    allowed_domains: list[str] | None = Field(default=None, description="Only include results from these domains.")
    blocked_domains: list[str] | None = Field(default=None, description="Never include results from these domains.")
