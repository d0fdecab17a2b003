"""The compatibility profile (catui.config.compat) and points 1-5 of the current contract, through the real CLI.

Each test runs ``python -m catui -p … --output-format stream-json`` against the loopback Anthropic
server and checks what the server received against ``observed-cc-now.md`` (the Agent schema, which
requests the children sent, their tools and models, the refusal texts), in both profiles where the
behaviour differs.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from catui.config.compat import CompatProfile, resolve_compat
from catui.errors import ConfigurationError
from catui.models.replay.scripted import RequestView
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.compat_cli import (
    CURRENT,
    GUARD_S,
    agent_call,
    bodies_with_first,
    last_user_blocks,
    result_text,
    stream_run,
    text,
    tool_names,
    tool_results,
    tool_schema,
)
from tests.support.loopback import Fault, RecordedRequest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def one_spawn_script(call: dict[str, Any], child_prompt: str, child_answer: str = "child done") -> dict[str, Any]:
    return {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("parent done"),
         "repeat": True},
        {"match": {"first_user_contains": child_prompt}, "content": text(child_answer), "repeat": True},
    ]}


# -- the profile itself --------------------------------------------------------------------------------------


def test_profile_resolution_order_and_bad_values() -> None:
    assert resolve_compat({}, {}).name == "2.1.92" and resolve_compat({}, {}).source == "default"
    assert resolve_compat({"compat": "2.1.332"}, {}).describe() == "2.1.332 (the `compat` setting)"
    assert resolve_compat({"compat": "2.1.92"}, {"CATUI_COMPAT": "current"}).describe() == "2.1.332 (CATUI_COMPAT)"
    assert resolve_compat({}, {"CATUI_COMPAT": "2.1.332"}, "2.1.92").describe() == \
        "2.1.92 (the SDK's compat= option)"
    with pytest.raises(ConfigurationError, match=r"CATUI_COMPAT='2\.2' is not a known compatibility profile"):
        resolve_compat({}, {"CATUI_COMPAT": "2.2"})


def test_profile_answers_follow_claude_codes_knobs() -> None:
    now = CompatProfile("2.1.332")
    assert now.spawns_in_background(None, depth=0) and not now.spawns_in_background(None, depth=1)
    assert not now.spawns_in_background(False, depth=0) and now.spawns_in_background(True, depth=2)
    assert now.max_spawn_depth() == 3 and now.fork_enabled() and now.overflow() == "refuse"
    off = CompatProfile("2.1.332", env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"})
    assert not off.spawns_in_background(True, depth=0) and not off.offers_run_in_background()
    forked = CompatProfile("2.1.332", env={"CLAUDE_CODE_FORK_SUBAGENT": "1"})
    assert forked.spawns_in_background(False, depth=1) and not forked.offers_run_in_background()
    assert not CompatProfile("2.1.332", env={"CLAUDE_CODE_FORK_SUBAGENT": "0"}).fork_enabled()
    assert CompatProfile("2.1.332", env={"CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "5"}).max_spawn_depth() == 5
    assert CompatProfile("2.1.332", env={"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "7"}).running_cap().value == 7
    old = CompatProfile()
    assert not old.spawns_in_background(None, depth=0) and old.max_spawn_depth() == 1 and not old.fork_enabled()
    assert old.overflow() == "queue" and not old.messaging()
    assert CompatProfile(settings={"subagentOverflow": "refuse", "messaging": True}).overflow() == "refuse"
    assert CompatProfile(settings={"messaging": True}).messaging()
    # Claude Code's own variable is the current contract's; the 2.1.92 profile keeps catui's names only.
    assert CompatProfile(env={"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "7"}).running_cap().value == 20


def test_init_message_and_agents_show_name_the_profile(tmp_path: Path, repo: Path) -> None:
    with AnthropicTestServer({"turns": [{"content": text("hi"), "repeat": True}]}) as server:
        for extra, args, expected in (({}, (), "2.1.92"), (CURRENT, (), "2.1.332"),
                                      ({}, ("--settings", json.dumps({"compat": "2.1.332"})), "2.1.332")):
            env = cli_env(tmp_path, server, **extra)
            done, lines = stream_run(repo, env, "Hello", *args)
            assert done.returncode == 0, done.stderr
            assert lines[0]["subtype"] == "init" and lines[0]["compat"] == expected
        shown = run_catui(repo, cli_env(tmp_path, server, **CURRENT), "agents", "show", "claude", timeout=GUARD_S)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.splitlines()[0] == "Compat profile: 2.1.332 (CATUI_COMPAT)"
        assert "Name:" in shown.stdout and "claude" in shown.stdout
        listed = run_catui(repo, cli_env(tmp_path, server, **CURRENT), "agents", "list", "--json", timeout=GUARD_S)
        assert "claude" in [a["name"] for a in json.loads(listed.stdout)["active"]]
        old = run_catui(repo, cli_env(tmp_path, server), "agents", "list", "--json", timeout=GUARD_S)
        assert "claude" not in [a["name"] for a in json.loads(old.stdout)["active"]]
        default = run_catui(repo, cli_env(tmp_path, server), "agents", "show", "claude", timeout=GUARD_S)
        assert default.returncode == 1 and "no active agent named 'claude'" in default.stderr
        bad = run_catui(repo, cli_env(tmp_path, server, CATUI_COMPAT="3"), "-p", "Hello", timeout=GUARD_S)
        assert bad.returncode != 0 and "Traceback" not in bad.stderr
        assert "CATUI_COMPAT='3' is not a known compatibility profile" in bad.stderr


# -- point 1: background by default, the schema's run_in_background -------------------------------------------

CURRENT_PROPERTIES = ["description", "prompt", "subagent_type", "model", "effort", "run_in_background", "isolation"]


def agent_schema(tmp_path: Path, repo: Path, **extra: str) -> dict[str, Any]:
    with AnthropicTestServer({"turns": [{"content": text("hi"), "repeat": True}]}) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **extra), "Hello")
        assert done.returncode == 0, done.stderr
        return tool_schema(server.bodies()[0], "Agent")["input_schema"]


def test_agent_schema_in_both_profiles(tmp_path: Path, repo: Path) -> None:
    now = agent_schema(tmp_path, repo, **CURRENT)
    assert list(now["properties"]) == CURRENT_PROPERTIES
    assert now["required"] == ["description", "prompt"]
    assert now["properties"]["model"]["enum"] == ["sonnet", "opus", "haiku", "fable"]
    assert now["properties"]["effort"]["enum"] == ["low", "medium", "high", "xhigh", "max"]
    assert now["properties"]["isolation"]["enum"] == ["worktree", "remote"]
    assert now["properties"]["run_in_background"]["type"] == "boolean"
    old = agent_schema(tmp_path, repo)
    assert list(old["properties"]) == ["description", "prompt", "subagent_type", "model", "run_in_background",
                                       "isolation"]
    assert old["properties"]["model"]["enum"] == ["sonnet", "opus", "haiku"]
    teams = agent_schema(tmp_path, repo, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS="1", **CURRENT)
    assert list(teams["properties"]) == [*CURRENT_PROPERTIES[:6], "name", "team_name", "mode", "isolation"]
    for knob in ({"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}, {"CLAUDE_CODE_FORK_SUBAGENT": "1"}):
        assert "run_in_background" not in agent_schema(tmp_path, repo, **knob, **CURRENT)["properties"]


def launch_kind(tmp_path: Path, repo: Path, call: dict[str, Any], **extra: str) -> str:
    """"background" or "foreground": how the main agent's Agent call ran, by its tool_use_result."""
    with AnthropicTestServer(one_spawn_script(call, "Child one")) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go")
        assert done.returncode == 0, done.stderr
    (block, data), = [r for r in tool_results(lines) if r[0]["tool_use_id"] == "toolu_a"]
    if data.get("status") == "async_launched":
        return "background"
    assert data["status"] == "completed" and "child done" in result_text(block)
    return "foreground"


