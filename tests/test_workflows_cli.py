"""``catui workflow`` through the real CLI against the loopback Anthropic server: a Claude Code workflow
script (parallel, schema, log, args, phases), its files, parse errors, failures the script catches, a throwing
script, the budget, the concurrency cap, a Python workflow, and list/show/logs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

TIMEOUT_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)
RUN_ID = re.compile(r"^wf_[0-9a-f]{8}-[0-9a-f]{3}$")


def answer(key: str, text: str) -> dict[str, Any]:
    return {"match": {"first_user_contains": key}, "repeat": True, "content": [{"type": "text", "text": text}]}


def structured(key: str, value: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"match": {"first_user_contains": key, "last_is_tool_result": False}, "repeat": True,
             "content": [{"type": "tool_use", "name": "StructuredOutput", "input": value}]},
            {"match": {"first_user_contains": key, "last_is_tool_result": True}, "repeat": True,
             "content": [{"type": "text", "text": "done"}]}]


def workflow(tmp_path: Path, server: Any, *args: str, **env: str) -> Any:
    return run_catui(tmp_path, cli_env(tmp_path, server, **env), "workflow", *args, timeout=TIMEOUT_S)


def files_root(tmp_path: Path) -> Path:
    projects = tmp_path / "catui-home" / "projects"
    (project,) = list(projects.iterdir())
    return project / "workflows"


SCRIPT = """export const meta = { name: "review", description: "Review two areas", phases: [{title: "Read"}] }
phase("Read")
const [a, b] = await parallel([() => agent("Look at area alpha"), () => agent("Look at area beta", {label: "beta"})])
const counted = await agent("Count the files", {schema: {type: "object", properties: {files: {type: "integer"}},
  required: ["files"]}})
