"""In-process tools for the SDK: ``@tool`` turns an async function into a catui :class:`Tool`.

The function receives the call's arguments as a dict and returns what
claude-agent-sdk's tools return: ``{"content": [{"type": "text", "text": ...}],
"is_error": bool}`` (a plain string is accepted too). The input schema is given
as a JSON schema, as a dict of argument name → Python type (``{"a": float}``),
as a TypedDict or as a pydantic model. Such tools are offered to the main agent
and to sub-agents whose definitions list them, and are subject to the same
permission rules as built-in tools (they are not read-only unless marked so).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, get_type_hints, is_typeddict

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model

from catui.errors import CatuiError, ConfigurationError
from catui.messages import Block
from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult, schema_from_model

ToolHandler = Callable[[dict[str, Any]], Awaitable[Any]]
"""``async def handler(args: dict) -> {"content": [...], "is_error"?: bool}``."""

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
    "null": None,
}


class SdkTool(Tool):
    """A tool defined in the host program's Python code (made by :func:`tool`).

    ``handler`` is the decorated function; calling the tool object directly
    (``await add({"a": 1, "b": 2})``) runs it, which is handy in tests.
    """

    name: ClassVar[str] = ""
    input_model: ClassVar[type[ToolInput]] = ToolInput

    def __init__(
        self,
        handler: ToolHandler,
        description: str,
        schema: dict[str, Any],
        *,
        pass_defaults: bool,
    ) -> None:
        self.handler = handler
        self._description = description
        self._schema = schema
        self._pass_defaults = pass_defaults

    @property
    def description(self) -> str:
        return self._description

    def input_schema(self) -> dict[str, Any]:
        return self._schema

    def arguments(self, args: BaseModel) -> dict[str, Any]:
        """The validated arguments as the handler receives them (only those given, unless a model fills defaults)."""
        return args.model_dump(by_alias=True, exclude_unset=not self._pass_defaults)

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(tool_name=self.name, tool_input=self.arguments(args), read_only=self.read_only)

    async def __call__(self, args: dict[str, Any]) -> Any:
        outcome = self.handler(args)
        return await outcome if inspect.isawaitable(outcome) else outcome

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        try:
            outcome = await self(self.arguments(args))
        except CatuiError as exc:
            return ToolResult(f"Error: {exc}", is_error=True)
        except Exception as exc:  # the host's bug must not end the run; the model sees what failed
            return ToolResult(f"Error: {self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return tool_result_from_handler(self.name, outcome)

    def renamed(self, name: str) -> SdkTool:
        """The same tool under another name (``mcp__<server>__<tool>`` for tools of an SDK MCP server)."""
        return make_sdk_tool(
            name, self._description, self.handler, self.input_model, self._schema,
            read_only=self.read_only, pass_defaults=self._pass_defaults,
        )

    def __repr__(self) -> str:
        return f"SdkTool(name={self.name!r}, read_only={self.read_only})"


def make_sdk_tool(
    name: str,
    description: str,
    handler: ToolHandler,
    input_model: type[BaseModel],
    schema: dict[str, Any],
    *,
    read_only: bool,
    pass_defaults: bool,
) -> SdkTool:
    """Build the tool object; each tool gets its own subclass because Tool keeps name and model on the class."""
    if not TOOL_NAME_PATTERN.match(name):
        raise ConfigurationError(
            f"invalid tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' (the model API's rule)"
        )
    cls = type(
        f"SdkTool[{name}]",
        (SdkTool,),
        {"name": name, "input_model": input_model, "read_only": read_only, "__module__": __name__},
    )
    instance: SdkTool = cls(handler, description, schema, pass_defaults=pass_defaults)
    return instance


def tool(
    name: str,
    description: str,
    input_schema: Any,
    annotations: Any = None,
    *,
    read_only: bool | None = None,
) -> Callable[[ToolHandler], SdkTool]:
    """Decorate an async function ``(args: dict) -> dict`` to make it a tool the agents can call.

    ``input_schema`` is a JSON schema (``{"type": "object", "properties": ...}``),
    a dict of argument name → Python type (every argument required), a TypedDict
    or a pydantic model. ``read_only=True`` (or MCP-style ``annotations`` with
    ``readOnlyHint``) lets permission modes treat calls as reads and lets calls
    run concurrently. Raises ConfigurationError for a bad name or schema.
    """
    hinted = _read_only_hint(annotations)
    effective_read_only = read_only if read_only is not None else bool(hinted)

    def decorate(handler: ToolHandler) -> SdkTool:
        if not isinstance(name, str) or not isinstance(description, str):
            raise ConfigurationError(
                f"@tool({name!r}, {description!r}, ...): the name and the description must be strings"
            )
        if not callable(handler):
            raise ConfigurationError(f"@tool({name!r}) must decorate a function, not {type(handler).__name__}")
        try:
            model, schema, pass_defaults = input_model_for(name, input_schema)
        except ConfigurationError:
            raise
        except (PydanticUserError, TypeError, ValueError, NameError) as exc:
            # An argument type pydantic cannot check (``{"a": object()}``, a model with arbitrary types).
            reason = (str(exc).splitlines()[0] if str(exc) else type(exc).__name__).rstrip(".")
            raise ConfigurationError(
                f"@tool({name!r}): cannot build the input schema: {reason}. Use JSON types "
                "(str, int, float, bool, list, dict), a JSON schema, a TypedDict or a pydantic model"
            ) from None
        return make_sdk_tool(
            name, description, handler, model, schema, read_only=effective_read_only, pass_defaults=pass_defaults
        )

    return decorate


def _read_only_hint(annotations: Any) -> bool | None:
    if annotations is None:
        return None
    if isinstance(annotations, dict):
        value = annotations.get("readOnlyHint", annotations.get("read_only"))
    else:
        value = getattr(annotations, "readOnlyHint", None)
    return None if value is None else bool(value)


# -- schemas ---------------------------------------------------------------------------------------


def input_model_for(tool_name: str, spec: Any) -> tuple[type[BaseModel], dict[str, Any], bool]:
    """The pydantic model that validates a call, the JSON schema the model is shown, and whether defaults are passed."""
    if isinstance(spec, type) and issubclass(spec, BaseModel):
        return spec, schema_from_model(spec), True
    if isinstance(spec, type) and is_typeddict(spec):
        required = set(getattr(spec, "__required_keys__", set()))
        hints = get_type_hints(spec)
        model = _model_from_types(tool_name, hints, required)
        return model, schema_from_model(model), False
    if isinstance(spec, dict):
        if _looks_like_json_schema(spec):
            schema = {"type": "object", **spec}
            return _model_from_json_schema(tool_name, schema), schema, False
        model = _model_from_types(tool_name, spec, set(spec))
        return model, schema_from_model(model), False
    raise ConfigurationError(
        f"@tool({tool_name!r}): input_schema must be a JSON schema dict, a dict of name → type, "
        f"a TypedDict or a pydantic model, not {type(spec).__name__}"
    )


def _looks_like_json_schema(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "object" or isinstance(spec.get("properties"), dict)


def _model_name(tool_name: str) -> str:
    return "Input_" + re.sub(r"\W", "_", tool_name)


def _model_from_types(tool_name: str, types: dict[str, Any], required: set[str]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for index, (arg, annotation) in enumerate(types.items()):
        if not isinstance(arg, str):
            raise ConfigurationError(f"@tool({tool_name!r}): argument names must be strings, not {arg!r}")
        if isinstance(annotation, str):
            mapped = _JSON_TYPES.get(annotation)
            if mapped is None and annotation not in _JSON_TYPES:
                raise ConfigurationError(
                    f"@tool({tool_name!r}): argument {arg!r} has unknown type {annotation!r}; use a Python type "
                    f"(str, int, float, bool, list, dict) or one of {', '.join(sorted(_JSON_TYPES))}"
                )
            annotation = mapped if mapped is not None else Any
        default = ... if arg in required else None
        fields[f"arg_{index}"] = (annotation if arg in required else annotation | None, Field(default, alias=arg))
    return _create(tool_name, fields, extra="forbid")


def _model_from_json_schema(tool_name: str, schema: dict[str, Any]) -> type[BaseModel]:
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise ConfigurationError(f"@tool({tool_name!r}): the schema's 'properties' must be an object")
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ConfigurationError(f"@tool({tool_name!r}): the schema's 'required' must be a list of names")
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise ConfigurationError(
            f"@tool({tool_name!r}): 'required' names {', '.join(unknown)}, which 'properties' does not define"
        )
    fields: dict[str, Any] = {}
    for index, (arg, prop) in enumerate(properties.items()):
        annotation = _annotation_for(prop)
        if arg in required:
            fields[f"arg_{index}"] = (annotation, Field(..., alias=arg))
        else:
            fields[f"arg_{index}"] = (annotation | None, Field(None, alias=arg))
    extra = "forbid" if schema.get("additionalProperties") is False else "allow"
    return _create(tool_name, fields, extra=extra)


def _annotation_for(prop: Any) -> Any:
    kind = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(kind, str) and kind in _JSON_TYPES and kind != "null":
        return _JSON_TYPES[kind]
    return Any


def _create(tool_name: str, fields: dict[str, Any], *, extra: str) -> type[BaseModel]:
    config = ConfigDict(extra=extra, populate_by_name=False)  # type: ignore[typeddict-item]
    model: type[BaseModel] = create_model(_model_name(tool_name), __config__=config, **fields)
    return model


# -- results ---------------------------------------------------------------------------------------


def tool_result_from_handler(tool_name: str, outcome: Any) -> ToolResult:
    """A handler's return value as a ToolResult (MCP-style content becomes API blocks)."""
    if outcome is None:
        return ToolResult(f"{tool_name} completed with no output")
    if isinstance(outcome, str):
        return ToolResult(outcome)
    if not isinstance(outcome, dict) or "content" not in outcome:
        return ToolResult(
            f"Error: the tool {tool_name} returned {type(outcome).__name__}; a tool function must return "
            '{"content": [{"type": "text", "text": "..."}]} or a string',
            is_error=True,
        )
    is_error = bool(outcome.get("is_error") or outcome.get("isError"))
    content = outcome["content"]
    if isinstance(content, str):
        return ToolResult(content, is_error=is_error, data=outcome)
    blocks: list[Block] = []
    for item in content if isinstance(content, list) else [content]:
        block = _api_block(item)
        if block is None:
            return ToolResult(
                f"Error: the tool {tool_name} returned a content item catui cannot send to the model: "
                f"{json.dumps(item, default=str)[:200]} (use text or image items)",
                is_error=True,
            )
        blocks.append(block)
    if not blocks:
        return ToolResult(f"{tool_name} completed with no output", is_error=is_error, data=outcome)
    return ToolResult(blocks, is_error=is_error, data=outcome)


