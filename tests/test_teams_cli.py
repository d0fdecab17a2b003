"""Agent teams through the real CLI (``python -m catui -p``) against the loopback Anthropic server.

Each test asserts on what the model was sent (every request the server recorded) and on the team's
files under the catui home. Teams are on through ``CATUI_AGENT_TEAMS=1``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.cli_env import run_catui as run_catui_in

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def run_catui(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_catui_in(repo, env, *args, timeout=GUARD_S)


def team_env(tmp_path: Path, server: AnthropicTestServer, **extra: str) -> dict[str, str]:
    return cli_env(tmp_path, server, CATUI_AGENT_TEAMS="1", **extra)


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def call(tool: str, tool_id: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": tool, "input": args}


def send(tool_id: str, to: str, message: Any, summary: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"to": to, "message": message}
    if summary is not None:
        args["summary"] = summary
    return call("SendMessage", tool_id, **args)


def user_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else "".join(b.get("text", "") for b in inner or []))
    return "".join(parts)


def last_user(body: dict[str, Any]) -> str:
    return user_text(body["messages"][-1])


def first_user(body: dict[str, Any]) -> str:
    return user_text(body["messages"][0])


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or []]


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)


def tool_results(bodies: list[dict[str, Any]], tool_id: str) -> list[dict[str, Any]]:
    """Every tool_result block answering ``tool_id`` (one per request that carried it; the same block)."""
    found = []
    for body in bodies:
        for message in body["messages"]:
            if message["role"] != "user" or isinstance(message["content"], str):
                continue
            found.extend(b for b in message["content"] if b.get("type") == "tool_result"
                         and b.get("tool_use_id") == tool_id)
    assert found, f"no tool_result for {tool_id}"
    return found


def result_text(bodies: list[dict[str, Any]], tool_id: str) -> str:
    block = tool_results(bodies, tool_id)[0]
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


LEAD_START = [
    {"name": "create", "match": {"first_user_contains": "Lead the team", "last_user_contains": "Lead the team"},
     "content": [call("TeamCreate", "toolu_create", team_name="alpha", description="demo team")]},
]


def lead_rules(turns: list[dict[str, Any]], marker: str = "Lead the team") -> list[dict[str, Any]]:
    """The lead's turns, each matched only on the lead's own conversation (its first message has ``marker``)."""
    return [{**t, "match": {**t["match"], "first_user_contains": marker}} for t in turns]


def lifecycle_turns() -> list[dict[str, Any]]:
    lead = lead_rules([
        *LEAD_START,
        {"name": "spawn", "match": {"last_user_contains": '"lead_agent_id":"team-lead@alpha"'},
         "content": [call("Agent", "toolu_spawn_w", description="write code", prompt="TASK-W compute 42",
                          name="worker", team_name="alpha"),
                     call("Agent", "toolu_spawn_h", description="review", prompt="TASK-H check things",
                          name="helper")]},
        {"name": "spawned", "match": {"last_user_contains": "Spawned successfully"}, "content": text("Team started.")},
        {"name": "broadcast", "match": {"last_user_contains": "[to helper] check request"},
         "content": [send("toolu_bcast", "*", "wrap up now", "wrap up")]},
        {"name": "broadcast sent", "match": {"last_user_contains": "Message broadcast to"},
         "content": text("Broadcast sent.")},
        {"name": "reminded", "match": {"last_user_contains": "still has active members"},
         "content": [call("TeamDelete", "toolu_delete_early")]},
        {"name": "ask shutdown", "match": {"last_user_contains": "Cannot cleanup team with 2 active member(s)"},
         "content": [send("toolu_sd_w", "worker", {"type": "shutdown_request", "reason": "all done"}),
                     send("toolu_sd_h", "helper", {"type": "shutdown_request", "reason": "all done"})]},
        {"name": "asked", "match": {"last_user_contains": "Shutdown request sent to"},
         "content": text("Waiting for approvals."), "repeat": True},
        {"name": "ask again", "match": {"last_user_contains": "shutdown_rejected"},
         "content": [send("toolu_sd_h2", "helper", {"type": "shutdown_request", "reason": "really done"})]},
        # Each approval tries TeamDelete: refused while the other teammate is still on the team.
        {"name": "delete", "match": {"last_user_contains": "shutdown_approved"},
         "content": [{"type": "tool_use", "name": "TeamDelete", "input": {}}], "repeat": True},
        {"name": "deleted", "match": {"last_user_contains": "Cleaned up directories"},
         "content": text("The team finished: 42 verified.")},
        {"name": "still active", "match": {"last_user_contains": "Cannot cleanup team with 1 active member(s)"},
         "content": text("Waiting."), "repeat": True},
        {"name": "noted", "match": {"last_user_contains": "<teammate-message"}, "content": text("Noted."),
         "repeat": True},
    ])
    worker = [
        {"name": "w shutdown", "match": {"first_user_contains": "TASK-W", "last_user_contains": "shutdown_request"},
         "content": [send("toolu_w_ok", "team-lead", {"type": "shutdown_response", "request_id": "r",
                                                       "approve": True})]},
        {"name": "w start", "match": {"first_user_contains": "TASK-W", "last_user_contains": "TASK-W"},
         "content": [send("toolu_w_lead", "team-lead", "worker result: 42", "result"),
                     send("toolu_w_peer", "helper", "please check 42", "check request")]},
        {"name": "w after", "match": {"first_user_contains": "TASK-W", "last_is_tool_result": True},
         "content": text("sent"), "repeat": True},
        {"name": "w noted", "match": {"first_user_contains": "TASK-W"}, "content": text("noted"), "repeat": True},
    ]
    helper = [
        {"name": "h reject", "match": {"first_user_contains": "TASK-H", "last_user_contains": "all done"},
         "content": [send("toolu_h_no", "team-lead", {"type": "shutdown_response", "request_id": "r",
                                                       "approve": False, "reason": "still checking"})]},
        {"name": "h approve", "match": {"first_user_contains": "TASK-H", "last_user_contains": "really done"},
         "content": [send("toolu_h_ok", "team-lead", {"type": "shutdown_response", "request_id": "r",
                                                       "approve": True})]},
        {"name": "h check", "match": {"first_user_contains": "TASK-H", "last_user_contains": "please check 42"},
         "content": [send("toolu_h_lead", "team-lead", "42 verified", "verified")]},
        {"name": "h after", "match": {"first_user_contains": "TASK-H", "last_is_tool_result": True},
         "content": text("done"), "repeat": True},
        {"name": "h idle", "match": {"first_user_contains": "TASK-H"}, "content": text("waiting"), "repeat": True},
    ]
    return [*lead, *worker, *helper]


def test_team_lifecycle_messages_broadcast_shutdown_and_delete(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer({"turns": lifecycle_turns()}) as server:
        env = team_env(tmp_path, server)
        done = run_catui(repo, env, "-p", "Lead the team", "--output-format", "stream-json", "--verbose")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    results = [e for e in events if e.get("type") == "result"]
    assert results[-1]["result"] == "The team finished: 42 verified."
    home = tmp_path / "catui-home"

    lead_bodies = [b for b in bodies if "Lead the team" in first_user(b)]
    worker_bodies = [b for b in bodies if "TASK-W" in first_user(b)]
    helper_bodies = [b for b in bodies if "TASK-H" in first_user(b)]
    assert len(lead_bodies) + len(worker_bodies) + len(helper_bodies) == len(bodies)
    # The lead is offered the team tools; the Agent schema has name, team_name and mode.
    assert {"TeamCreate", "TeamDelete", "SendMessage", "Agent"} <= set(tool_names(lead_bodies[0]))
    agent_schema = next(t for t in lead_bodies[0]["tools"] if t["name"] == "Agent")["input_schema"]
    assert list(agent_schema["properties"]) == ["description", "prompt", "subagent_type", "model",
                                                "run_in_background", "name", "team_name", "mode", "isolation"]
    offered = {t["name"]: t for t in lead_bodies[0]["tools"]}
    assert "Teams: once you have created a team with TeamCreate" in offered["Agent"]["description"]
    create_schema = offered["TeamCreate"]["input_schema"]
    assert list(create_schema["properties"]) == ["team_name", "description", "agent_type"]
    assert create_schema["required"] == ["team_name"] and create_schema["additionalProperties"] is False
    assert offered["TeamDelete"]["input_schema"]["properties"] == {}
    assert offered["SendMessage"]["input_schema"]["required"] == ["to", "message"]
    create = json.loads(result_text(bodies, "toolu_create"))
    assert create == {"team_name": "alpha", "team_file_path": str(home / "teams" / "alpha" / "config.json"),
                      "lead_agent_id": "team-lead@alpha"}
    assert result_text(bodies, "toolu_spawn_w") == (
        "Spawned successfully.\nagent_id: worker@alpha\nname: worker\nteam_name: alpha\n"
        "The agent is now running and will receive instructions via mailbox.")
    assert "agent_id: helper@alpha" in result_text(bodies, "toolu_spawn_h")

    # The teammate's request: tools, first message, system prompt, model.
    first = worker_bodies[0]
    never = {"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop", "TeamCreate",
             "TeamDelete"}
    assert tool_names(first) == sorted(set(tool_names(lead_bodies[0])) - never)  # the child set plus SendMessage
    assert {"Bash", "Edit", "Write", "Read", "SendMessage"} <= set(tool_names(first))
    assert first_user(first).endswith(
        '<teammate-message teammate_id="team-lead" summary="write code">\nTASK-W compute 42\n</teammate-message>')
    assert system_text(first).startswith(system_text(lead_bodies[0]))
    assert 'You are "worker" (agent id worker@alpha)' in system_text(first)
    assert "opus" in first["model"] and "opus" not in lead_bodies[0]["model"]

    # Teammate → lead and → peer; the peer's broadcast reaches the lead and the worker.
    to_lead = json.loads(result_text(bodies, "toolu_w_lead"))
    assert to_lead["success"] is True and to_lead["message"] == "Message sent to team-lead's inbox"
    assert to_lead["routing"] == {"sender": "worker", "senderColor": "blue", "target": "@team-lead",
                                  "targetColor": None, "summary": "result", "content": "worker result: 42"}
    broadcast = json.loads(result_text(bodies, "toolu_bcast"))
    assert broadcast["message"] == "Message broadcast to 2 teammate(s): worker, helper"
    assert broadcast["recipients"] == ["worker", "helper"]
    lead_inputs = [last_user(b) for b in lead_bodies]
    delivered = "\n".join(lead_inputs)
    assert '<teammate-message teammate_id="worker" color="blue">\nworker result: 42\n</teammate-message>' \
        in delivered
    assert '<teammate-message teammate_id="helper" color="green">\n42 verified\n</teammate-message>' in delivered
    idle = [json.loads(line) for line in delivered.splitlines() if '"type":"idle_notification"' in line]
    assert {i["from"] for i in idle} == {"worker", "helper"}
    # The lead broadcast only once the worker's idle notice named the peer it had messaged.
    assert next(i.get("summary") for i in idle if i["from"] == "worker") == "[to helper] check request"
    assert all(i["idleReason"] == "available" for i in idle)
    helper_inputs = "\n".join(last_user(b) for b in helper_bodies)
    assert '<teammate-message teammate_id="worker" color="blue" summary="check request">\nplease check 42' \
        in helper_inputs
    # Messages to a teammate are a turn of their own (string content), never appended to tool results.
    for body, received in [*((b, "wrap up now") for b in worker_bodies), *((b, "please check 42") for b in helper_bodies)]:
        for message in body["messages"]:
            if message["role"] == "user" and not isinstance(message["content"], str):
                results_text = json.dumps([b for b in message["content"] if b.get("type") == "tool_result"])
                assert received not in results_text
    for bodies_of in (worker_bodies, helper_bodies):
        assert any('<teammate-message teammate_id="team-lead" summary="wrap up">\nwrap up now' in last_user(b)
                   for b in bodies_of)

    # Shutdown: refused delete, rejection, approval, delete.
    refused = json.loads(result_text(bodies, "toolu_delete_early"))
    assert refused == {"success": False, "message": "Cannot cleanup team with 2 active member(s): worker, helper. "
                       "Use requestShutdown to gracefully terminate teammates first.", "team_name": "alpha"}
    assert not tool_results(bodies, "toolu_delete_early")[0].get("is_error")
    request = json.loads(result_text(bodies, "toolu_sd_w"))
    assert request["message"].startswith("Shutdown request sent to worker. Request ID: shutdown-")
    assert request["request_id"].endswith("@worker") and request["target"] == "worker"
    assert result_text(bodies, "toolu_h_no") == 'Shutdown rejected. Reason: "still checking". Continuing to work.'
    # An approving teammate stops at once: its last tool round is never sent back to the model.
    assert not any("toolu_h_ok" in json.dumps(b["messages"]) and "is now exiting" in json.dumps(b) for b in bodies)
    streamed = [e for e in events if e.get("type") == "user" and "toolu_h_ok" in json.dumps(e)]
    assert "Shutdown approved. Sent confirmation to team-lead. Agent helper is now exiting." in json.dumps(streamed)
    assert '"type":"shutdown_rejected"' in delivered and '"reason":"still checking"' in delivered
    deleted = [last_user(b) for b in lead_bodies if "Cleaned up directories" in last_user(b)]
    assert [json.loads(d) for d in deleted] == [
        {"success": True, "message": 'Cleaned up directories and worktrees for team "alpha"', "team_name": "alpha"}]
    assert not (home / "teams" / "alpha").exists()
    # The shutdown request reached the teammate ahead of anything else, as a teammate-message of JSON.
    shutdown_turn = next(last_user(b) for b in worker_bodies if "shutdown_request" in last_user(b))
    assert shutdown_turn.startswith('<teammate-message teammate_id="team-lead">\n{"type":"shutdown_request"')

    started = [e for e in events if e.get("type") == "system" and e.get("subtype") == "task_started"]
    assert sorted(e["task_id"] for e in started) == ["helper@alpha", "worker@alpha"]
    assert {e["task_type"] for e in started} == {"in_process_teammate"}
    inits = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    assert len(inits) == len(results) > 3  # each lead turn has its own init and result event
    assert any(e.get("type") == "assistant" and e.get("parent_tool_use_id") == "toolu_spawn_w" for e in events)


def idle_team_turns(teammate_reply_delay_ms: int = 0) -> list[dict[str, Any]]:
    lead = lead_rules([
        *LEAD_START,
        {"match": {"last_user_contains": '"lead_agent_id":"team-lead@alpha"'},
         "content": [call("Agent", "toolu_spawn", description="sit idle", prompt="TASK-I wait", name="idler")]},
        {"match": {"last_user_contains": "Spawned successfully"}, "content": text("Started.")},
        {"match": {"last_user_contains": "still has active members"}, "content": text("Final answer: leaving it.")},
        {"match": {"last_user_contains": "<teammate-message"}, "content": text("Noted."), "repeat": True},
    ])
    idler = [
        {"match": {"first_user_contains": "TASK-I", "last_user_contains": "shutdown_request"},
         "content": text("I will not answer that."), "delay_ms": teammate_reply_delay_ms, "repeat": True},
        {"match": {"first_user_contains": "TASK-I"}, "content": text("idle"), "repeat": True},
    ]
    return [*lead, *idler]


def test_print_mode_ends_a_team_whose_teammate_never_answers(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer({"turns": idle_team_turns()}) as server:
        done = run_catui(repo, team_env(tmp_path, server), "-p", "Lead the team", "--output-format", "json")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Final answer: leaving it."
    lead_inputs = [last_user(b) for b in bodies if "Lead the team" in first_user(b)]
    # The reminder came once, and nothing followed the lead's answer to it: no loop.
    assert sum("still has active members: idler" in t for t in lead_inputs) == 1
    assert "still has active members" in lead_inputs[-1]
    idler_inputs = [last_user(b) for b in bodies if "TASK-I" in first_user(b)]
    assert '"type":"shutdown_request"' in idler_inputs[-1] and '"from":"team-lead"' in idler_inputs[-1]
    assert 'stopped teammate idler (did not approve the shutdown request' in done.stderr

    # The files: the member is gone from the config, why is recorded, inbox entries were marked read.
    team = tmp_path / "catui-home" / "teams" / "alpha"
    config = json.loads((team / "config.json").read_text())
    assert [m["name"] for m in config["members"]] == ["team-lead"]
    assert config["leadAgentId"] == "team-lead@alpha" and config["description"] == "demo team"
    assert "the lead ended its print-mode run" in config["shutdown"]["reason"]
    idler_box = json.loads((team / "inboxes" / "idler.json").read_text())
    assert idler_box and all(e["read"] for e in idler_box)
    assert set(idler_box[0]) == {"from", "text", "timestamp", "read"}
    lead_box = json.loads((team / "inboxes" / "team-lead.json").read_text())
    assert lead_box[0]["from"] == "idler" and lead_box[0]["color"] == "blue" and lead_box[0]["read"] is True

    env = team_env(tmp_path, server)
    listing = run_catui(repo, env, "teams")
    assert listing.returncode == 0 and listing.stdout.startswith("alpha  0 teammate(s)")
    shown = run_catui(repo, env, "teams", "show", "alpha")
    assert shown.returncode == 0 and "lead:         team-lead@alpha" in shown.stdout
    assert "idler: " in shown.stdout and "ended by catui:" in shown.stdout
    removed = run_catui(repo, env, "teams", "rm", "alpha")
    assert removed.returncode == 0 and not team.exists()
    missing = run_catui(repo, env, "teams", "show", "alpha")
    assert missing.returncode == 1 and "no team called 'alpha'" in missing.stderr


def test_print_mode_forces_a_stop_after_the_grace_period(tmp_path: Path, repo: Path) -> None:
    turns = idle_team_turns(teammate_reply_delay_ms=GUARD_S * 1000)
    with AnthropicTestServer({"turns": turns}) as server:
        env = team_env(tmp_path, server, CATUI_TEAM_SHUTDOWN_GRACE_MS="200")
        done = run_catui(repo, env, "-p", "Lead the team", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Final answer: leaving it."
    assert "stopped teammate idler (did not answer within 0.2 s" in done.stderr


def write_agent(repo: Path, name: str, header: str, body: str) -> None:
    folder = repo / ".catui" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{header}---\n{body}\n", encoding="utf-8")


def rules_turns() -> list[dict[str, Any]]:
    lead = lead_rules([
        {"match": {"last_user_contains": "Check the rules"},
         "content": [call("Agent", "toolu_nope", description="d", prompt="TASK-X", name="x", team_name="nope"),
                     call("TeamCreate", "toolu_create", team_name="alpha")]},
        {"match": {"last_user_contains": '"lead_agent_id":"team-lead@alpha"'},
         "content": [call("TeamCreate", "toolu_again", team_name="beta"),
                     send("toolu_nosummary", "*", "hello"),
                     send("toolu_structured_all", "*", {"type": "shutdown_request"}),
                     call("Agent", "toolu_other", description="d", prompt="TASK-X", name="x", team_name="other"),
                     call("Agent", "toolu_coord", description="rules", prompt="TASK-C", name="coord",
                          subagent_type="coordinator"),
                     call("Agent", "toolu_broken", description="breaks", prompt="TASK-B", name="broken")]},
        {"match": {"last_user_contains": "agent_id: broken@alpha"},
         "content": [call("Agent", "toolu_broken2", description="breaks too", prompt="TASK-B", name="broken")]},
        {"match": {"last_user_contains": "Spawned successfully"}, "content": text("Started.")},
        {"match": {"last_user_contains": "still has active members"}, "content": text("Final.")},
        {"match": {"last_user_contains": "<teammate-message"}, "content": text("Noted."), "repeat": True},
    ], marker="Check the rules")
    # The second "broken" is spawned only after the first one's result came back (the names are then taken).
    coordinator = [
        {"match": {"first_user_contains": "TASK-C", "last_user_contains": "TASK-C"},
         "content": [call("Agent", "toolu_flat", description="d", prompt="TASK-S", name="sub"),
                     call("Agent", "toolu_bg", description="d", prompt="TASK-S", run_in_background=True),
                     call("Agent", "toolu_bgdef", description="d", prompt="TASK-S", subagent_type="bgworker")]},
        {"match": {"first_user_contains": "TASK-C"}, "content": text("checked"), "repeat": True},
    ]
    broken = [{"match": {"first_user_contains": "TASK-B"},
               "error": {"status": 400, "type": "invalid_request_error", "message": "prompt is malformed"},
               "repeat": True}]
    return [*lead, *coordinator, *broken]


def test_error_texts_and_the_rules_of_12_3_through_the_real_tool(tmp_path: Path, repo: Path) -> None:
    write_agent(repo, "coordinator", "description: Coordinates\ntools: Agent, Read\n", "You coordinate.")
    write_agent(repo, "bgworker", "description: Works in the background\nbackground: true\n", "You work.")
    with AnthropicTestServer({"turns": rules_turns()}) as server:
        env = team_env(tmp_path, server, CATUI_MAX_SUBAGENT_SPAWN_DEPTH="2")
        done = run_catui(repo, env, "-p", "Check the rules", "--output-format", "json")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr

    nope = tool_results(bodies, "toolu_nope")[0]
    assert nope["is_error"] is True
    assert result_text(bodies, "toolu_nope") == 'Team "nope" does not exist. Call spawnTeam first to create the team.'
    assert result_text(bodies, "toolu_other") == 'Team "other" does not exist. Call spawnTeam first to create the team.'
    assert not any("TASK-X" in first_user(b) for b in bodies)  # nothing started
    assert sorted(p.name for p in (tmp_path / "catui-home" / "teams").iterdir()) == ["alpha"]
    assert result_text(bodies, "toolu_again") == (
        'Already leading team "alpha". A leader can only manage one team at a time. Use TeamDelete to end the '
        "current team before creating a new one.")
    assert result_text(bodies, "toolu_nosummary") == (
        "<tool_use_error>summary is required when message is a string</tool_use_error>")
    assert result_text(bodies, "toolu_structured_all") == (
        '<tool_use_error>structured messages cannot be broadcast (to: "*")</tool_use_error>')

    coord = [b for b in bodies if "TASK-C" in first_user(b)]
    assert "Agent" in tool_names(coord[0]) and "TeamCreate" not in tool_names(coord[0])
    assert "# Your role on the team\nYou coordinate." in system_text(coord[0])
    assert result_text(bodies, "toolu_flat") == (
        "Teammates cannot spawn other teammates — the team roster is flat. To spawn a subagent instead, omit the "
        "`name` parameter.")
    background = ("In-process teammates cannot spawn background agents. Use run_in_background=false for "
                  "synchronous subagents.")
    assert result_text(bodies, "toolu_bg") == background
    assert result_text(bodies, "toolu_bgdef") == background
    assert all(tool_results(bodies, t)[0]["is_error"] for t in ("toolu_flat", "toolu_bg", "toolu_bgdef"))
    assert not any("TASK-S" in first_user(b) for b in bodies)

    assert "agent_id: broken-2@alpha\nname: broken-2\n" in result_text(bodies, "toolu_broken2")
    # The broken teammate's model failure reached the lead as a message from it.
    lead_inputs = "\n".join(last_user(b) for b in bodies if "Check the rules" in first_user(b))
    assert '<teammate-message teammate_id="broken"' in lead_inputs
    assert "Teammate broken could not finish its turn:" in lead_inputs and "prompt is malformed" in lead_inputs


def plan_turns() -> list[dict[str, Any]]:
    approve = send("toolu_approve", "planner", {"type": "plan_approval_response", "request_id": "req-1",
                                                "approve": True})
    reject = send("toolu_reject", "p2", {"type": "plan_approval_response", "request_id": "req-2", "approve": False,
                                         "feedback": "add tests"})
    planner_request = '"type":"plan_approval_request","from":"planner"'
    p2_request = '"type":"plan_approval_request","from":"p2"'
    lead = lead_rules([
        *LEAD_START,
        {"match": {"last_user_contains": '"lead_agent_id":"team-lead@alpha"'},
         "content": [call("Agent", "toolu_p1", description="plan one", prompt="TASK-P1", name="planner", mode="plan"),
                     call("Agent", "toolu_p2", description="plan two", prompt="TASK-P2", name="p2", mode="plan")]},
        {"match": {"last_user_contains": "Spawned successfully"}, "content": text("Started.")},
        {"match": {"last_user_contains": [planner_request, p2_request]}, "content": [approve, reject]},
        {"match": {"last_user_contains": planner_request}, "content": [approve]},
        {"match": {"last_user_contains": p2_request}, "content": [reject]},
        {"match": {"last_user_contains": "Plan "}, "content": text("Answered."), "repeat": True},
        {"match": {"last_user_contains": "still has active members"}, "content": text("Final.")},
        {"match": {"last_user_contains": "<teammate-message"}, "content": text("Noted."), "repeat": True},
    ])
    teammates = []
    for marker, plan in (("TASK-P1", "Plan P1: change A"), ("TASK-P2", "Plan P2: change B")):
        teammates += [
            {"match": {"first_user_contains": marker, "last_user_contains": '"approved":true'},
             "content": [call("ExitPlanMode", f"toolu_again_{marker}", plan="again")]},
            {"match": {"first_user_contains": marker, "last_user_contains": marker},
             "content": [call("ExitPlanMode", f"toolu_exit_{marker}", plan=plan)]},
            {"match": {"first_user_contains": marker}, "content": text("waiting"), "repeat": True},
        ]
    return [*lead, *teammates]


def test_plan_approval_accepted_and_rejected(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer({"turns": plan_turns()}) as server:
        done = run_catui(repo, team_env(tmp_path, server), "-p", "Lead the team", "--output-format", "json")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    home = tmp_path / "catui-home"
    planner = [b for b in bodies if "TASK-P1" in first_user(b)]
    p2 = [b for b in bodies if "TASK-P2" in first_user(b)]
    assert "ExitPlanMode" in tool_names(planner[0]) and "You start in plan mode" in system_text(planner[0])
    exit_result = result_text(bodies, "toolu_exit_TASK-P1")
    plan_file = home / "plans" / "alpha-planner.md"
    assert f"written to {plan_file} and sent to the team lead for approval (request id: plan_approval-" in exit_result
    assert "@planner@alpha)" in exit_result and plan_file.read_text() == "Plan P1: change A"

    lead_inputs = "\n".join(last_user(b) for b in bodies if "Lead the team" in first_user(b))
    request = json.loads(next(line for line in lead_inputs.splitlines()
                              if line.startswith('{"type":"plan_approval_request","from":"planner"')))
    assert request["planFilePath"] == str(plan_file) and request["planContent"] == "Plan P1: change A"
    assert request["requestId"].startswith("plan_approval-") and request["requestId"].endswith("@planner@alpha")
    assert result_text(bodies, "toolu_approve") == (
        "Plan approved for planner. They will receive the approval and can proceed with implementation.")
    assert result_text(bodies, "toolu_reject") == 'Plan rejected for p2 with feedback: "add tests"'

    planner_inputs = "\n".join(last_user(b) for b in planner)
    assert ('{"type":"plan_approval_response","requestId":"req-1","approved":true,"permissionMode":"default"}'
            in planner_inputs)
    p2_inputs = "\n".join(last_user(b) for b in p2)
    assert ('{"type":"plan_approval_response","requestId":"req-2","approved":false,"feedback":"add tests",'
            '"permissionMode":"default"}' in p2_inputs)
    # Approval took the planner out of plan mode; the rejected one stays in it.
    assert "You are not in plan mode" in result_text(bodies, "toolu_again_TASK-P1")
    assert not any("toolu_again_TASK-P2" in json.dumps(b) for b in bodies)
    config = json.loads((home / "teams" / "alpha" / "config.json").read_text())
    assert config["shutdown"]["reason"]  # print mode ended the team (nobody asked the planners to stop)


def test_a_teammate_whose_inbox_is_damaged_stops_and_the_lead_is_told(tmp_path: Path, repo: Path) -> None:
    inbox = tmp_path / "catui-home" / "teams" / "alpha" / "inboxes" / "worker.json"
    (tmp_path / "catui-home").mkdir()
    turns = [
        *lead_rules([
            *LEAD_START,
            {"match": {"last_user_contains": '"lead_agent_id":"team-lead@alpha"'},
             "content": [call("Agent", "toolu_spawn", description="break", prompt="TASK-D", name="worker")]},
            {"match": {"last_user_contains": "Spawned successfully"}, "content": text("Started.")},
            {"match": {"last_user_contains": "Teammate worker stopped"}, "content": text("The worker is gone.")},
            {"match": {"last_user_contains": "<teammate-message"}, "content": text("Noted."), "repeat": True},
        ]),
        {"match": {"first_user_contains": "TASK-D", "last_is_tool_result": False},
         "content": [call("Bash", "toolu_break", command=f"printf '[{{' > {inbox}")]},
        {"match": {"first_user_contains": "TASK-D"}, "content": text("done"), "repeat": True},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done = run_catui(repo, team_env(tmp_path, server), "-p", "Lead the team", "--output-format", "json",
                         "--allowedTools", "Bash", "--add-dir", str(tmp_path / "catui-home"))
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "The worker is gone."
    told = next(last_user(b) for b in bodies if "Teammate worker stopped" in last_user(b))
    assert f"Teammate worker stopped: TeamFileError: {inbox} is not valid JSON" in told
    assert "fix or delete the file" in told
    config = json.loads((inbox.parent.parent / "config.json").read_text())
    assert [m["name"] for m in config["members"]] == ["team-lead"]