@pytest.mark.parametrize(("extra", "args", "expected"), [
    (CURRENT, {}, "background"),
    (CURRENT, {"run_in_background": False}, "foreground"),
    ({**CURRENT, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}, {"run_in_background": True}, "foreground"),
    ({**CURRENT, "CLAUDE_CODE_FORK_SUBAGENT": "1"}, {"run_in_background": False}, "background"),
    ({}, {}, "foreground"),
    ({}, {"run_in_background": True}, "background"),
])
def test_background_by_default_for_the_main_agent(
    tmp_path: Path, repo: Path, extra: dict[str, str], args: dict[str, Any], expected: str
) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", **args)
    assert launch_kind(tmp_path, repo, call, **extra) == expected


# -- point 2: nesting ----------------------------------------------------------------------------------------

def nesting_script() -> dict[str, Any]:
    """Main → L1 → L2 → L3, each spawn in the foreground (a sub-agent's default); every agent answers once done."""
    def level(n: int) -> list[dict[str, Any]]:
        me = f"Level {n} task"
        turns: list[dict[str, Any]] = [
            {"match": {"first_user_contains": me, "last_is_tool_result": True}, "content": text(f"L{n} done"),
             "repeat": True},
        ]
        if n < 4:
            turns.append({"match": {"first_user_contains": me, "last_is_tool_result": False,
                                    "tools_include": ["Agent"]},
                          "content": [agent_call(f"toolu_l{n}", f"Level {n + 1} task",
                                                 subagent_type="general-purpose")], "repeat": True})
        turns.append({"match": {"first_user_contains": me, "last_is_tool_result": False}, "content": text(f"L{n} leaf"),
                      "repeat": True})
        return turns
    main = [
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False},
         "content": [agent_call("toolu_m", "Level 1 task", subagent_type="general-purpose", run_in_background=False)]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("all done"),
         "repeat": True},
    ]
    return {"turns": main + level(1) + level(2) + level(3) + level(4)}


