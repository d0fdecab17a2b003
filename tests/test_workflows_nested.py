"""``workflow(name, args)`` / ``workflow({scriptPath}, args)`` — a workflow running another one as a step —
through the real ``catui workflow run``/``resume`` and the Workflow tool against the loopback Anthropic server:
the child's value, its agents in a ``▸ name`` group, its log lines, one level of nesting, the errors a parent
can catch, a resume that does not repeat the child's finished agents, and the shared budget. Hypothesis throws
arbitrary references and arguments at ``workflow()`` on the real engine and runner."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from catui.workflows.engine import ScriptEngine
from catui.workflows.nested import NESTING_LIMIT, NestedWorkflows, WorkflowSources
from catui.workflows.runner import WorkflowFiles, WorkflowRunner
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import CURRENT, first_user_text, stream_run, text
from tests.support.workflow_cli import TIMEOUT_S, answer, journal_of, records, workflow

MODEL = ("--model", "claude-sonnet-4-5")  # a priced model: costs are known

INNER = """export const meta = {name: "inner", description: "Two looks", phases: [{title: "Look"}]}
phase("Look")
log("looking at " + args.topic)
const looks = await parallel([() => agent("Inner look one at " + args.topic), () => agent("Inner look two")])
let nested = null
try { await workflow("inner", {}) } catch (e) { nested = e.message }
return {looks, nested, spent: budget.spent()}
"""

OUTER = """export const meta = {name: "outer", description: "Runs inner", phases: [{title: "Start"}]}
phase("Start")
const first = await agent("Outer first step")
const child = await workflow("inner", {topic: "auth"})
const again = await workflow({scriptPath: "other.js"}, ["x"])
const errors = []
for (const ref of ["nope", {scriptPath: "missing.js"}, {scriptPath: "broken.js"}, {scriptPath: "thrower.js"}, 42]) {
  try { await workflow(ref) } catch (e) { errors.push(e.message) }
}
return {first, child, again, errors}
"""

OTHER = 'export const meta = {name: "other"}\nreturn {args, said: await agent("Other step")}\n'


def project_with_workflows(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path)
    saved = repo / ".claude" / "workflows"
    saved.mkdir(parents=True)
    (saved / "inner.js").write_text(INNER)
    (repo / "other.js").write_text(OTHER)
    (repo / "broken.js").write_text("const = 1\n")
    (repo / "thrower.js").write_text('await agent("Thrower step")\nthrow new Error("child gave up")\n')
    return repo


def test_a_script_runs_a_saved_workflow_and_a_script_file_as_steps(tmp_path: Path) -> None:
    repo = project_with_workflows(tmp_path)
    (repo / "outer.js").write_text(OUTER)
    turns = [answer("Outer first step", "first"), answer("Inner look one at auth", "look one"),
             answer("Inner look two", "look two"), answer("Other step", "other said"),
             answer("Thrower step", "thrown")]
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(repo, tmp_path, server, "run", "outer.js", "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout.splitlines()[1])
    assert value["first"] == "first"
    assert value["child"]["looks"] == ["look one", "look two"]
    assert value["child"]["nested"] == NESTING_LIMIT  # one level only: the child's workflow() rejects
    assert value["again"] == {"args": ["x"], "said": "other said"}
    nope, missing, broken, thrower, number = value["errors"]
    assert nope == "workflow('nope'): no workflow with that name. Available: deep-research, inner"
    assert missing.startswith("workflow({scriptPath: 'missing.js'}): cannot read ") and "missing.js" in missing
    assert broken.startswith("workflow({scriptPath: 'broken.js'}): Script parse error: ") and "(1:" in broken
    assert thrower == "workflow({scriptPath: 'thrower.js'}) failed: child gave up"
    assert number == "workflow() expects a workflow name (string) or {scriptPath: string}"

    (record,) = records(tmp_path)
    assert record["status"] == "completed"
    # The children's agents are the run's own: counted, journaled, grouped under "▸ <name>" (their phase).
    assert record["counts"]["agent_count"] == 5 and record["counts"]["agents_done"] == 5
    journal = journal_of(record, tmp_path)
    phases = {e["label"]: e["phase"] for e in journal if e["type"] == "started"}
    assert phases == {"Outer first step": "Start", "Inner look one at auth": "▸ inner", "Inner look two": "▸ inner",
                      "Other step": "▸ other", "Thrower step": "▸ thrower"}
    titles = [e["title"] for e in record["workflowProgress"] if e["type"] == "workflow_phase"]
    assert titles == ["Start", "▸ inner", "▸ other", "▸ thrower"]  # the child's phase("Look") is ignored
    assert record["logs"][:3] == ["▸ running dynamic workflow inner", "[inner] looking at auth", "▸ inner done"]
    assert "▸ thrower failed: child gave up" in record["logs"]


RESUMABLE = """export const meta = {name: "resumable", description: "Inner then a last step"}
const child = await workflow("inner", {topic: "db"})
const last = await agent("Last step")
return {child, last}
"""


def test_resuming_the_parent_does_not_repeat_the_childs_finished_agents(tmp_path: Path) -> None:
    repo = project_with_workflows(tmp_path)
    (repo / "resumable.js").write_text(RESUMABLE)
    # First run: the last step has no answer (the server refuses it), so the run fails after the child finished.
    with AnthropicTestServer({"turns": [answer("Inner look one", "one"), answer("Inner look two", "two")]}) as server:
        failed = workflow(repo, tmp_path, server, "run", "resumable.js", "--permission-mode", "bypassPermissions")
    (record,) = records(tmp_path)
    assert record["status"] == "failed", failed.stdout
    with AnthropicTestServer({"turns": [answer("Last step", "last")]}) as server:
        resumed = workflow(repo, tmp_path, server, "resume", record["runId"], "--permission-mode", "bypassPermissions")
        assert resumed.returncode == 0, resumed.stderr
        asked = [first_user_text(r.body) for r in server.requests]
    assert not [p for p in asked if "Inner look" in p]  # the child's agents came from the journal
    value = json.loads(resumed.stdout.splitlines()[-1])
    assert value["child"]["looks"] == ["one", "two"] and value["last"] == "last"
    (record,) = records(tmp_path)
    assert record["status"] == "completed" and record["counts"]["agents_skipped"] == 2


def test_a_child_shares_its_parents_budget(tmp_path: Path) -> None:
    repo = project_with_workflows(tmp_path)
    (repo / "spend.js").write_text('const first = await agent("Costly step")\n'
                                   'try { return {first, child: await workflow("inner", {topic: "x"})} }\n'
                                   'catch (e) { return {first, refused: e.message} }\n')
    turns = [answer("Costly step", "costly", usage={"input_tokens": 100000}), answer("Inner look", "look")]
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(repo, tmp_path, server, "run", "spend.js", "--budget", "0.05", "--permission-mode",
                        "bypassPermissions", *MODEL)
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if "Inner look" in first_user_text(r.body)]
    value = json.loads(done.stdout.splitlines()[1])
    # Both of the child's agents were refused (parallel gives null for each); its budget.spent() is the parent's.
    assert value["child"]["looks"] == [None, None] and value["child"]["spent"] >= 0.05
    (record,) = records(tmp_path)
    assert record["counts"]["agents_done"] == 1 and record["counts"]["agents_error"] == 2


def test_the_workflow_tool_runs_a_nested_workflow(tmp_path: Path) -> None:
    repo = project_with_workflows(tmp_path)
    script = ('export const meta = {name: "via-tool", description: "Nested through the tool"}\n'
              'return await workflow("inner", {topic: "tool"})\n')
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "repeat": True,
         "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": script}}]},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
         "repeat": True},
        answer("Inner look one at tool", "one"), answer("Inner look two", "two"),
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it",
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    note = next(x for x in lines if x.get("subtype") == "task_notification")
    assert note["status"] == "completed"
    (record,) = records(tmp_path)
    assert record["result"]["looks"] == ["one", "two"] and record["result"]["nested"] == NESTING_LIMIT
    progress = [x for x in lines if x.get("subtype") == "task_progress"]
    last = progress[-1]["workflow_progress"]
    assert {"type": "workflow_phase", "title": "▸ inner"} in last
    assert {e.get("phase") for e in last if e["type"] == "workflow_agent"} == {"▸ inner"}


# -- Hypothesis: whatever a script passes to workflow(), the parent gets a value or a catchable rejection --

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)
references = st.one_of(
    st.sampled_from(["child", "nope", "", "../child", "deep-research"]),
    st.text(max_size=60),
    st.fixed_dictionaries({"scriptPath": st.sampled_from(["child.js", "missing.js", "/dev/zero", "/", "~nosuchuser/x",
                                                          "bad.js", "\x00", "loop.js"]) | st.text(max_size=60)}),
    json_values,
)


class Answers:
    """The run's agents: each answers its prompt at once (the collaborator a runner is given)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(self, prompt: str, opts: dict[str, Any], label: str, started: Any) -> tuple[Any, dict[str, Any]]:
        started(f"a{len(self.prompts)}")
        self.prompts.append(label)
        return label.upper(), {"agentId": f"a{len(self.prompts)}", "costUsd": 0.0}