def _api_block(item: Any) -> Block | None:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "text" and isinstance(item.get("text"), str):
        return {"type": "text", "text": item["text"]}
    if kind == "image":
        if isinstance(item.get("source"), dict):
            return {"type": "image", "source": item["source"]}
        if isinstance(item.get("data"), str):
            media_type = item.get("mimeType") or item.get("media_type") or "image/png"
            return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": item["data"]}}
    return None


# -- claude-agent-sdk's in-process MCP servers -----------------------------------------------------


@dataclass
class SdkMcpServer:
    """A named group of in-process tools, as claude-agent-sdk's ``create_sdk_mcp_server`` makes.

    Given in ``CatuiOptions.mcp_servers`` under a key (or directly in
    ``CatuiOptions.tools``, under its own name), its tools are offered as
    ``mcp__<key>__<tool>``, the names Claude Code gives MCP tools.
    """

    name: str
    version: str = "1.0.0"
    tools: list[SdkTool] = field(default_factory=list)

    def prefixed_tools(self, key: str | None = None) -> list[SdkTool]:
        server = key or self.name
        return [t.renamed(f"mcp__{server}__{t.name}") for t in self.tools]


def create_sdk_mcp_server(name: str, version: str = "1.0.0", tools: Iterable[SdkTool] | None = None) -> SdkMcpServer:
    """Group ``@tool`` functions under a server name, for code written against claude-agent-sdk."""
    items = list(tools or [])
    for item in items:
        if not isinstance(item, SdkTool):
            raise ConfigurationError(
                f"create_sdk_mcp_server({name!r}): {item!r} is not a tool; decorate the function with @tool"
            )
    return SdkMcpServer(name=name, version=version, tools=items)