def agent_tool_by_level(tmp_path: Path, repo: Path, **extra: str) -> dict[int, bool]:
    with AnthropicTestServer(nesting_script()) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **extra), "Go")
        assert done.returncode == 0, done.stderr
        bodies = server.bodies()
    found = {}
    for n in (1, 2, 3, 4):
        mine = bodies_with_first(bodies, f"Level {n} task")
        if mine:
            found[n] = "Agent" in tool_names(mine[0])
    return found


def test_nesting_to_depth_three_in_the_current_profile(tmp_path: Path, repo: Path) -> None:
    assert agent_tool_by_level(tmp_path, repo, **CURRENT) == {1: True, 2: True, 3: False}
    assert agent_tool_by_level(tmp_path, repo, CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH="2", **CURRENT) == \
        {1: True, 2: False}
    assert agent_tool_by_level(tmp_path, repo) == {1: False}  # 2.1.92: no nesting


# -- point 3: fork -------------------------------------------------------------------------------------------

def test_fork_is_a_subagent_type_in_the_current_profile(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Fork job", subagent_type="fork", run_in_background=False)
    script = {"turns": [
        {"match": {"last_user_contains": "Your directive: Fork job"}, "content": text("fork done"), "repeat": True},
        *one_spawn_script(call, "nothing")["turns"],
    ]}
    with AnthropicTestServer(script) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Go")
        assert done.returncode == 0, done.stderr
        bodies = server.bodies()
    fork = next(b for b in bodies if "Your directive: Fork job" in json.dumps(b["messages"][-1]))
    parent_first = bodies[0]
    # The parent's system, tools and messages, its spawning message trimmed to the one Agent call.
    assert fork["system"] == parent_first["system"] and tool_names(fork) == tool_names(parent_first)
    assert fork["messages"][-2]["role"] == "assistant"
    assert [b["id"] for b in fork["messages"][-2]["content"] if b.get("type") == "tool_use"] == ["toolu_a"]
    result, directive = last_user_blocks(fork)
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_a"
    assert result_text(result) == "Fork started — that fork is you."
    assert directive["text"].startswith("<fork-boilerplate>\n")
    assert directive["text"].endswith("</fork-boilerplate>\n\nYour directive: Fork job")
    assert "Do not start agents" in directive["text"]
    (block, _), = tool_results(lines)
    assert "fork done" in result_text(block)


def test_fork_off_and_omitted_type(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Fork job", subagent_type="fork", run_in_background=False)
    with AnthropicTestServer(one_spawn_script(call, "nothing")) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, CLAUDE_CODE_FORK_SUBAGENT="0", **CURRENT), "Go")
        assert done.returncode == 0, done.stderr
    (block, _), = tool_results(lines)
    assert block["is_error"] is True
    assert result_text(block) == ("Agent type 'fork' not found. Available agents: claude, Explore, "
                                  "general-purpose, Plan, statusline-setup")
    # An omitted type is still general-purpose.
    plain = agent_call("toolu_a", "Child one", run_in_background=False)
    with AnthropicTestServer(one_spawn_script(plain, "Child one")) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Go")
        assert done.returncode == 0, done.stderr
    (block, data), = tool_results(lines)
    assert data["agentType"] == "general-purpose" and "child done" in result_text(block)


