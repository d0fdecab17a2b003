"""MCP tools as catui tools: ``mcp__<server>__<tool>``, the server's schema as is, results as content blocks.

The input schema goes to the model exactly as the server wrote it; catui only
checks that the required properties are present (the server validates the
rest and answers with an error result when something is off). A tool's
``readOnlyHint`` annotation makes its calls run concurrently with other
read-only calls and lets it run in plan mode, but outside plan mode it never
approves a call by itself: MCP calls go through the permission rules (allow
with ``mcp__server``, ``mcp__server__*`` or ``mcp__server__tool``).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field, create_model

from catui.mcp.config import normalize_name
from catui.mcp.connection import McpCallError
from catui.messages import Block
from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult

if TYPE_CHECKING:
    from catui.mcp.connection import McpConnection

MAX_DESCRIPTION_CHARS = 2048
"""Longer server-written descriptions are cut (Claude Code's limit too): some servers ship whole manuals."""
DEFAULT_MAX_OUTPUT_TOKENS = 25_000
"""A result larger than this (about four characters a token) is cut; ``MAX_MCP_OUTPUT_TOKENS`` changes it."""
MAX_TOOL_NAME_CHARS = 64
"""The model API refuses longer tool names, and one bad name would fail every request of the session."""


class McpToolInput(ToolInput):
    """Arguments of an MCP tool: any JSON object; the properties the schema requires must be there."""

    model_config = ConfigDict(extra="allow", populate_by_name=False)

    def arguments(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with both parts normalised as Claude Code does."""
    return f"mcp__{normalize_name(server)}__{normalize_name(tool)}"


def input_model_for(schema: dict[str, Any]) -> type[McpToolInput]:
    """A model that accepts any object holding the schema's required properties (by their exact names)."""
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    fields: dict[str, Any] = {}
    for index, prop in enumerate(dict.fromkeys(r for r in required if isinstance(r, str))):
        # Field names must be identifiers; the real property name is the alias.
        fields[f"required_property_{index}_"] = (Any, Field(alias=prop))
    model: type[McpToolInput] = create_model("McpArguments", __base__=McpToolInput, **fields)
    return model


class McpTool(Tool):
    """One tool of one connected MCP server. Built by :func:`make_mcp_tool`; each has its own subclass."""

    name: ClassVar[str] = ""
    input_model: ClassVar[type[ToolInput]] = McpToolInput
    server_name: ClassVar[str] = ""
    tool_name: ClassVar[str] = ""

    def __init__(self, connection: McpConnection, description: str, schema: dict[str, Any]) -> None:
        self.connection = connection
        self._description = description
        self._schema = schema

    @property
    def description(self) -> str:
        return self._description

    def input_schema(self) -> dict[str, Any]:
        return self._schema

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # A server's own readOnlyHint must not approve its calls; only in plan mode, where read-only calls are
        # the point, does it count, so that research in plan mode can use the server's read-only tools.
        read_only = self.read_only and ctx.permissions.mode == "plan"
        return PermissionRequest(tool_name=self.name, tool_input=_arguments(args), read_only=read_only)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.connection.call_tool(
                self.tool_name, _arguments(args), abort=ctx.abort, timeout_s=_tool_timeout_s()
            )
        except McpCallError as exc:
            return ToolResult(str(exc), is_error=True)
        return convert_result(self.server_name, result)

    def __repr__(self) -> str:
        return f"McpTool(name={self.name!r}, read_only={self.read_only})"


def make_mcp_tool(connection: McpConnection, server_tool: Any) -> McpTool:
    """The catui tool for one entry of the server's tools/list answer."""
    name = mcp_tool_name(connection.name, server_tool.name)
    schema = server_tool.input_schema if isinstance(server_tool.input_schema, dict) else {}
    schema = schema or {"type": "object", "properties": {}}
    annotations = getattr(server_tool, "annotations", None)
    read_only = bool(getattr(annotations, "read_only_hint", False))
    description = (server_tool.description or server_tool.title or "").strip()
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[:MAX_DESCRIPTION_CHARS] + "… [description truncated]"
    cls = type(
        f"McpTool[{name}]",
        (McpTool,),
        {
            "name": name,
            "input_model": input_model_for(schema),
            "read_only": read_only,
            "server_name": connection.name,
            "tool_name": server_tool.name,
            "__module__": __name__,
        },
    )
    tool: McpTool = cls(connection, description, schema)
    return tool


def _arguments(args: Any) -> dict[str, Any]:
    if isinstance(args, McpToolInput):
        return args.arguments()
    return dict(args.model_dump(by_alias=True)) if hasattr(args, "model_dump") else dict(args)


def _tool_timeout_s() -> float | None:
    raw = os.environ.get("MCP_TOOL_TIMEOUT", "").strip()
    try:
        return int(raw) / 1000 if raw else None
    except ValueError:
        return None


def _max_output_chars() -> int:
    raw = os.environ.get("MAX_MCP_OUTPUT_TOKENS", "").strip()
    try:
        tokens = int(raw) if raw else DEFAULT_MAX_OUTPUT_TOKENS
    except ValueError:
        tokens = DEFAULT_MAX_OUTPUT_TOKENS
    return max(tokens, 1) * 4


def convert_result(server: str, result: Any) -> ToolResult:
    """An SDK CallToolResult as a tool_result: text and image blocks, ``isError`` kept."""
    blocks: list[Block] = []
    for item in getattr(result, "content", None) or []:
        block = _convert_content(server, item)
        if block is not None:
            blocks.append(block)
    structured = getattr(result, "structured_content", None)
    if not blocks and structured is not None:
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    blocks = _limit_size(blocks)
    is_error = bool(getattr(result, "is_error", False))
    data: dict[str, Any] = {"content": blocks}
    if structured is not None:
        data["structuredContent"] = structured
    if not blocks:
        return ToolResult("(no content)" if not is_error else "The tool failed without saying why.", is_error, data)
    if all(b.get("type") == "text" for b in blocks):
        return ToolResult("\n".join(str(b.get("text", "")) for b in blocks), is_error, data)
    return ToolResult(blocks, is_error, data)


def _convert_content(server: str, item: Any) -> Block | None:
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": item.text}
    if kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": item.mime_type, "data": item.data}}
    if kind == "resource":
        resource = item.resource
        prefix = f"[Resource from {server} at {resource.uri}] "
        text = getattr(resource, "text", None)
        if text is not None:
            return {"type": "text", "text": prefix + text}
        mime = getattr(resource, "mime_type", None) or "application/octet-stream"
        blob = getattr(resource, "blob", None)
        if blob and mime.startswith("image/"):
            return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": blob}}
        return {"type": "text", "text": f"{prefix}(binary content, {mime}, not shown)"}
    if kind == "resource_link":
        text = f"[Resource link: {item.name}] {item.uri}"
        if getattr(item, "description", None):
            text += f" ({item.description})"
        return {"type": "text", "text": text}
    if kind == "audio":
        return {"type": "text", "text": f"(audio content, {getattr(item, 'mime_type', 'audio')}, not shown)"}
    return None


def _limit_size(blocks: list[Block]) -> list[Block]:
    limit = _max_output_chars()
    total = sum(len(str(b.get("text", ""))) for b in blocks if b.get("type") == "text")
    if total <= limit:
        return blocks
    out: list[Block] = []
    left = limit
    for block in blocks:
        if block.get("type") != "text":
            out.append(block)
            continue
        text = str(block.get("text", ""))
        if left <= 0:
            continue
        out.append({"type": "text", "text": text[:left]})
        left -= len(text)
    out.append({
        "type": "text",
        "text": f"[MCP output truncated: {total} characters, more than the limit of about {limit // 4} tokens. "
        "Ask the tool for less (a narrower query, a page), or raise MAX_MCP_OUTPUT_TOKENS.]",
    })
    return out
