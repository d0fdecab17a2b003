"""Questions from sub-agents to the user: a definition that lists AskUserQuestion gets it, and the question
is relayed — to the terminal (a pseudo-terminal running the real CLI), to the SDK host's can_use_tool (with
the child's agent_id), or refused in print mode. Without the listing, children never get the tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from catui import AgentDefinition, CatuiOptions, PermissionResultAllow, PermissionResultDeny, query
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.sdk_backend import isolated_sdk_home  # noqa: F401 (autouse fixture)
from tests.test_cli_interactive_pty import PROMPT_READY, launch, workspace  # noqa: F401 (fixtures)

QUESTION = {"question": "Which database should I use?", "header": "Database", "multiSelect": False,
            "options": [{"label": "Postgres", "description": "The server one."},
                        {"label": "SQLite", "description": "A file."}]}
ASKER = "---\nname: asker\ndescription: Asks before choosing.\ntools: Read, AskUserQuestion\ncolor: purple\n---\nYou are ASKER.\n"
SILENT = "---\nname: silent\ndescription: Never asks.\ntools: Read, AskUserQuestion\n---\nYou are SILENT.\n"


def turns(agent_type: str, marker: str) -> list[dict[str, Any]]:
    return [
        {"match": {"system_contains": marker, "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_q", "name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
        {"match": {"system_contains": marker, "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child chose"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_child", "name": "Agent",
                      "input": {"description": "choose a db", "prompt": "CHILD choose", "subagent_type": agent_type}}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}]},
    ]


def child_tool_result(server: AnthropicTestServer, marker: str) -> dict[str, Any]:
    last = [b for b in server.bodies() if marker in json.dumps(b.get("system"))][-1]
    return next(b for m in last["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                if b.get("type") == "tool_result" and b.get("tool_use_id") == "toolu_q")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def test_print_mode_refuses_clearly_and_children_without_the_listing_never_get_the_tool(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "asker.md").write_text(ASKER)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with AnthropicTestServer({"turns": turns("asker", "You are ASKER")}) as server:
        done = subprocess.run([sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "json"],
                              cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        child_bodies = [b for b in server.bodies() if "You are ASKER" in json.dumps(b.get("system"))]
        refusal = child_tool_result(server, "You are ASKER")
        parent_tools = tool_names(server.bodies()[0])
    assert tool_names(child_bodies[0]) == ["AskUserQuestion", "Read"]
    assert "AskUserQuestion" not in parent_tools  # print mode: the main agent has no one to ask
    assert refusal["is_error"] is True and "There is no user to ask" in json.dumps(refusal["content"])
    assert "Make a reasonable choice" in json.dumps(refusal["content"])
    assert json.loads(done.stdout)["result"] == "parent done"

    # general-purpose (tools: *) does not list it: Claude Code's default holds.
    gp_turns = [{"match": {"first_user_contains": "CHILD"}, "content": [{"type": "text", "text": "ok"}]},
                *turns("general-purpose", "NEVER")[2:]]
    with AnthropicTestServer({"turns": gp_turns}) as server:
        subprocess.run([sys.executable, "-m", "catui", "-p", "PARENT go"], cwd=repo, env=cli_env(tmp_path, server),
                       capture_output=True, text=True, timeout=60, check=True)
        child = next(b for b in server.bodies() if "CHILD choose" in json.dumps(b["messages"][0]))
    assert "AskUserQuestion" not in tool_names(child)


async def test_the_sdk_host_answers_through_can_use_tool_with_the_agent_id(tmp_path: Path) -> None:
    seen: list[tuple[str, str | None, str | None]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen.append((name, context.agent_id, context.agent_type))
        if context.agent_type == "asker":
            question = tool_input["questions"][0]["question"]
            return PermissionResultAllow(updated_input={**tool_input, "answers": {question: "SQLite"}})
        return PermissionResultDeny(message="Not now: decide yourself.")

    agents = {"asker": AgentDefinition(description="Asks.", prompt="You are ASKER.", tools=["Read", "AskUserQuestion"]),
              "silent": AgentDefinition(description="Silent.", prompt="You are SILENT.",
                                        tools=["Read", "AskUserQuestion"])}
    for agent_type, marker, expected in (("asker", "You are ASKER", '"Which database should I use?"="SQLite"'),
                                         ("silent", "You are SILENT", "Not now: decide yourself.")):
        with AnthropicTestServer({"turns": turns(agent_type, marker)}) as server:
            options = CatuiOptions(cwd=tmp_path, env=server.env(), model="claude-sonnet-4-6", agents=agents,
                                   can_use_tool=can_use_tool)
            messages = [m async for m in query("PARENT go", options)]
            answer = child_tool_result(server, marker)
        content = answer["content"]
        assert expected in (content if isinstance(content, str) else " ".join(b.get("text", "") for b in content))
        assert answer.get("is_error") is (None if agent_type == "asker" else True)
        assert messages[-1].result == "parent done"
    asked = [entry for entry in seen if entry[0] == "AskUserQuestion"]
    assert [entry[2] for entry in asked] == ["asker", "silent"]
    assert all(agent_id and agent_id.startswith("a") for _, agent_id, _ in asked)


def test_the_terminal_shows_the_asking_agent_and_sends_the_answer_back(launch, workspace) -> None:  # noqa: F811
    agents = workspace["project"] / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "asker.md").write_text(ASKER)
    script = {"turns": [
        {"match": {"system_contains": "You are ASKER", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
        {"match": {"system_contains": "You are ASKER", "last_user_contains": "SQLite"},
         "content": [{"type": "text", "text": "child chose SQLite"}]},
        {"match": {"last_user_contains": "child chose SQLite"}, "content": [{"type": "text", "text": "PARENT HEARD SQLITE"}]},
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent",
                      "input": {"description": "choose a db", "prompt": "CHILD choose", "subagent_type": "asker"}}]},
    ]}
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("pick a database\r")
    tui.expect(r"● asker asks:[\s\S]*Which database should I use\?[\s\S]*1\. Postgres[\s\S]*2\. SQLite")
    assert "\x1b[35m● asker" in tui.raw.decode("utf-8", "replace")  # purple, the agent's colour
    tui.send("2\r")
    tui.expect(r"PARENT HEARD SQLITE")
    tui.send(b"\x04")
    assert tui.wait_exit() == 0


def test_a_background_agent_asks_while_the_person_is_at_the_prompt(launch, workspace) -> None:  # noqa: F811
    agents = workspace["project"] / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "asker.md").write_text(ASKER)
    script = {"turns": [
        # The child asks only after the parent's turn has ended: the person is at the prompt by then.
        {"match": {"system_contains": "You are ASKER", "last_is_tool_result": False}, "delay_ms": 1500,
         "content": [{"type": "tool_use", "name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
        {"match": {"system_contains": "You are ASKER", "last_user_contains": "Postgres"},
         "content": [{"type": "text", "text": "child chose Postgres"}]},
        {"match": {"last_user_contains": "child chose Postgres"}, "content": [{"type": "text", "text": "PARENT HEARD PG"}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "STARTED IT"}]},
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent",
                      "input": {"description": "choose a db", "prompt": "CHILD choose", "subagent_type": "asker",
                                "run_in_background": True}}]},
    ]}
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("pick a database in the background\r")
    tui.expect(r"STARTED IT")
    tui.expect(PROMPT_READY)
    tui.send("half-typed")  # the person has started typing when the question comes
    tui.expect(r"● asker asks:[\s\S]*Which database should I use\?")
    tui.send("1\r")
    tui.expect(r"PARENT HEARD PG")
    tui.expect(r"half-typed")  # what the person had typed is back at the prompt
    tui.send(b"\x03")  # the first Ctrl-C clears it
    tui.send(b"\x04")
    assert tui.wait_exit() == 0