# -- point 4: types and parameters -----------------------------------------------------------------------------

def child_request(tmp_path: Path, repo: Path, call: dict[str, Any], **extra: str) -> dict[str, Any]:
    with AnthropicTestServer(one_spawn_script(call, "Child one")) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **extra), "Go", "--model", "claude-opus-5-5")
        assert done.returncode == 0, done.stderr
        return bodies_with_first(server.bodies(), "Child one")[0]


def test_explore_inherits_and_effort_and_fable(tmp_path: Path, repo: Path) -> None:
    explore = agent_call("toolu_a", "Child one", subagent_type="Explore", run_in_background=False)
    assert child_request(tmp_path, repo, explore, **CURRENT)["model"] == "claude-opus-5-5"
    assert child_request(tmp_path, repo, explore)["model"] == "claude-haiku-4-5-20251001"
    effort = agent_call("toolu_a", "Child one", subagent_type="claude", effort="high", model="fable",
                        run_in_background=False)
    body = child_request(tmp_path, repo, effort, **CURRENT)
    assert body["model"] == "claude-fable-5-2" and body["output_config"] == {"effort": "high"}
    assert "working as a delegate" in json.dumps(body["system"])  # catui's own prompt for the claude type


def test_type_list_sorted_and_unknown_type(tmp_path: Path, repo: Path) -> None:
    agents = json.dumps({"lister": {"description": "Lists things", "prompt": "List."},
                         "Reviewer": {"description": "Reviews", "prompt": "Review."}})
    call = agent_call("toolu_a", "Child one", subagent_type="nope", run_in_background=False)
    with AnthropicTestServer(one_spawn_script(call, "Child one")) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Go", "--agents", agents)
        assert done.returncode == 0, done.stderr
        description = tool_schema(server.bodies()[0], "Agent")["description"]
    listed = [line.split(":", 1)[0][2:] for line in description.splitlines() if line.startswith("- ") and
              "(Tools:" in line]
    assert listed == ["claude", "Explore", "general-purpose", "lister", "Plan", "Reviewer", "statusline-setup"]
    (block, _), = tool_results(lines)
    assert result_text(block) == ("Agent type 'nope' not found. Available agents: claude, Explore, "
                                  "general-purpose, lister, Plan, Reviewer, statusline-setup")


def test_remote_isolation_runs_a_local_background_agent_in_a_worktree(tmp_path: Path, repo: Path) -> None:
    (repo / "README.md").write_text("x\n", encoding="utf-8")
    import subprocess
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", isolation="remote",
                      run_in_background=False)
    with AnthropicTestServer(one_spawn_script(call, "Child one")) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Go")
        assert done.returncode == 0, done.stderr
        child = bodies_with_first(server.bodies(), "Child one")[0]
    (_, data), = tool_results(lines)
    assert data["status"] == "async_launched"
    assert "worktrees" in json.dumps(child["system"])


# -- point 5: the running-agents cap ---------------------------------------------------------------------------

