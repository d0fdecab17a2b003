"""The input model of :mod:`catui.tools.web_fetch`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class WebFetchInput(ToolInput):
    url: str = Field(description="The URL to fetch.", json_schema_extra={"format": "uri"})
    prompt: str = Field(description="What to look for in the fetched content.")
