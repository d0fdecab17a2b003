"""ListMcpResourcesTool / ReadMcpResourceTool: the MCP servers' resources, through their open connections.

Claude Code offers both tools whenever MCP servers are configured; catui adds
them to the main session's built-in tools when the MCP manager is ready (see
:mod:`catui.mcp.install`). Both only read, so they run concurrently and in
plan mode. Results are JSON text: the listing is an array of resources, each
with the server it came from; a read returns the server's ``contents``, with
binary contents summarised (the model cannot use base64 blobs).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, ClassVar

from catui.mcp.connection import McpCallError
from catui.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from catui.mcp.connection import McpConnection
    from catui.mcp.manager import McpManager
    from catui.mcp.resources_input import ListMcpResourcesInput, ReadMcpResourceInput


class _ResourceTool(Tool):
    """What both resource tools share: the session's MCP servers, given at construction."""

    def __init__(self, manager: McpManager | None) -> None:
        self.manager = manager


def _find_server(manager: McpManager | None, server: str, tool: str) -> McpConnection | str:
    """The connection called ``server``, or the error text naming the servers there are."""
    connections = manager.connections if manager is not None else {}
    connection = connections.get(server)
    if connection is None:
        known = ", ".join(connections) or "none configured"
        return f'{tool}: no MCP server named "{server}"; the servers are: {known}'
    return connection


class ListMcpResourcesTool(_ResourceTool):
    """List the resources the connected MCP servers offer."""

    name = "ListMcpResourcesTool"
    input_model_ref: ClassVar[str] = "catui.mcp.resources_input:ListMcpResourcesInput"
    read_only = True

    @property
    def description(self) -> str:
        return (
            "List the resources (files, records, documents…) that the connected MCP servers offer, with the server "
            "and URI of each; read one with ReadMcpResourceTool. Pass server to list only that server's resources."
        )

    async def call(self, args: ListMcpResourcesInput, ctx: ToolContext) -> ToolResult:
        manager = self.manager
        if args.server is not None:
            found = _find_server(manager, args.server, self.name)
            if isinstance(found, str):
                return ToolResult(found, is_error=True)
            connections = [found]
        else:
            connections = [c for c in (manager.connections.values() if manager else ()) if c.status == "connected"]
        listed: list[dict[str, Any]] = []
        for connection in connections:
            try:
                resources = await connection.list_resources()
            except McpCallError as exc:
                if args.server is not None:
                    return ToolResult(f"{self.name}: {exc}", is_error=True)
                continue  # one failing server must not hide the others' resources
            for resource in resources:
                entry: dict[str, Any] = {"uri": str(resource.uri), "name": resource.name}
                if resource.mime_type:
                    entry["mimeType"] = resource.mime_type
                if resource.description:
                    entry["description"] = resource.description
                entry["server"] = connection.name
                listed.append(entry)
        if not listed:
            return ToolResult(
                "No MCP resources found (servers may still offer tools without offering resources).", data=[]
            )
        return ToolResult(json.dumps(listed, ensure_ascii=False), data=listed)


class ReadMcpResourceTool(_ResourceTool):
    """Read one resource of an MCP server by its URI."""

    name = "ReadMcpResourceTool"
    input_model_ref: ClassVar[str] = "catui.mcp.resources_input:ReadMcpResourceInput"
    read_only = True

    @property
    def description(self) -> str:
        return (
            "Read a resource of an MCP server, given the server's name and the resource's URI "
            "(ListMcpResourcesTool lists them)."
        )

    async def call(self, args: ReadMcpResourceInput, ctx: ToolContext) -> ToolResult:
        found = _find_server(self.manager, args.server, self.name)
        if isinstance(found, str):
            return ToolResult(found, is_error=True)
        try:
            result = await found.read_resource(args.uri)
        except McpCallError as exc:
            return ToolResult(f"{self.name}: {exc}", is_error=True)
        contents = [_content_entry(item) for item in getattr(result, "contents", None) or []]
        data = {"contents": contents}
        return ToolResult(json.dumps(data, ensure_ascii=False), data=data)


def _content_entry(item: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": str(item.uri)}
    if item.mime_type:
        entry["mimeType"] = item.mime_type
    text = getattr(item, "text", None)
    if isinstance(text, str):
        entry["text"] = text
        return entry
    blob = getattr(item, "blob", None)
    if isinstance(blob, str):
        try:
            size = len(base64.b64decode(blob, validate=False))
        except (binascii.Error, ValueError):
            size = len(blob)
        entry["text"] = f"[binary content, {size} bytes, not shown]"
    return entry


def resource_tools(manager: McpManager) -> list[Tool]:
    """Fresh instances of both resource tools, reading ``manager``'s servers."""
    return [ListMcpResourcesTool(manager), ReadMcpResourceTool(manager)]
