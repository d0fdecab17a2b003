"""``agent({schema})`` is checked before the agent starts: an invalid JSON Schema, or one whose root is not an
object, rejects that call at once with a message naming the problem and its place (the script catches it), and
no agent is started — through the real ``catui workflow run`` and the Workflow tool against the loopback server.
Hypothesis throws arbitrary schemas at the real runner: each is refused before any agent runs, or handed to the
agent unchanged, and only a valid object-rooted schema is handed on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from catui.workflows.runner import AgentFailed, WorkflowFiles, WorkflowRunner
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.compat_cli import CURRENT, first_user_text, stream_run, text

TIMEOUT_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)

SCRIPT = """const tries = [{type: "bogus"}, {type: "object", properties: {n: {type: "integr"}}}, {type: "array"},
                   "not a schema", {type: "object", required: "n"}]
const refused = []
for (const schema of tries) {
  try { await agent("Refused step", {schema}) ; refused.push("ran") } catch (e) { refused.push(e.message) }
}
const counted = await agent("Counting step", {schema: {type: "object", properties: {n: {type: "integer"}},
                                                        required: ["n"]}})
return {refused, counted}
"""

STRUCTURED = [
    {"match": {"first_user_contains": "Counting step", "last_is_tool_result": False}, "repeat": True,
     "content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"n": 3}}]},
    {"match": {"first_user_contains": "Counting step", "last_is_tool_result": True}, "repeat": True,
     "content": text("done")},
    {"match": {"first_user_contains": "Refused step"}, "repeat": True, "content": text("should not run")},
]


def check_refusals(refused: list[str]) -> None:
    bogus, inner, array, string, required = refused
    assert bogus.startswith("agent({schema}) received an invalid JSON Schema: ") and "(at $.type)" in bogus
    assert "'integr'" in inner and "(at $.properties.n.type)" in inner
    assert array.startswith("agent({schema}) received an unusable JSON Schema: its root must declare "
                            'type: "object" (it declares type \'array\')')
    assert string.startswith("agent({schema}): the schema must be a JSON Schema object, not a string")
    assert "(at $.required)" in required
    for message in refused:
        assert "\n" not in message and "call agent() again" in message


def test_bad_schemas_reject_their_call_at_once_and_start_no_agent(tmp_path: Path) -> None:
    (tmp_path / "schemas.js").write_text(SCRIPT)
    with AnthropicTestServer({"turns": STRUCTURED}) as server:
        done = run_catui(tmp_path, cli_env(tmp_path, server), "workflow", "run", "schemas.js",
                         "--permission-mode", "bypassPermissions", timeout=TIMEOUT_S)
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if "Refused step" in first_user_text(r.body)]
    value = json.loads(done.stdout.splitlines()[1])
    check_refusals(value["refused"])
    assert value["counted"] == {"n": 3}
    (record_path,) = (tmp_path / "catui-home" / "projects").glob("*/workflows/wf_*.json")
    record = json.loads(record_path.read_text())
    # A refused call never became an agent: not counted, not journaled.
    assert record["counts"]["agent_count"] == 1 and record["counts"]["agents_error"] == 0
    journal = (record_path.parent / record["runId"] / "journal.jsonl").read_text()
    assert "Refused step" not in journal


def test_the_workflow_tool_refuses_a_bad_schema_the_same_way(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    script = 'export const meta = {name: "s", description: "Schemas"}\n' + SCRIPT
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "repeat": True,
         "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": script}}]},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
         "repeat": True},
        *STRUCTURED,
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it",
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if "Refused step" in first_user_text(r.body)]
    note = next(x for x in lines if x.get("subtype") == "task_notification")
    assert note["status"] == "completed"
    (record_path,) = (tmp_path / "catui-home" / "projects").glob("*/*/workflows/wf_*.json")
    result = json.loads(record_path.read_text())["result"]
    check_refusals(result["refused"])
    assert result["counted"] == {"n": 3}


# -- Hypothesis on the real runner ------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=15)
keywords = st.sampled_from(["type", "properties", "required", "items", "enum", "minimum", "$schema", "$ref",
                            "additionalProperties", "anyOf", "pattern", "format", "const", "$defs"])
schema_like = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["object", "string", "integer", "array", "bogus", "null"])})
    | json_values,
    lambda inner: st.dictionaries(keywords, inner, max_size=5)
    | st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3)}),
    max_leaves=20)


class Started:
    """The run's agents (the collaborator a runner is given): records each call's options, answers at once."""

    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    async def __call__(self, prompt: str, opts: dict[str, Any], label: str, started: Any) -> tuple[Any, dict[str, Any]]:
        started("a1")
        self.options.append(opts)
        return {"ok": True}, {"agentId": "a1"}


def deeply_nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(schema=schema_like)
@example(schema={"type": "bogus"})
@example(schema={"type": "object", "properties": {"a": {"type": "strin"}}})
@example(schema={"type": ["object", "null"]})
@example(schema={"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                 "properties": {"x": {"minimum": "a"}}})
@example(schema={"$schema": "no such draft", "type": "object"})
@example(schema={"$schema": {"type": "object"}})  # found by the fuzzing: jsonschema's draft lookup raised TypeError
@example(schema=deeply_nested(30))
@example(schema={"type": "object", "properties": {"\n": {"type": "bogus"}}})  # found at merge: a key broke the line
def test_fuzzed_schemas_are_refused_before_any_agent_or_handed_on_unchanged(tmp_path_factory: Any,
                                                                           schema: Any) -> None:
    started = Started()
    runner = WorkflowRunner(files=WorkflowFiles(tmp_path_factory.mktemp("schemas"), "wf_test0000-000"),
                            run_agent=started, concurrency=1)
    try:
        asyncio.run(runner.agent("step", {"schema": schema}))
    except AgentFailed as exc:
        message = str(exc)
        assert message.startswith("agent({schema})") and "\n" not in message and len(message) < 800, message
        assert not started.options and runner.counts.agent_count == 0
        assert not runner.files.journal.exists() or "step" not in runner.files.journal.read_text()
        return
    if schema is None:  # no schema: a plain agent
        assert started.options == [{"schema": None, "phase": None}]
        return
    # Handed on: a valid JSON Schema with an object root, exactly as the script gave it.
    assert started.options == [{"schema": schema, "phase": None}]
    assert isinstance(schema, dict) and schema.get("type") == "object"
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator.check_schema(schema)


def test_a_schema_nested_too_deeply_to_check_is_refused_in_one_line(tmp_path: Path) -> None:
    runner = WorkflowRunner(files=WorkflowFiles(tmp_path, "wf_test0000-000"), run_agent=Started(), concurrency=1)
    with pytest.raises(AgentFailed, match=r"^agent\(\{schema\}\): the schema nests too deeply to be checked; "):
        asyncio.run(runner.agent("step", {"schema": deeply_nested(2000)}))
    assert runner.counts.agent_count == 0
