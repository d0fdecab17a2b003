"""@tool: schemas in every accepted form, argument validation, results, and SDK MCP server naming."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel, ValidationError

from catui.errors import ConfigurationError
from catui.sdk.tools import create_sdk_mcp_server, tool, tool_result_from_handler
from catui.session.session import format_validation_error
from catui.tools.base import ToolContext


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


async def test_dict_of_types_makes_required_typed_arguments(tmp_path: Path) -> None:
    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    schema = add.to_api()["input_schema"]
    assert schema["properties"] == {"a": {"type": "number"}, "b": {"type": "number"}}
    assert schema["required"] == ["a", "b"]
    args = add.input_model.model_validate({"a": 1, "b": 2.5})
    result = await add.call(args, _ctx(tmp_path))
    assert result.content == [{"type": "text", "text": "3.5"}] and not result.is_error
    with pytest.raises(ValidationError) as caught:
        add.input_model.model_validate({"a": 1})
    assert "The required parameter `b` is missing" in format_validation_error("add", caught.value)


async def test_json_schema_is_sent_as_given_and_handler_gets_only_given_arguments(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "class": {"type": "string"}},
        "required": ["query"],
    }
    seen: list[dict[str, Any]] = []

    @tool("search_notes", "Search notes", schema)
    async def search(args: dict[str, Any]) -> str:
        seen.append(args)
        return "found 1"

    assert search.to_api()["input_schema"] == schema
    args = search.input_model.model_validate({"query": "cats", "class": "x"})
    result = await search.call(args, _ctx(tmp_path))
    assert result.content == "found 1"
    assert seen == [{"query": "cats", "class": "x"}]
    with pytest.raises(ValidationError):
        search.input_model.model_validate({"query": "cats", "limit": "many"})


async def test_typeddict_and_pydantic_models_are_accepted(tmp_path: Path) -> None:
    class Move(TypedDict):
        source: str
        target: str

    class Page(BaseModel):
        path: str
        limit: int = 10

    @tool("move", "Move", Move, annotations={"readOnlyHint": False})
    async def move(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{args['source']}->{args['target']}"}]}

    @tool("page", "Page", Page, read_only=True)
    async def page(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{args['path']}:{args['limit']}"}]}

    assert move.to_api()["input_schema"]["required"] == ["source", "target"]
    assert not move.read_only and page.read_only
    assert page.is_concurrency_safe(page.input_model.model_validate({"path": "a"}))
    result = await page.call(page.input_model.model_validate({"path": "a"}), _ctx(tmp_path))
    assert result.content == [{"type": "text", "text": "a:10"}]


async def test_a_failing_handler_becomes_an_error_result(tmp_path: Path) -> None:
    @tool("boom", "Fails", {})
    async def boom(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    result = await boom.call(boom.input_model.model_validate({}), _ctx(tmp_path))
    assert result.is_error and "disk on fire" in str(result.content)


def test_results_in_mcp_shape_become_api_blocks() -> None:
    image = tool_result_from_handler("x", {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}]})
    assert image.content == [{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}}]
    failed = tool_result_from_handler("x", {"content": [{"type": "text", "text": "no"}], "is_error": True})
    assert failed.is_error
    empty = tool_result_from_handler("x", None)
    assert empty.content == "x completed with no output" and not empty.is_error
    wrong = tool_result_from_handler("x", 42)
    assert wrong.is_error and "must return" in str(wrong.content)
    odd = tool_result_from_handler("x", {"content": [{"type": "audio"}]})
    assert odd.is_error and "cannot send" in str(odd.content)


def test_bad_names_and_schemas_are_configuration_errors() -> None:
    async def handler(args: dict[str, Any]) -> str:
        return ""

    with pytest.raises(ConfigurationError, match="invalid tool name"):
        tool("has space", "d", {})(handler)
    with pytest.raises(ConfigurationError, match="input_schema must be"):
        tool("ok", "d", 42)(handler)
    with pytest.raises(ConfigurationError, match="'required' names missing"):
        tool("ok", "d", {"type": "object", "properties": {}, "required": ["missing"]})(handler)
    with pytest.raises(ConfigurationError, match="unknown type"):
        tool("ok", "d", {"a": "strng"})(handler)


def test_sdk_mcp_server_tools_get_mcp_names() -> None:
    @tool("add", "Add", {"a": int})
    async def add(args: dict[str, Any]) -> str:
        return str(args["a"])

    server = create_sdk_mcp_server("calc", tools=[add])
    assert [t.name for t in server.prefixed_tools()] == ["mcp__calc__add"]
    assert [t.name for t in server.prefixed_tools("math")] == ["mcp__math__add"]
    assert add.name == "add"
    with pytest.raises(ConfigurationError, match="not a tool"):
        create_sdk_mcp_server("calc", tools=[lambda args: None])  # type: ignore[list-item]
