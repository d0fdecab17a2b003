"""Nested sub-agents (maxSubagentSpawnDepth) through the real CLI against the loopback Anthropic server.

Three levels below the main agent with the cap at 3: the Agent tool is offered
to children below the cap whose definitions ask for it, never at the cap, never
to a definition without a tools list; results flow back up level by level, with
the depth in the trailer, stream-json's parent_tool_use_id chain and telemetry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

AGENTS = {
    "lead": "tools: Read, Agent",
    "mid": "tools: Read, Agent(leaf)",
    "leaf": "tools: ['*']",
    "plain": "",
}


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    folder = repo / ".claude" / "agents"
    folder.mkdir(parents=True)
    for name, tools in AGENTS.items():
        (folder / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: The {name} agent.\n{tools + chr(10) if tools else ''}---\nYou are {name}.\n"
        )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def call(tool_id: str, prompt: str, subagent_type: str, **extra: Any) -> dict[str, Any]:
    args = {"description": f"job {tool_id}", "prompt": prompt, "subagent_type": subagent_type, **extra}
    return {"type": "tool_use", "id": tool_id, "name": "Agent", "input": args}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def requests_for(server: AnthropicTestServer, marker: str) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if marker in first_user_text(b)]


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools", [])}


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"}


def content_text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def run_cli(tmp_path: Path, server: AnthropicTestServer, prompt: str, **env: str) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(tmp_path)
    return subprocess.run(
        # --forward-subagent-text: every agent's answer is in the stream, to follow the parent_tool_use_id chain
        [sys.executable, "-m", "catui", "-p", prompt, "--output-format", "stream-json", "--verbose",
         "--forward-subagent-text"],
        cwd=repo, env=cli_env(tmp_path, server, **env), capture_output=True, text=True, timeout=60,
    )


NESTED = {"turns": [
    {"match": {"first_user_contains": "NEST-MAIN", "last_is_tool_result": False},
     "content": [call("toolu_lead", "LEAD-JOB", "lead"), call("toolu_plain", "PLAIN-JOB", "plain")]},
    {"match": {"first_user_contains": "NEST-MAIN", "last_is_tool_result": True}, "content": text("all done")},
    {"match": {"first_user_contains": "PLAIN-JOB"}, "content": text("plain done")},
    {"match": {"first_user_contains": "LEAD-JOB", "last_is_tool_result": False},
     "content": [call("toolu_mid", "MID-JOB", "mid")]},
    {"match": {"first_user_contains": "LEAD-JOB", "last_is_tool_result": True}, "content": text("lead relays")},
    {"match": {"first_user_contains": "MID-JOB", "last_is_tool_result": False},
     "content": [call("toolu_leaf", "LEAF-JOB", "leaf"), call("toolu_refused", "NEVER-RUNS", "plain")]},
    {"match": {"first_user_contains": "MID-JOB", "last_is_tool_result": True}, "content": text("mid relays")},
    {"match": {"first_user_contains": "LEAF-JOB"}, "content": text("leaf says 42")},
]}


def test_nesting_to_depth_three_honours_the_cap_and_results_flow_up(tmp_path: Path) -> None:
    with AnthropicTestServer(NESTED) as server:
        done = run_cli(tmp_path, server, "NEST-MAIN", CATUI_MAX_SUBAGENT_SPAWN_DEPTH="3")
        assert done.returncode == 0, done.stderr
        main, lead, mid, leaf, plain = (requests_for(server, m)
                                        for m in ("NEST-MAIN", "LEAD-JOB", "MID-JOB", "LEAF-JOB", "PLAIN-JOB"))
        assert not requests_for(server, "NEVER-RUNS")
    # The Agent tool: below the cap for definitions that name it; not at the cap (leaf, depth 3, tools '*');
    # not for a definition without a tools list (plain, depth 1).
    assert "Agent" in tool_names(main[0])
    assert "Agent" in tool_names(lead[0]) and "Agent" in tool_names(mid[0])
    assert "Agent" not in tool_names(leaf[0]) and "Read" in tool_names(leaf[0])
    assert "Agent" not in tool_names(plain[0])
    # Results flow up, each level's trailer naming its depth (depth 1 keeps Claude Code's trailer).
    at_mid = results_of(mid[-1])
    assert "leaf says 42" in content_text(at_mid["toolu_leaf"]) and "depth: 3" in content_text(at_mid["toolu_leaf"])
    assert at_mid["toolu_refused"]["is_error"] is True
    assert "Agent type 'plain' is not one this agent (mid) may start" in content_text(at_mid["toolu_refused"])
    at_lead = results_of(lead[-1])
    assert "mid relays" in content_text(at_lead["toolu_mid"]) and "depth: 2" in content_text(at_lead["toolu_mid"])
    at_main = results_of(main[-1])
    assert "lead relays" in content_text(at_main["toolu_lead"]) and "depth:" not in content_text(at_main["toolu_lead"])

    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    def parent_of(answer: str) -> str | None:
        message = next(m for m in lines if m.get("type") == "assistant"
                       and any(b.get("text") == answer for b in m["message"]["content"]))
        return message["parent_tool_use_id"]  # type: ignore[no-any-return]
    assert parent_of("leaf says 42") == "toolu_leaf"
    assert parent_of("mid relays") == "toolu_mid"
    assert parent_of("lead relays") == "toolu_lead"
    assert parent_of("all done") is None
    nested_result = next(m for m in lines if m.get("type") == "user" and m.get("parent_tool_use_id") == "toolu_mid"
                         and m.get("tool_use_result", {}).get("agentType") == "leaf")
    assert nested_result["tool_use_result"]["depth"] == 3
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "all done"

    records = [json.loads(line) for line in (tmp_path / "catui-home" / "telemetry.jsonl").read_text().splitlines()]
    selected = {r["agent_type"]: r["depth"] for r in records if r["event"] == "catui_agent_tool_selected"}
    completed = {r["agent_type"]: r["depth"] for r in records if r["event"] == "catui_agent_tool_completed"}
    assert selected == completed == {"lead": 1, "plain": 1, "mid": 2, "leaf": 3}


SHALLOW = {"turns": [
    {"match": {"first_user_contains": "SHALLOW-MAIN", "last_is_tool_result": False},
     "content": [call("toolu_lead", "LEAD-JOB", "lead")]},
    {"match": {"first_user_contains": "SHALLOW-MAIN", "last_is_tool_result": True}, "content": text("ok")},
    {"match": {"first_user_contains": "LEAD-JOB", "last_is_tool_result": False},
     "content": [call("toolu_mid", "MID-JOB", "mid")]},
    {"match": {"first_user_contains": "LEAD-JOB", "last_is_tool_result": True}, "content": text("lead relays")},
    {"match": {"first_user_contains": "MID-JOB"}, "content": text("mid answers")},
]}


def test_cap_two_stops_at_the_grandchild_and_default_is_no_nesting(tmp_path: Path) -> None:
    with AnthropicTestServer(SHALLOW) as server:
        done = run_cli(tmp_path, server, "SHALLOW-MAIN", CATUI_MAX_SUBAGENT_SPAWN_DEPTH="2")
        assert done.returncode == 0, done.stderr
        lead, mid = requests_for(server, "LEAD-JOB"), requests_for(server, "MID-JOB")
    assert "Agent" in tool_names(lead[0])
    assert "Agent" not in tool_names(mid[0])  # mid asks for Agent(leaf) but sits at the cap
    assert "mid answers" in content_text(results_of(lead[-1])["toolu_mid"])

    # Without the setting children never nest, as in Claude Code 2.1.92: lead has no Agent tool.
    with AnthropicTestServer({"turns": [
        {"match": {"first_user_contains": "FLAT-MAIN", "last_is_tool_result": False},
         "content": [call("toolu_lead", "LEAD-JOB", "lead")]},
        {"match": {"first_user_contains": "FLAT-MAIN", "last_is_tool_result": True}, "content": text("ok")},
        {"match": {"first_user_contains": "LEAD-JOB"}, "content": text("flat lead")},
    ]}) as server:
        done = run_cli(tmp_path, server, "FLAT-MAIN")
        assert done.returncode == 0, done.stderr
        lead = requests_for(server, "LEAD-JOB")
    assert "Agent" not in tool_names(lead[0]) and "Read" in tool_names(lead[0])


def test_a_bad_cap_is_a_clear_error(tmp_path: Path) -> None:
    with AnthropicTestServer({"turns": [{"match": {}, "content": text("never")}]}) as server:
        done = run_cli(tmp_path, server, "hello", CATUI_MAX_SUBAGENT_SPAWN_DEPTH="deep")
    assert done.returncode != 0
    assert "CATUI_MAX_SUBAGENT_SPAWN_DEPTH='deep' is not a whole number" in done.stderr


def bg_notes(body: dict[str, Any]) -> str:
    return "\n".join(content_text(b) if b.get("type") == "tool_result" else str(b.get("text", ""))
                     for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                     for b in m["content"])


def test_a_depth_two_background_agent_notifies_its_own_parent(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"first_user_contains": "BG-MAIN", "last_user_contains": "<task-notification>"},
         "content": text("main heard lead")},
        {"match": {"first_user_contains": "BG-MAIN", "last_is_tool_result": False},
         "content": [call("toolu_lead", "LEAD-BG", "lead")]},
        {"match": {"first_user_contains": "BG-MAIN", "last_is_tool_result": True}, "content": text("main waits")},
        {"match": {"first_user_contains": "LEAD-BG", "last_user_contains": "<task-notification>"},
         "content": text("lead heard mid")},
        {"match": {"first_user_contains": "LEAD-BG", "last_is_tool_result": False},
         "content": [call("toolu_mid", "MID-BG", "mid", run_in_background=True)]},
        {"match": {"first_user_contains": "LEAD-BG", "last_is_tool_result": True}, "content": text("lead launched")},
        {"match": {"first_user_contains": "MID-BG"}, "content": text("mid finished its work"), "delay_ms": 200},
    ]}
    with AnthropicTestServer(script) as server:
        done = run_cli(tmp_path, server, "BG-MAIN", CATUI_MAX_SUBAGENT_SPAWN_DEPTH="2")
        assert done.returncode == 0, done.stderr
        main, lead = requests_for(server, "BG-MAIN"), requests_for(server, "LEAD-BG")
    # The lead (depth 1) got its background child's notification and continued with it ...
    woken = [b for b in lead if "<task-notification>" in bg_notes(b)]
    assert woken and "<tool-use-id>toolu_mid</tool-use-id>" in bg_notes(woken[-1])
    assert "mid finished its work" in bg_notes(woken[-1])
    # ... and the main session heard only from the lead, whose notification carries what it made of it.
    main_notes = [bg_notes(b) for b in main if "<task-notification>" in bg_notes(b)]
    assert main_notes and all("toolu_mid" not in note for note in main_notes)
    assert any("lead heard mid" in note for note in main_notes)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [m["result"] for m in lines if m.get("type") == "result"][-1] == "main heard lead"
