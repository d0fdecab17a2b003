"""A workflow's limits and failures through the real CLI against the loopback Anthropic server: the per-agent
limits (maxTokens, timeout) of the agent type an ``agent()`` call names reject that call; a workflow ``budget``
in dollars stops new agents once spent; the session's ``--max-budget-usd`` stops a running workflow; a failing
agent is counted and caught and a throwing script ends the run ``failed`` (the Workflow tool); TaskStop of a
running run stops its agents, records it ``stopped`` and leaves a journal that ``catui workflow resume``
finishes from; a workflow agent is never auto-backgrounded; a running run is among the Stop hooks'
``background_tasks``."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import CURRENT, DynamicServer, first_user_text, stream_run, text
from tests.support.workflow_cli import TIMEOUT_S, answer, journal_of, records, workflow

MODEL = ("--model", "claude-sonnet-4-5")  # a priced model: costs are known


def test_per_agent_limits_reject_the_call_and_the_script_catches_them(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "frugal.md").write_text("---\nname: frugal\ndescription: Few tokens.\nmaxTokens: 100\n---\nBe brief.\n")
    (agents / "hasty.md").write_text("---\nname: hasty\ndescription: Little time.\ntimeout: 1s\n---\nBe quick.\n")
    (repo / "limits.js").write_text(
        'const out = {}\n'
        'try { out.tokens = await agent("Token heavy work", {agentType: "frugal"}) } catch (e) { out.tokens = e.message }\n'
        'try { out.slow = await agent("Slow work", {agentType: "hasty"}) } catch (e) { out.slow = e.message }\n'
        'out.fine = await agent("Fine work")\n'
        'return out\n')
    turns = [
        # the frugal agent's first answer already costs 5,000 tokens: it would go on (a tool call) but is stopped
        {"match": {"first_user_contains": "Token heavy work"}, "repeat": True, "usage": {"input_tokens": 5000},
         "content": [{"type": "text", "text": "Looking."},
                     {"type": "tool_use", "name": "Bash", "input": {"command": "echo more"}}]},
        # the hasty agent's model answers after 20 s; its 1 s timeout ends it long before
        answer("Slow work", "too late", delay_ms=20000),
        answer("Fine work", "fine"),
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(repo, tmp_path, server, "run", "limits.js", "--permission-mode", "bypassPermissions", *MODEL)
        assert done.returncode == 0, done.stderr
        value = json.loads(done.stdout.splitlines()[1])
        assert "maxTokens" in value["tokens"] and "stopped (budget_exceeded)" in value["tokens"]
        assert "timeout" in value["slow"] and "stopped (timed_out)" in value["slow"]
        assert value["fine"] == "fine"
        # the frugal agent never sent its second request (its limit stopped it after the first)
        assert sum("Token heavy work" in first_user_text(r.body) for r in server.requests) == 1
    (record,) = records(tmp_path)
    assert record["counts"]["agents_error"] == 2 and record["counts"]["agents_done"] == 1
    errors = [e for e in journal_of(record, tmp_path) if e["type"] == "error"]
    assert {e["label"] for e in errors} == {"Token heavy work", "Slow work"}


def test_a_workflow_budget_stops_new_agents_once_spent(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    (repo / "spend.js").write_text(
        'const first = await agent("Costly work")\n'
        'try { await agent("Second work"); return "both ran" }\n'
        'catch (e) { return {first, refused: e.message, spent: budget.spent(), total: budget.total,\n'
        '                    remaining: budget.remaining()} }\n')
    turns = [answer("Costly work", "costly answer", usage={"input_tokens": 100000}), answer("Second work", "second")]
    with AnthropicTestServer({"turns": turns}) as server:
        done = workflow(repo, tmp_path, server, "run", "spend.js", "--budget", "0.05", *MODEL)
        assert done.returncode == 0, done.stderr
        value = json.loads(done.stdout.splitlines()[1])
        assert value["first"] == "costly answer"
        assert "budget of $0.05 is spent" in value["refused"] and "'Second work' was not started" in value["refused"]
        assert value["spent"] >= 0.05 and value["total"] == 0.05 and value["remaining"] == 0
        assert not [r for r in server.requests if "Second work" in first_user_text(r.body)]
    (record,) = records(tmp_path)
    assert record["counts"]["agents_done"] == 1 and record["counts"]["agents_error"] == 1


def workflow_call(tool_id: str, script: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Workflow", "input": {"script": script}}


def main_turns(call: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False}, "content": [call], "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
         "repeat": True},
    ]


def notification_text(server: Any) -> str:
    for request in server.requests:
        last = json.dumps(request.body["messages"][-1])
        if "<task-notification>" in last:
            return str(json.loads(last)["content"] if isinstance(json.loads(last)["content"], str) else
                       "".join(b.get("text", "") for b in json.loads(last)["content"]))
    raise AssertionError("no task-notification reached the model")


def test_a_failing_agent_is_counted_and_a_throwing_script_fails_the_tool_run(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    script = ('export const meta = {name: "thrower", description: "Fails on purpose"}\n'
              'let caught = null\n'
              'try { await agent("Unscripted step") } catch (e) { caught = e.message }\n'
              'await agent("Fine work")\n'
              'throw new Error("gave up after: " + (caught ? "a caught failure" : "nothing"))\n')
    with AnthropicTestServer({"turns": [*main_turns(workflow_call("toolu_wf", script)),
                                        answer("Fine work", "fine")]}) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it",
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        note = notification_text(server)
    assert "<status>failed</status>" in note
    assert '<summary>Dynamic workflow "Fails on purpose" failed: gave up after: a caught failure</summary>' in note
    assert "<agent_count>2</agent_count><agents_done>1</agents_done><agents_error>1</agents_error>" in note
    assert "<result>" not in note
    (record,) = records(tmp_path)
    assert record["status"] == "failed" and record["error"] == "gave up after: a caught failure"
    finished = [x for x in lines if x.get("subtype") == "task_notification"]
    assert finished and finished[-1]["status"] == "failed"


def test_the_session_budget_stops_a_running_workflow(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    script = ('export const meta = {name: "spender", description: "Spends"}\n'
              'const a = await agent("Costly work")\n'
              'const b = await agent("Second work")\n'
              'return {a, b}\n')
    turns = [*main_turns(workflow_call("toolu_wf", script)),
             answer("Costly work", "costly answer", usage={"input_tokens": 100000}), answer("Second work", "second")]
    with AnthropicTestServer({"turns": turns}) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it", "--max-budget-usd", "0.05",
                                 "--permission-mode", "bypassPermissions", *MODEL)
        assert not [r for r in server.requests if "Second work" in first_user_text(r.body)]
    assert any(x.get("subtype") == "error_max_budget_usd" for x in lines if x.get("type") == "result"), done.stdout
    (record,) = records(tmp_path)
    assert record["status"] == "stopped"
    finished = [x for x in lines if x.get("subtype") == "task_notification"]
    assert finished and finished[-1]["status"] == "stopped"


class StoppingServer(DynamicServer):
    """Answers the main agent's turn after the launch with a TaskStop of the launched run (its task id is only
    known then), once the slow agents are running."""

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        last = json.dumps(body["messages"][-1])
        if "Run it" not in first_user_text(body) or "Workflow launched in background" not in last:
            return None
        found = re.search(r"Task ID: (w[0-9a-z]{8})", last)
        assert found is not None
        deadline = time.monotonic() + TIMEOUT_S / 2
        while sum("Slow step" in first_user_text(r.body) for r in list(self.requests)) < 2:
            if time.monotonic() > deadline:
                return text("the slow steps never started")
            time.sleep(0.05)
        return [{"type": "tool_use", "id": "toolu_stop", "name": "TaskStop", "input": {"task_id": found.group(1)}}]


STOPPABLE = """export const meta = {name: "long", description: "A long run", phases: [{title: "Work"}]}
phase("Work")
const first = await agent("Quick step")
const slow = await parallel([() => agent("Slow step one"), () => agent("Slow step two")])
return {first, slow}
"""


def test_task_stop_stops_a_running_workflow_and_resume_finishes_it(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": False},
         "content": [workflow_call("toolu_wf", STOPPABLE)], "repeat": True},
        {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("stopped it"),
         "repeat": True},
        answer("Quick step", "quick answer"),
        answer("Slow step", "slow answer", delay_ms=20000),  # still running when TaskStop comes
    ]
    with StoppingServer({"turns": turns}) as server:
        env = cli_env(tmp_path, server, **CURRENT, CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS="4")
        done, lines = stream_run(repo, env, "Run it", "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
        note = notification_text(server)
    stop_result = next(x for x in lines if x.get("type") == "user" and "toolu_stop" in json.dumps(x))
    assert "Stopped task w" in json.dumps(stop_result) and "status: stopped" in json.dumps(stop_result)
    assert "<status>stopped</status>" in note and 'Dynamic workflow "A long run" was stopped' in note
    (record,) = records(tmp_path)
    assert record["status"] == "stopped"
    journal = journal_of(record, tmp_path)
    assert [e["result"] for e in journal if e["type"] == "result"] == ["quick answer"]
    assert sorted(e["label"] for e in journal if e["type"] == "started") == ["Quick step", "Slow step one",
                                                                              "Slow step two"]

    # The journal is intact: a resume runs only the two slow steps and returns the whole value.
    quick = [answer("Quick step", "quick again"), answer("Slow step", "slow answer")]
    with AnthropicTestServer({"turns": quick}) as server:
        resumed = workflow(repo, tmp_path, server, "resume", record["runId"], "--permission-mode", "bypassPermissions")
        assert resumed.returncode == 0, resumed.stderr
        assert not [r for r in server.requests if "Quick step" in first_user_text(r.body)]
    assert json.loads(resumed.stdout.splitlines()[-1]) == {"first": "quick answer",
                                                           "slow": ["slow answer", "slow answer"]}
    (record,) = records(tmp_path)
    assert record["status"] == "completed"
    with AnthropicTestServer({"turns": []}) as server:  # the tool's run, seen from the command line
        listed = workflow(repo, tmp_path, server, "list")
        logs = workflow(repo, tmp_path, server, "logs", record["runId"])
    assert record["runId"] in listed.stdout and "completed" in listed.stdout
    assert "started: Slow step two" in logs.stdout and '"quick answer"' in logs.stdout


def test_a_workflow_agent_is_never_moved_to_the_background(tmp_path: Path) -> None:
    # Auto-background after 100 ms would hand the program a launch text instead of the slow agent's answer.
    repo = git_repo(tmp_path)
    (repo / "slow.js").write_text('return await agent("Slow but steady")\n')
    with AnthropicTestServer({"turns": [answer("Slow but steady", "steady answer", delay_ms=1500)]}) as server:
        done = workflow(repo, tmp_path, server, "run", "slow.js", "--permission-mode", "bypassPermissions",
                        CATUI_AUTO_BACKGROUND_MS="100")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[1]) == "steady answer"


class HookGatedServer(DynamicServer):
    """Answers the workflow's agent only once the main turn's Stop hook has logged its input (so the run is
    certainly running when that hook fires)."""

    def __init__(self, script: Any, log: Path) -> None:
        super().__init__(script)
        self.log = log

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if "Gated step" not in first_user_text(body):
            return None
        deadline = time.monotonic() + TIMEOUT_S / 2
        while not (self.log.exists() and self.log.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return text("gated answer")


def test_a_running_workflow_is_among_the_stop_hooks_background_tasks(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    log = tmp_path / "stop-hooks.jsonl"
    hook = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    settings = {"hooks": {"Stop": [{"hooks": [hook]}]}}
    script = 'export const meta = {name: "gated", description: "Waits for the hook"}\nreturn await agent("Gated step")\n'
    with HookGatedServer({"turns": main_turns(workflow_call("toolu_wf", script))}, log) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it", "--settings", json.dumps(settings),
                             "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    first, *later = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    (task,) = first["background_tasks"]
    assert task["type"] == "workflow" and task["name"] == "gated" and task["status"] == "running"
    assert task["description"] == "Waits for the hook" and re.fullmatch(r"w[0-9a-z]{8}", task["id"])
    assert later and later[-1]["background_tasks"] == []  # the notification's turn: the run is over
