"""The stored tool input schemas (catui.tools.static_schemas) match the models they stand for."""

from __future__ import annotations

import json

from catui.tools.base import ToolInput, schema_from_model
from catui.tools.registry import builtin_tools
from catui.tools.schema_store import generated_schemas
from catui.tools.static_schemas import SCHEMAS_FILE, model_key, stored_schema


def test_the_stored_schemas_are_the_models_schemas() -> None:
    stored = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    generated = generated_schemas()
    assert sorted(stored) == sorted(generated), "run: python -m catui.tools.schema_store --write"
    for key, schema in generated.items():
        assert stored[key] == schema, f"{key}: run python -m catui.tools.schema_store --write"


def test_every_builtin_tool_sends_a_stored_schema() -> None:
    for tool in builtin_tools(interactive=True):
        assert stored_schema(tool.input_model) is not None, model_key(tool.input_model)
        assert tool.input_schema() == stored_schema(tool.input_model)


def test_a_model_without_a_stored_schema_is_generated_on_use() -> None:
    class LocalInput(ToolInput):
        path: str

    assert stored_schema(LocalInput) is None
    schema = schema_from_model(LocalInput)
    assert schema["properties"] == {"path": {"type": "string"}}
    assert schema["required"] == ["path"] and schema["additionalProperties"] is False


def test_schemas_are_fresh_copies() -> None:
    model = builtin_tools()[0].input_model
    first = schema_from_model(model)
    first["properties"].clear()
    assert schema_from_model(model)["properties"], "a caller's change must not reach the stored schema"