def run_with_children(folder: Path, source: str, args: Any) -> tuple[Any, WorkflowRunner]:
    answers = Answers()
    runner = WorkflowRunner(files=WorkflowFiles(folder / "runs", "wf_test0000-000"), run_agent=answers, concurrency=4,
                            children=NestedWorkflows(WorkflowSources(folder), time_limit_s=1))
    engine = ScriptEngine(source=source, args=args, host=runner, time_limit_s=2)
    return asyncio.run(asyncio.wait_for(engine.run(), TIMEOUT_S)), runner


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(ref=references, args=json_values)
@example(ref="child", args={"n": 1})
@example(ref={"scriptPath": "child.js"}, args=None)
@example(ref={"scriptPath": "loop.js"}, args=None)
def test_fuzzed_workflow_references_give_a_value_or_a_one_line_rejection(tmp_path_factory: Any, ref: Any,
                                                                          args: Any) -> None:
    folder = tmp_path_factory.mktemp("nested")
    saved = folder / ".claude" / "workflows"
    saved.mkdir(parents=True)
    child = 'return {args, said: await agent("child step"), inner: await workflow("child").catch(e => e.message)}\n'
    (saved / "child.js").write_text(child)
    (folder / "child.js").write_text(child)
    (folder / "bad.js").write_text("return (\n")
    (folder / "loop.js").write_text("while (true) {}\n")
    # JSON.parse, not literals: a "__proto__" key must stay a key
    source = (f"const ref = JSON.parse({json.dumps(json.dumps(ref))}), a = JSON.parse({json.dumps(json.dumps(args))})\n"
              "try { return {ok: await workflow(ref, a)} }\n"
              "catch (e) { return {error: e.message} }\n")
    value, runner = run_with_children(folder, source, None)
    assert isinstance(value, dict)
    if "ok" in value:
        assert value["ok"]["args"] == args and value["ok"]["said"] == "CHILD STEP"
        assert value["ok"]["inner"] == NESTING_LIMIT
        assert runner.counts.agent_count == 1
    else:
        message = value["error"]
        assert message.startswith("workflow("), message
        if " failed: " not in message:  # refused before the child started: no agent ran
            assert runner.counts.agent_count == 0
        if "Script parse error" not in message:  # a parse error shows the line and a caret below it
            assert "\n" not in message, message


