"""The Workflow tool through the real CLI (print mode, stream-json) against the loopback Anthropic server:
offered by profile, launch text and tool_use_result, agents as children, the task-notification with the
result JSON and counts, the files, the stream events, errors (unknown name, parse error), resumeFromRunId."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import CURRENT, first_user_text, stream_run, text, tool_names

SCRIPT = """export const meta = { name: "pair", description: "Ask two things", phases: [{title: "Ask"}] }
phase("Ask")
const [a, b] = await parallel([() => agent("Question alpha"), () => agent("Question beta", {label: "beta"})])
log("asked")
return {a, b, n: args.n}
"""


def workflow_call(tool_id: str, **input_: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Workflow", "input": input_}


def script(call: dict[str, Any]) -> dict[str, Any]:
    return {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
        {"match": {"first_user_contains": "Question alpha"}, "content": text("alpha answer"), "repeat": True},
        {"match": {"first_user_contains": "Question beta"}, "content": text("beta answer"), "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "content": [call], "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
         "repeat": True},
    ]}


def tool_result_of(lines: list[dict[str, Any]], tool_id: str) -> tuple[dict[str, Any], Any]:
    for line in lines:
        if line.get("type") != "user":
            continue
        for block in line["message"]["content"]:
            if isinstance(block, dict) and block.get("tool_use_id") == tool_id:
                return block, line.get("tool_use_result")
    raise AssertionError(f"no tool_result for {tool_id}")


def entries_of(progress: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for x in progress for e in x["workflow_progress"] if e["type"] == "workflow_agent"]


def test_the_tool_is_offered_by_profile(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    with AnthropicTestServer({"turns": [{"content": text("hi"), "repeat": True}]}) as server:
        for env, extra, offered in ((CURRENT, (), True), ({}, (), False),
                                    ({}, ("--settings", json.dumps({"workflows": True})), True),
                                    ({**CURRENT, "CLAUDE_CODE_DISABLE_WORKFLOWS": "1"}, (), False)):
            before = len(server.requests)
            done, _ = stream_run(repo, cli_env(tmp_path, server, **env), "Hello", *extra)
            assert done.returncode == 0, done.stderr
            body = server.requests[before].body
            assert ("Workflow" in tool_names(body)) is offered, (env, extra)
            if offered:
                assert "Skill" in tool_names(body)  # the built-in workflow-authoring skill


def test_a_script_runs_in_the_background_and_notifies(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    call = workflow_call("toolu_wf1", script=SCRIPT, args={"n": 3})
    with AnthropicTestServer(script(call)) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it",
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        block, data = tool_result_of(lines, "toolu_wf1")
        launch = block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        assert not block.get("is_error")
        task_id = re.search(r"Task ID: (w[0-9a-z]{8})\n", launch)
        run_id = re.search(r"Run ID: (wf_[0-9a-f]{8}-[0-9a-f]{3})\n", launch)
        assert task_id and run_id and launch.startswith("Workflow launched in background. Task ID: ")
        assert "Summary: Ask two things\n" in launch and launch.endswith("Use /workflows to watch live progress.")
        assert data["status"] == "async_launched" and data["taskType"] == "local_workflow"
        assert data["runId"] == run_id.group(1) and data["workflowName"] == "pair"
        script_file = Path(data["scriptPath"])
        assert script_file.read_text() == SCRIPT and script_file.name == f"pair-{run_id.group(1)}.js"

        # The agents are children without Workflow or Agent in their tools.
        child = next(r.body for r in server.requests if "Question alpha" in first_user_text(r.body))
        assert "Workflow" not in tool_names(child) and "Agent" not in tool_names(child)

        # The notification: result JSON, diagnostics with the resume call, counts in order.
        noted = next(r.body for r in server.requests if "<task-notification>" in json.dumps(r.body["messages"][-1]))
        note = json.dumps(noted["messages"][-1])
        note = json.loads(note)["content"]
        note_text = note if isinstance(note, str) else "".join(b.get("text", "") for b in note)
        assert f"<task-id>{task_id.group(1)}</task-id>" in note_text
        assert "<tool-use-id>toolu_wf1</tool-use-id>" in note_text
        assert '<summary>Dynamic workflow "Ask two things" completed</summary>' in note_text
        assert '<result>{"a":"alpha answer","b":"beta answer","n":3}</result>' in note_text
        assert f"resumeFromRunId: '{run_id.group(1)}'" in note_text
        usage = re.search(r"<usage>(.*)</usage>", note_text)
        assert usage is not None
        assert re.findall(r"<(\w+)>", usage.group(1)) == [
            "agent_count", "agents_done", "agents_error", "agents_skipped", "agents_empty_result",
            "subagent_tokens", "tool_uses", "duration_ms"]
        assert "<agent_count>2</agent_count><agents_done>2</agents_done>" in note_text

        # Stream events.
        started = [x for x in lines if x.get("subtype") == "task_started" and x.get("task_type") == "local_workflow"]
        assert started and started[0]["workflow_name"] == "pair" and started[0]["prompt"] == SCRIPT
        progress = [x for x in lines if x.get("subtype") == "task_progress" and "workflow_progress" in x]
        entries = progress[-1]["workflow_progress"]
        assert {"type": "workflow_phase", "title": "Ask"} in entries
        assert {e["state"] for e in entries if e["type"] == "workflow_agent"} == {"start", "done"}
        finished = [x for x in lines if x.get("subtype") == "task_notification" and x.get("task_id") == task_id.group(1)]
        assert finished and finished[0]["status"] == "completed"

        # Files: the record beside the script copy; the journal under subagents/workflows/<run id>.
        record = json.loads((script_file.parent.parent / f"{run_id.group(1)}.json").read_text())
        assert record["status"] == "completed" and record["taskId"] == task_id.group(1)
        assert record["result"] == {"a": "alpha answer", "b": "beta answer", "n": 3} and record["logs"] == ["asked"]
        journal = Path(data["transcriptDir"]) / "journal.jsonl"
        assert journal.parent.parent.name == "workflows" and journal.parent.parent.parent.name == "subagents"
        assert sum(1 for line in journal.read_text().splitlines() if '"type": "result"' in line) == 2
        output = json.loads(Path(finished[0]["output_file"]).read_text())
        assert output["result"]["a"] == "alpha answer" and output["agentCount"] == 2
        assert set(record) >= {"runId", "timestamp", "taskId", "script", "scriptPath", "args", "result", "agentCount",
                               "logs", "durationMs", "summary", "workflowName", "status", "startTime", "phases",
                               "defaultModel", "workflowProgress", "totalTokens", "totalToolCalls"}

        # Per-agent transcripts and meta in the run's folder (observed-cc-now.md §7), none among the session's.
        entries = [json.loads(line) for line in journal.read_text().splitlines()]
        started_ids = {e["label"]: e["agentId"] for e in entries if e["type"] == "started"}
        assert set(started_ids) == {"Question alpha", "beta"}
        assert {e["agentId"] for e in entries if e["type"] == "result"} == set(started_ids.values())
        session_id = journal.parent.parent.parent.parent.name
        assert all(list(e)[:5] == ["type", "key", "agentId", "result", "remoteControlDeviceReport"]
                   and e["sessionId"] == session_id for e in entries if e["type"] == "result")
        for label, agent_id in started_ids.items():
            meta = json.loads((journal.parent / f"agent-{agent_id}.meta.json").read_text())
            assert meta["agentType"] == "workflow-subagent" and meta["description"] == label
            assert meta["workflowPhase"] == "Ask" and meta["inWorkflowRun"] is True
            transcript = (journal.parent / f"agent-{agent_id}.jsonl").read_text()
            assert ("alpha answer" if label == "Question alpha" else "beta answer") in transcript
        assert not list((journal.parent.parent.parent).glob("agent-*"))  # <session>/subagents/ has none

        # stream-json: the workflow's own task events only; its agents are entries of workflow_progress.
        assert {x["task_id"] for x in lines if x.get("type") == "system" and "task_id" in x} == {task_id.group(1)}
        assert not [x for x in lines if x.get("parent_tool_use_id")]
        starts = [e for e in entries_of(progress) if e.get("state") == "start"]
        assert {e["agentId"] for e in starts} == set(started_ids.values())
        assert all(e["phase"] == "Ask" for e in starts)

    # resumeFromRunId (a new process): both results are journaled, so no agent runs again.
    resume_call = workflow_call("toolu_wf2", scriptPath=str(script_file), resumeFromRunId=run_id.group(1), args={"n": 3})
    with AnthropicTestServer(script(resume_call)) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it",
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        block, data = tool_result_of(lines, "toolu_wf2")
        assert data["runId"] == run_id.group(1)
        assert not [r for r in server.requests if "Question" in first_user_text(r.body)]
        last_note = json.dumps([r.body for r in server.requests if "toolu_wf2" in json.dumps(r.body["messages"][-1])])
        assert "<agents_skipped>2</agents_skipped>" in last_note
        assert '<result>{\\"a\\":\\"alpha answer\\",\\"b\\":\\"beta answer\\",\\"n\\":3}</result>' in last_note


def test_unknown_name_and_parse_error_are_tool_errors(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    calls = [workflow_call("toolu_n", name="nope"),
             workflow_call("toolu_p", script='export const meta = {name: "x"}\nconst y = ;\n')]
    turns = {"turns": [
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("ok")}]}
    with AnthropicTestServer(turns) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it", "--permission-mode", "bypassPermissions")
    assert done.returncode == 0, done.stderr
    unknown, _ = tool_result_of(lines, "toolu_n")
    parse, _ = tool_result_of(lines, "toolu_p")
    assert unknown["is_error"] and parse["is_error"]
    unknown_text = json.dumps(unknown["content"])
    assert 'Workflow \\"nope\\" not found. Available: deep-research' in unknown_text
    parse_text = parse["content"] if isinstance(parse["content"], str) else parse["content"][0]["text"]
    assert parse_text.startswith("<tool_use_error>Invalid workflow script: Script parse error: ")
    assert "(2:11)\n\nconst y = ;\n          ^\n\n" in parse_text