class HoldChildren(AnthropicTestServer):
    """Holds every child request until ``hold`` children have asked, so they all run at once."""

    def __init__(self, script: Any, hold: int) -> None:
        super().__init__(script)
        self.barrier = threading.Barrier(hold, timeout=GUARD_S)

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if "Child" in RequestView.from_anthropic(body).first_user_text:
            self.barrier.wait()  # a guard against a hang, not a delay
        super().handle_post(handler, request, fault)


CAP_TEXT = ("Concurrent subagent limit reached. You can run 2 subagents at once. Do not retry. If the user wants "
            "more concurrent subagents, ask them to increase CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS.")


def capped_run(tmp_path: Path, repo: Path, background: bool, *args: str, **extra: str) -> list[dict[str, Any]]:
    calls = [agent_call(f"toolu_{i}", f"Child {i}", subagent_type="general-purpose", run_in_background=background)
             for i in range(3)]
    script = {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("ok"), "repeat": True},
        {"match": {"first_user_contains": "Child"}, "content": text("child done"), "repeat": True},
    ]}
    with HoldChildren(script, hold=2) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go", *args)
        assert done.returncode == 0, done.stderr
    return [r for r in tool_results(lines) if r[0]["tool_use_id"].startswith("toolu_")]


@pytest.mark.parametrize("background", [False, True])
def test_spawns_over_the_cap_are_refused(tmp_path: Path, repo: Path, background: bool) -> None:
    results = capped_run(tmp_path, repo, background, CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS="2", **CURRENT)
    refused = [b for b, _ in results if b.get("is_error")]
    assert len(results) == 3 and [result_text(b) for b in refused] == [CAP_TEXT]


def test_the_overflow_setting_refuses_in_the_old_profile_too(tmp_path: Path, repo: Path) -> None:
    settings = json.dumps({"subagentOverflow": "refuse", "maxConcurrentSubagents": 2})
    results = capped_run(tmp_path, repo, True, "--settings", settings)
    assert [result_text(b) for b, _ in results if b.get("is_error")] == [CAP_TEXT]


def test_agent_calls_are_not_held_by_the_tool_window(tmp_path: Path, repo: Path) -> None:
    # A window of 2 and a cap of 3: three children must run at once (the server holds each until all three ask),
    # which only happens when Agent calls bypass the window; the fourth is refused.
    calls = [agent_call(f"toolu_{i}", f"Child {i}", subagent_type="general-purpose", run_in_background=False)
             for i in range(4)]
    script = {"turns": [
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("ok"), "repeat": True},
        {"match": {"first_user_contains": "Child"}, "content": text("child done"), "repeat": True},
    ]}
    with HoldChildren(script, hold=3) as server:
        env = cli_env(tmp_path, server, CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS="3",
                      CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY="2", **CURRENT)
        done, lines = stream_run(repo, env, "Go")
        assert done.returncode == 0, done.stderr
    results = tool_results(lines)
    assert len(results) == 4
    assert [result_text(b) for b, _ in results if b.get("is_error")] == [CAP_TEXT.replace("2 subagents", "3 subagents")]


def test_the_agent_at_the_depth_limit_is_told_it_has_no_agent_tool(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", run_in_background=False)
    script = {"turns": [
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("ok"), "repeat": True},
        {"match": {"first_user_contains": "Child one", "last_is_tool_result": False},
         "content": [agent_call("toolu_deep", "Deeper", subagent_type="general-purpose")]},
        {"match": {"first_user_contains": "Child one", "last_is_tool_result": True}, "content": text("leaf"),
         "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH="1", **CURRENT)
        done, _ = stream_run(repo, env, "Go")
        assert done.returncode == 0, done.stderr
        child = bodies_with_first(server.bodies(), "Child one")
    assert "Agent" not in tool_names(child[0])
    refusal = child[1]["messages"][-1]["content"][0]
    assert result_text(refusal) == ("<tool_use_error>Error: No such tool available: Agent. Agent is not among the "
                                    "tools available here. Continue with the tools you have.</tool_use_error>")