def test_a_runner_without_children_rejects_workflow(tmp_path: Path) -> None:
    runner = WorkflowRunner(files=WorkflowFiles(tmp_path, "wf_test0000-000"), run_agent=Answers(), concurrency=1)
    engine = ScriptEngine(source='try { await workflow("x") } catch (e) { return e.message }', args=None, host=runner)
    assert "cannot start child workflows" in asyncio.run(engine.run())


# -- Hypothesis through the real Workflow tool (in process, the scripted provider) ------------------------

schemas = st.one_of(st.sampled_from([{"type": "bogus"}, {"type": "array"}, {"type": "object", "properties": {}},
                                     {"type": "object", "required": "x"}]), json_values)


async def tool_run(project: Path, script: str) -> dict[str, Any]:
    """One Workflow call in a session on the scripted provider (every agent answers "fine"); the run's record."""
    import os

    from catui.app.build import build_app
    from catui.app.options import RunOptions

    app = build_app(RunOptions(cwd=project, model=f"scripted:{project / 'model.json'}",
                               permission_mode="bypassPermissions", setting_sources=["project"],
                               env={**os.environ, "CATUI_COMPAT": "2.1.332"}))
    try:
        tool = app.session.find_tool("Workflow")
        assert tool is not None
        result = await tool.call(tool.input_model.model_validate({"script": script}), app.session.ctx)
        assert not result.is_error, result.content
        task = await app.tasks.wait(result.data["taskId"], TIMEOUT_S)
        assert task.status in ("completed", "failed"), task.status
        record_path = Path(result.data["transcriptDir"]).parent.parent.parent / "workflows" / f"{result.data['runId']}.json"
        return dict(json.loads(record_path.read_text(encoding="utf-8")))
    finally:
        await app.aclose()


