"""Conformance: the real CLI against the loopback Anthropic server, asserting on what catui sends and returns.

Each test runs ``python -m catui -p …`` in a subprocess (HOME and CATUI_HOME in
tmp, cwd a tmp git repo) against tests/support/anthropic_server.py, then
checks the recorded requests (child model, tools, max_tokens, temperature,
system prompt, first message) and the tool_results the parent received,
against what Claude Code 2.1.92 was observed to do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

ROOT = Path(__file__).resolve().parents[1]
SONNET, HAIKU, OPUS = "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "claude-opus-4-6"
BASE_CHILD_TOOLS = ["Bash", "Glob", "Grep", "Read", "TodoWrite", "WebFetch"]
BIG = 100_000 + 2_345


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".catui" / "agents").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Project rule: tabs, never spaces.\n")
    (repo / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep, Agent\nmodel: haiku\n---\n\n"
        "  You are a careful code reviewer.  \n\n"
    )
    (repo / ".catui" / "agents" / "auditor.md").write_text(
        "---\nname: auditor\ndescription: Audits the code.\ndisallowedTools: [Bash, Write]\n---\nYou audit code.\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first"],
                   check=True)
    return repo


def run_cli(tmp_path: Path, server: AnthropicTestServer, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", prompt, *args],
        cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60,
    )


def agent_call(tool_id: str, prompt: str, subagent_type: str | None = None, *, name: str = "Agent",
               **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"description": f"job {tool_id}", "prompt": prompt}
    if subagent_type is not None:
        args["subagent_type"] = subagent_type
    args.update(extra)
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def requests_for(server: AnthropicTestServer, marker: str) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if marker in first_user_text(b)]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def system_parts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for b in body["system"]]


def final_tool_results(server: AnthropicTestServer, marker: str) -> list[dict[str, Any]]:
    last = [b for b in requests_for(server, marker) if b["messages"][-1]["role"] == "user"][-1]
    return [b for b in last["messages"][-1]["content"] if b.get("type") == "tool_result"]


SCENARIO: dict[str, Any] = {"turns": [
    {"name": "parent", "match": {"first_user_contains": "PARENT-A", "last_is_tool_result": False}, "content": [
        agent_call("toolu_explore", "EXPLORE-JOB: find the config loader", "Explore"),
        agent_call("toolu_plan", "PLAN-JOB", "Plan"),
        agent_call("toolu_gp", "GP-JOB", name="Task"),
        agent_call("toolu_opus", "OPUS-JOB", "general-purpose", model="opus"),
        agent_call("toolu_allow", "ALLOW-JOB", "reviewer"),
        agent_call("toolu_deny", "DENY-JOB", "auditor"),
        agent_call("toolu_unknown", "NOPE-JOB", "nope"),
        agent_call("toolu_err", "ERR-JOB", "Explore"),
        agent_call("toolu_big", "BIG-JOB", "Plan"),
    ]},
    # Explore's first answer is slow, so general-purpose's two turns happen while it waits.
    {"name": "explore-1", "match": {"first_user_contains": "EXPLORE-JOB", "last_is_tool_result": False},
     "delay_ms": 400, "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}}]},
    {"name": "explore-2", "match": {"first_user_contains": "EXPLORE-JOB", "last_is_tool_result": True},
     "content": text("The loader is in config.py."), "usage": {"input_tokens": 120, "output_tokens": 30}},
    {"name": "gp-1", "match": {"first_user_contains": "GP-JOB", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "CLAUDE.md"}}]},
    {"name": "gp-2", "match": {"first_user_contains": "GP-JOB", "last_is_tool_result": True},
     "content": text("GP finished."), "usage": {"input_tokens": 200, "output_tokens": 50,
                                                "cache_read_input_tokens": 7}},
    {"match": {"first_user_contains": "PLAN-JOB"}, "content": text("1. Do it.")},
    {"match": {"first_user_contains": "OPUS-JOB"}, "content": text("opus says hi")},
    {"match": {"first_user_contains": "ALLOW-JOB"}, "content": text("looks fine")},
    {"match": {"first_user_contains": "DENY-JOB"}, "content": text("audited")},
    {"match": {"first_user_contains": "ERR-JOB"}, "repeat": True,
     "error": {"status": 500, "type": "api_error", "message": "server exploded"}},
    {"match": {"first_user_contains": "BIG-JOB"}, "content": text("y" * BIG)},
    {"name": "parent-final", "match": {"first_user_contains": "PARENT-A", "last_is_tool_result": True},
     "content": text("ALL DONE")},
]}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[AnthropicTestServer, dict[str, Any], Path]:
    tmp_path = tmp_path_factory.mktemp("scenario")
    with AnthropicTestServer(SCENARIO) as server:
        done = run_cli(tmp_path, server, "PARENT-A: investigate", "--output-format", "json")
        assert done.returncode == 0, done.stderr
        yield server, json.loads(done.stdout), tmp_path  # type: ignore[misc]


def test_explore_request(scenario: Any) -> None:
    server, _, tmp_path = scenario
    first = requests_for(server, "EXPLORE-JOB")[0]
    assert first["model"] == HAIKU and first["max_tokens"] == 32000 and first["temperature"] == 1
    assert "thinking" not in first
    names = tool_names(first)
    assert names == sorted(names) and set(BASE_CHILD_TOOLS) <= set(names)
    assert {"EnterWorktree", "ExitWorktree"} <= set(names)  # observed section 2: children get both
    for absent in ("Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop",
                   "Edit", "Write", "NotebookEdit"):
        assert absent not in names
    parts = system_parts(first)
    assert parts[1].startswith("Notes:\n") and "Working directory: " + str(tmp_path / "repo") in parts[2]
    assert not any("gitStatus" in p for p in parts)
    content = first["messages"][0]["content"]
    assert len(first["messages"]) == 1 and len(content) == 2
    assert content[0]["text"].startswith("<system-reminder>") and "tabs, never spaces" not in content[0]["text"]
    assert content[1]["text"] == "EXPLORE-JOB: find the config loader"


def test_plan_and_general_purpose_requests(scenario: Any) -> None:
    server, _, _ = scenario
    plan = requests_for(server, "PLAN-JOB")[0]
    gp = requests_for(server, "GP-JOB")[0]
    explore_tools = tool_names(requests_for(server, "EXPLORE-JOB")[0])
    assert plan["model"] == SONNET and plan["max_tokens"] == 32000 and tool_names(plan) == explore_tools
    assert gp["model"] == SONNET and gp["max_tokens"] == 32000 and gp["temperature"] == 1
    assert tool_names(gp) == sorted([*explore_tools, "Edit", "NotebookEdit", "Write"])
    assert any(p.startswith("gitStatus") for p in system_parts(gp))
    assert "Project rule: tabs, never spaces." in gp["messages"][0]["content"][0]["text"]
    assert gp["messages"][0]["content"][1]["text"] == "GP-JOB"


def test_model_override_and_custom_agents(scenario: Any) -> None:
    server, _, _ = scenario
    opus = requests_for(server, "OPUS-JOB")[0]
    assert opus["model"] == OPUS and opus["max_tokens"] == 64000
    allow = requests_for(server, "ALLOW-JOB")[0]
    assert allow["model"] == HAIKU and tool_names(allow) == ["Grep", "Read"]
    assert system_parts(allow)[0] == "You are a careful code reviewer."
    deny = requests_for(server, "DENY-JOB")[0]
    gp_tools = tool_names(requests_for(server, "GP-JOB")[0])
    assert deny["model"] == SONNET and tool_names(deny) == [n for n in gp_tools if n not in ("Bash", "Write")]


def test_parallel_children_interleave_and_results_keep_tool_use_order(scenario: Any) -> None:
    server, _, _ = scenario
    order = [first_user_text(b) for b in server.bodies()]
    explore = [i for i, t in enumerate(order) if "EXPLORE-JOB" in t]
    gp = [i for i, t in enumerate(order) if "GP-JOB" in t]
    assert len(explore) == 2 and len(gp) == 2
    # general-purpose started and finished while Explore's first request was still being answered.
    assert explore[0] < gp[1] and gp[0] < explore[1]
    results = final_tool_results(server, "PARENT-A")
    assert [r["tool_use_id"] for r in results] == [
        "toolu_explore", "toolu_plan", "toolu_gp", "toolu_opus", "toolu_allow", "toolu_deny", "toolu_unknown",
        "toolu_err", "toolu_big",
    ]


def test_tool_results_in_observed_formats(scenario: Any) -> None:
    server, result, _ = scenario
    by_id = {r["tool_use_id"]: r for r in final_tool_results(server, "PARENT-A")}
    assert by_id["toolu_explore"]["content"] == text("The loader is in config.py.")
    assert by_id["toolu_plan"]["content"] == text("1. Do it.")
    assert "is_error" not in by_id["toolu_explore"]
    gp = by_id["toolu_gp"]["content"]
    assert gp[0] == {"type": "text", "text": "GP finished."}
    trailer = gp[1]["text"]
    agent_id = trailer.split()[1]
    assert len(agent_id) == 17 and agent_id.startswith("a")
    assert trailer.startswith(f"agentId: {agent_id} (use SendMessage with to: '{agent_id}' to continue this agent)\n"
                              "<usage>total_tokens: 257\ntool_uses: 1\nduration_ms: ")
    assert trailer.endswith("</usage>")
    for key in ("toolu_opus", "toolu_allow", "toolu_deny"):
        assert by_id[key]["content"][1]["text"].startswith("agentId: a")
    assert by_id["toolu_unknown"] == {
        "type": "tool_result", "tool_use_id": "toolu_unknown", "is_error": True,
        "content": "Agent type 'nope' not found. Available agents: general-purpose, statusline-setup, Explore, Plan, "
                   "reviewer, auditor",
    }
    assert by_id["toolu_err"]["is_error"] is True and "server exploded" in json.dumps(by_id["toolu_err"]["content"])
    big = by_id["toolu_big"]["content"][0]["text"]
    assert big.startswith("y" * 100_000) and "2,345" in big and not big.startswith("y" * 100_001)
    assert result["result"] == "ALL DONE" and result["is_error"] is False
    assert {SONNET, HAIKU, OPUS} <= set(result["modelUsage"])
    assert result["modelUsage"][HAIKU]["inputTokens"] >= 120


def test_child_transcripts_and_telemetry(scenario: Any) -> None:
    _, result, tmp_path = scenario
    home = tmp_path / "catui-home"
    subagents = list(home.glob(f"projects/*/{result['session_id']}/subagents"))
    assert len(subagents) == 1
    metas = [json.loads(p.read_text()) for p in subagents[0].glob("agent-*.meta.json")]
    assert {(m["agentType"], m["description"]) for m in metas} >= {("Explore", "job toolu_explore"),
                                                                    ("reviewer", "job toolu_allow")}
    explore = next(m for m in metas if m["agentType"] == "Explore")
    assert explore["model"] == HAIKU and explore["modelReason"]
    records = [json.loads(line) for line in (home / "telemetry.jsonl").read_text().splitlines()]
    completed = [r for r in records if r["event"] == "catui_agent_tool_completed"]
    assert len(completed) == 8  # every child that started (not the unknown type)
    opus = next(r for r in records if r["event"] == "catui_agent_tool_selected" and r["model"] == OPUS)
    assert opus["model_reason"] == "call" and opus["is_built_in_agent"] is True and opus["is_fork"] is False


def test_stream_json_denied_type_and_task_events(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"first_user_contains": "PARENT-B", "last_is_tool_result": False},
         "content": [agent_call("toolu_1", "EXPLORE-B", "Explore")]},
        {"match": {"first_user_contains": "PARENT-B", "last_user_contains": "has been denied"},
         "content": [agent_call("toolu_2", "PLAN-B", "Plan")]},
        {"match": {"first_user_contains": "PLAN-B"}, "content": text("the plan"),
         "usage": {"input_tokens": 10, "output_tokens": 5}},
        {"match": {"first_user_contains": "PARENT-B", "last_user_contains": "the plan"}, "content": text("ok")},
    ]}
    with AnthropicTestServer(script) as server:
        # --forward-subagent-text: the child's answer is shown too (by default only its prompt and calls are)
        done = run_cli(tmp_path, server, "PARENT-B", "--output-format", "stream-json", "--verbose",
                       "--forward-subagent-text",
                       "--disallowedTools", "Agent(Explore)")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert not requests_for(server, "EXPLORE-B")
    denied = next(b for line in lines if line["type"] == "user" for b in line["message"]["content"]
                  if b.get("tool_use_id") == "toolu_1")
    assert denied["is_error"] is True
    assert denied["content"] == "Agent type 'Explore' has been denied by permission rule 'Agent(Explore)' from cliArg."
    started = [line for line in lines if line["type"] == "system" and line.get("subtype") == "task_started"]
    assert len(started) == 1
    assert {k: started[0][k] for k in ("tool_use_id", "description", "task_type", "prompt")} == {
        "tool_use_id": "toolu_2", "description": "job toolu_2", "task_type": "local_agent", "prompt": "PLAN-B"}
    child = [line for line in lines if line.get("parent_tool_use_id") == "toolu_2"]
    assert [line["type"] for line in child] == ["user", "assistant"]
    assert child[1]["message"]["content"] == text("the plan")
    carrying = next(line for line in lines if line["type"] == "user" and "tool_use_result" in line
                    and line.get("parent_tool_use_id") is None)
    result = carrying["tool_use_result"]
    # Claude Code's keys in its order, then catui's model-resolution trace (issue 18).
    assert list(result) == ["status", "prompt", "agentId", "agentType", "content", "totalDurationMs", "totalTokens",
                            "totalToolUseCount", "usage", "modelResolution"]
    assert result["status"] == "completed" and result["agentType"] == "Plan" and result["prompt"] == "PLAN-B"
    assert result["content"] == text("the plan") and result["totalTokens"] == 15 and result["totalToolUseCount"] == 0
    assert result["usage"]["input_tokens"] == 10 and result["usage"]["output_tokens"] == 5
    assert started[0]["task_id"] == result["agentId"]
    progress = [line for line in lines if line["type"] == "system" and line.get("subtype") == "task_progress"]
    assert progress and {k: progress[-1][k] for k in ("task_id", "tool_use_id", "description", "last_tool_name")} == {
        "task_id": result["agentId"], "tool_use_id": "toolu_2", "description": "job toolu_2", "last_tool_name": None}
    assert progress[-1]["usage"]["total_tokens"] == 15 and progress[-1]["usage"]["tool_uses"] == 0
    notifications = [line for line in lines if line["type"] == "system" and line.get("subtype") == "task_notification"]
    assert len(notifications) == 1
    notification = notifications[0]
    assert {k: notification[k] for k in ("task_id", "tool_use_id", "status", "summary")} == {
        "task_id": result["agentId"], "tool_use_id": "toolu_2", "status": "completed",
        "summary": 'Agent "job toolu_2" completed'}
    assert list(notification["usage"]) == ["total_tokens", "tool_uses", "duration_ms"]
    assert notification["usage"]["total_tokens"] == 15 and notification["usage"]["tool_uses"] == 0
    transcript = Path(notification["output_file"])  # the child's own transcript, one line per message
    assert transcript.name == f"agent-{result['agentId']}.jsonl"
    assert [json.loads(line)["type"] for line in transcript.read_text().splitlines()] == ["user", "assistant"]
    # started → the child's messages → progress → notification → the parent's tool_result
    order = [lines.index(x) for x in (started[0], child[0], child[1], progress[-1], notification, carrying)]
    assert order == sorted(order)
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "ok"
