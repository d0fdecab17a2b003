"""The stored tool input schemas (catui.tools.static_schemas) match the models they stand for."""

from __future__ import annotations

import json

from catui.tools.base import ToolInput, schema_from_model
from catui.tools.registry import builtin_tools
from catui.tools.schema_store import generated_schemas
from catui.tools.static_schemas import SCHEMAS_FILE, model_key, stored_schema, stored_schema_by_key


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


GENERATE_AFTER_PERMUTED_LITERALS = r"""
import json, sys, typing
stored = json.loads(open(sys.argv[1], encoding="utf-8").read())

def enums(node):
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list) and len(node["enum"]) > 1:
            yield tuple(node["enum"])
        for value in node.values():
            yield from enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from enums(value)

# typing caches `X | None` by equality and Literals compare as sets: made first, these reversed unions are
# what a later `Literal[...] | None` annotation gets unless the model keeps its type distinct.
made = [typing.Literal[values[::-1]] | None for values in enums(stored)]
import claude_agent_sdk  # noqa: F401  (its PermissionMode | None is one such union, made on import)
from catui.tools.schema_store import generated_schemas
generated = generated_schemas()
print(json.dumps(sorted(key for key in generated if generated[key] != stored.get(key))))
"""


def test_the_generated_schemas_do_not_depend_on_what_the_process_typed_first(tmp_path) -> None:
    # Found as an order-dependent failure: after test_cli_sdk_protocol imported claude_agent_sdk, the Agent
    # tool's `mode` enum came out in the SDK's PermissionMode order. A fresh process makes it deterministic.
    import subprocess
    import sys

    script = tmp_path / "generate.py"
    script.write_text(GENERATE_AFTER_PERMUTED_LITERALS, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), str(SCHEMAS_FILE)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_numbers_in_stored_descriptions_are_the_tools_own() -> None:
    # The input models import nothing of their tool's module (it imports them on first validation), so the
    # limits their descriptions state are written out there; they must stay the ones the tools apply.
    from catui.tools.grep import DEFAULT_HEAD_LIMIT
    from catui.tools.worktree_session import NAME_MAX_CHARS

    grep = stored_schema_by_key("catui.tools.grep_input:GrepInput")
    worktree = stored_schema_by_key("catui.tools.worktree_session_input:EnterWorktreeInput")
    assert grep is not None and worktree is not None
    assert f"Defaults to {DEFAULT_HEAD_LIMIT};" in grep["properties"]["head_limit"]["description"]
    assert f"at most {NAME_MAX_CHARS} characters" in worktree["properties"]["name"]["description"]


def test_tool_input_models_load_on_first_use() -> None:
    # A tool naming its model by input_model_ref sends the stored schema without importing the model's module.
    import subprocess
    import sys

    probe = ("import sys\nfrom catui.tools.registry import builtin_tools\n"
             "tools = builtin_tools(interactive=True)\n[t.to_api() for t in tools]\n"
             "print('pydantic' in sys.modules, 'catui.tools.read_input' in sys.modules)\n"
             "next(t for t in tools if t.name == 'Read').input_model.model_validate({'file_path': '/x'})\n"
             "print('catui.tools.read_input' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True"]