@pytest.fixture(scope="module")
def tool_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("tool-fuzz")
    (project / "model.json").write_text(json.dumps({"turns": [{"content": text("fine"), "repeat": True}]}))
    saved = project / ".claude" / "workflows"
    saved.mkdir(parents=True)
    (saved / "child.js").write_text('return {args, said: await agent("child step")}\n')
    (project / "child.js").write_text('return {args, said: await agent("child step")}\n')
    return project


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(schema=schemas, ref=references, args=json_values)
@example(schema={"type": "bogus"}, ref="child", args={"k": [1, 2]})
# Found by the fuzzing at merge: JSON.stringify prints this double as 67625072344037140, once read back as that int.
@example(schema={"type": "bogus"}, ref="child", args=6.762507234403714e+16)
def test_fuzzed_schemas_and_references_through_the_workflow_tool(tool_project: Path, schema: Any, ref: Any,
                                                                 args: Any) -> None:
    from catui.workflows.schema_check import agent_schema_problem

    script = (f"const schema = JSON.parse({json.dumps(json.dumps(schema))}), ref = JSON.parse("
              f"{json.dumps(json.dumps(ref))}), a = JSON.parse({json.dumps(json.dumps(args))})\n"
              "const out = {}\n"
              "try { out.agent = await agent('schema step', {schema}) } catch (e) { out.agent = e.message }\n"
              "try { out.child = await workflow(ref, a) } catch (e) { out.child = e.message }\n"
              "return out\n")
    record = asyncio.run(tool_run(tool_project, script))
    assert record["status"] == "completed", record.get("error")
    out = record["result"]
    problem = agent_schema_problem(schema) if schema is not None else None
    if problem is not None:  # refused in the script, word for word, before any agent started
        assert out["agent"] == problem
        assert not [e for e in record["workflowProgress"] if e.get("label") == "schema step"]
    else:  # the agent ran (and, answering "fine" without StructuredOutput when it had a schema, failed)
        assert any(e.get("label") == "schema step" for e in record["workflowProgress"])
    if isinstance(out["child"], dict):
        assert out["child"] == {"args": args, "said": "fine"}
    else:
        assert out["child"].startswith("workflow(")