log("alpha said " + a)
return {a, b, files: counted.files, topic: args.topic}
"""


def test_a_claude_code_script_runs_and_leaves_its_files(tmp_path: Path) -> None:
    turns = [answer("area alpha", "alpha is fine"), answer("area beta", "beta needs tests"),
             *structured("Count the files", {"files": 7})]
    (tmp_path / "review.js").write_text(SCRIPT, encoding="utf-8")
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(tmp_path, server, "run", "review.js", "--args", '{"topic": "auth"}',
                        "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        run_id, result_line = done.stdout.splitlines()
        assert RUN_ID.match(run_id)
        assert json.loads(result_line) == {"a": "alpha is fine", "b": "beta needs tests", "files": 7, "topic": "auth"}
        # The schema reached the model as the StructuredOutput tool's input schema.
        counting = [r.body for r in server.requests if "Count the files" in json.dumps(r.body["messages"][0])]
        offered = {t["name"]: t for t in counting[0]["tools"]}
        assert offered["StructuredOutput"]["input_schema"]["required"] == ["files"]
        # The agent's first message frames the task, indented.
        first = json.dumps(counting[0]["messages"][0])
        assert "The task:\\n  Count the files" in first

        root = files_root(tmp_path)
        record = json.loads((root / f"{run_id}.json").read_text())
        assert record["status"] == "completed" and record["summary"] == "Review two areas"
        assert record["workflowName"] == "review" and record["agentCount"] == 3 and record["logs"] == ["alpha said alpha is fine"]
        assert record["phases"] == [{"title": "Read"}]
        assert (root / "scripts" / f"review-{run_id}.js").read_text() == SCRIPT
        journal = [json.loads(line) for line in (root / run_id / "journal.jsonl").read_text().splitlines()]
        assert journal[0] == {"type": "launched"}
        results = [e for e in journal if e["type"] == "result"]
        assert len(results) == 3 and all(re.fullmatch(r"v2:[0-9a-f]{64}", e["key"]) for e in results)
        assert {"beta", "Count the files"} <= {e["label"] for e in journal if e["type"] == "started"}
        assert next(e for e in results if e["result"] == {"files": 7})["toolsUsed"] == ["StructuredOutput"]
        for entry in results:  # each agent's transcript and meta beside the journal
            meta = json.loads((root / run_id / f"agent-{entry['agentId']}.meta.json").read_text())
            assert meta["agentType"] == "workflow-subagent" and meta["inWorkflowRun"] is True
            assert meta["workflowPhase"] == "Read" and (root / run_id / f"agent-{entry['agentId']}.jsonl").is_file()

        shown = workflow(tmp_path, server, "show", run_id)
        assert shown.returncode == 0 and "completed" in shown.stdout
        assert json.loads(shown.stdout.splitlines()[-1])["files"] == 7
        listed = workflow(tmp_path, server, "list")
        assert run_id in listed.stdout and "completed" in listed.stdout
        logs = workflow(tmp_path, server, "logs", run_id)
        assert "log: alpha said alpha is fine" in logs.stdout and "started: beta" in logs.stdout


def test_a_parse_error_names_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "bad.js").write_text('export const meta = {name: "bad"}\nconst x = 1 +;\nreturn x\n')
    with AnthropicTestServer({"turns": []}) as server:
        done = workflow(tmp_path, server, "run", "bad.js")
    assert done.returncode == 1
    assert "Script parse error" in done.stderr and "(2:14)" in done.stderr and "const x = 1 +;" in done.stderr
    assert "Traceback" not in done.stderr
    assert server.requests == []


def test_a_failed_agent_is_a_rejection_the_script_catches_and_a_throw_fails_the_run(tmp_path: Path) -> None:
    # "Unscripted" has no turn: the server answers 400, the agent fails.
    (tmp_path / "catching.js").write_text(
        'let caught = "none"\n'
        'try { await agent("Unscripted work") } catch (e) { caught = "caught" }\n'
        'const both = await parallel([() => agent("Unscripted again"), () => agent("Fine work")])\n'
        'return {caught, both}\n')
    (tmp_path / "throwing.js").write_text('await agent("Fine work")\nthrow new Error("no good answer")\n')
    with AnthropicTestServer({"turns": [answer("Fine work", "fine")]}) as server:
        caught = workflow(tmp_path, server, "run", "catching.js", "--permission-mode", "bypassPermissions")
        assert caught.returncode == 0, caught.stderr
        assert json.loads(caught.stdout.splitlines()[1]) == {"caught": "caught", "both": [None, "fine"]}
        record = json.loads((files_root(tmp_path) / f"{caught.stdout.splitlines()[0]}.json").read_text())
        assert record["counts"]["agents_error"] == 2 and record["counts"]["agents_done"] == 1

        thrown = workflow(tmp_path, server, "run", "throwing.js", "--permission-mode", "bypassPermissions")
    assert thrown.returncode == 1
    assert "failed: no good answer" in thrown.stderr and "Traceback" not in thrown.stderr
    run_id = thrown.stdout.splitlines()[0]
    assert json.loads((files_root(tmp_path) / f"{run_id}.json").read_text())["status"] == "failed"


def test_a_spent_budget_stops_new_agents(tmp_path: Path) -> None:
    (tmp_path / "budget.js").write_text(
        'try { await agent("Fine work"); return "ran" } catch (e) { return e.message }\n')
    with AnthropicTestServer({"turns": [answer("Fine work", "fine")]}) as server:
        done = workflow(tmp_path, server, "run", "budget.js", "--budget", "0")
    assert done.returncode == 0, done.stderr
    assert "budget of $0 is spent" in json.loads(done.stdout.splitlines()[1])
    assert server.requests == []


def test_the_concurrency_cap_runs_one_agent_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "fan.js").write_text(
        'return await parallel([1, 2, 3, 4].map(n => () => agent("Fine work " + n)))\n')
    with AnthropicTestServer({"turns": [answer("Fine work", "fine")]}) as server:
        done = workflow(tmp_path, server, "run", "fan.js", "--permission-mode", "bypassPermissions",
                        CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS="1")
        assert done.returncode == 0, done.stderr
        run_id = done.stdout.splitlines()[0]
        kinds = [json.loads(line)["type"] for line in (files_root(tmp_path) / run_id / "journal.jsonl").read_text().splitlines()]
        assert kinds == ["launched"] + ["started", "result"] * 4
        bad = workflow(tmp_path, server, "run", "fan.js", CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS="many")
    assert bad.returncode == 1 and "CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS" in bad.stderr
    assert "Traceback" not in bad.stderr


PYTHON_WORKFLOW = '''
from pydantic import BaseModel

from catui.workflows import agent, log, parallel, phase, workflow


class Count(BaseModel):
    files: int


@workflow
async def review(args):
    await phase("Read")
    a, b = await parallel([lambda: agent("Look at area alpha"), lambda: agent("Look at area beta")])
    counted = await agent("Count the files", schema=Count)
    assert isinstance(counted, Count)
    await log("counted")
    return {"a": a, "b": b, "files": counted.files, "topic": args["topic"]}
'''


def test_a_python_workflow_runs_from_the_cli(tmp_path: Path) -> None:
    turns = [answer("area alpha", "alpha is fine"), answer("area beta", "beta needs tests"),
             *structured("Count the files", {"files": 7})]
    (tmp_path / "review.py").write_text(PYTHON_WORKFLOW, encoding="utf-8")
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(tmp_path, server, "run", "review.py", "--args", '{"topic": "auth"}',
                        "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[1]) == {"a": "alpha is fine", "b": "beta needs tests",
                                                           "files": 7, "topic": "auth"}
        counting = [r.body for r in server.requests if "Count the files" in json.dumps(r.body["messages"][0])]
        assert counting[0]["tools"][-1]["input_schema"]["required"] == ["files"]


def test_bad_input_gets_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "ok.js").write_text("return 1\n")
    with AnthropicTestServer({"turns": []}) as server:
        bad_args = workflow(tmp_path, server, "run", "ok.js", "--args", "{nope")
        missing = workflow(tmp_path, server, "show", "wf_00000000-000")
        wrong_kind = workflow(tmp_path, server, "run", "tasks.txt")
    assert bad_args.returncode != 0 and "--args is not JSON" in bad_args.stderr
    assert missing.returncode != 0 and "no workflow run wf_00000000-000" in missing.stderr
    assert wrong_kind.returncode != 0 and "a workflow is a .js or .py file" in wrong_kind.stderr
    for done in (bad_args, missing, wrong_kind):
        assert "Traceback" not in done.stderr
