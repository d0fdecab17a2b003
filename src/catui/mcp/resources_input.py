"""The input models of :mod:`catui.mcp.resources`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class ListMcpResourcesInput(ToolInput):
    server: str | None = Field(default=None, description="Only list the resources of this MCP server.")


class ReadMcpResourceInput(ToolInput):
    server: str = Field(description="The name of the MCP server holding the resource.")
    uri: str = Field(description="The URI of the resource to read.")
