"""Skills and memory tools through the real CLI against the loopback Anthropic server.

One scripted run: the parent sees the available-skills reminder and the Skill tool, loads one skill
(with arguments), asks for an unknown one, then calls an agent whose definition lists ``skills:`` and a
memory agent whose ``tools`` lack Write and Edit. The assertions read what each request carried.
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
from tests.test_subagents_cli import agent_call, requests_for, text, tool_names

GREET_BODY = "Say hello to $ARGUMENTS in one line.\nUse the files next to this one."


def make_project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    skill = repo / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: greet\ndescription: Greets someone by name\n---\n{GREET_BODY}\n")
    hidden = repo / ".catui" / "skills" / "internal"
    hidden.mkdir(parents=True)
    (hidden / "SKILL.md").write_text("---\ndescription: Only for people\ndisable-model-invocation: true\n---\nx\n")
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps.\ntools: Read, Grep\nskills: [greet, missing-skill]\n---\nYou help.\n"
    )
    (agents / "scribe.md").write_text(
        "---\nname: scribe\ndescription: Keeps notes.\ntools: Read, Grep\nmemory: project\n---\nYou keep notes.\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def skill_call(tool_id: str, skill: str, args: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"skill": skill}
    if args is not None:
        payload["args"] = args
    return {"type": "tool_use", "id": tool_id, "name": "Skill", "input": payload}


def write_call(tool_id: str, path: Path, content: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Write", "input": {"file_path": str(path), "content": content}}


def script(repo: Path) -> dict[str, Any]:
    memory = repo / ".catui" / "agent-memory" / "scribe"
    return {"turns": [
        {"match": {"first_user_contains": "PARENT-S", "last_is_tool_result": False}, "content": [
            skill_call("toolu_greet", "greet", "Ada"),
            skill_call("toolu_unknown", "no-such-skill"),
            skill_call("toolu_hidden", "internal"),
        ]},
        {"match": {"first_user_contains": "PARENT-S", "last_is_tool_result": True}, "content": [
            agent_call("toolu_helper", "HELPER-JOB", "helper"),
            agent_call("toolu_scribe", "SCRIBE-JOB", "scribe"),
        ]},
        {"match": {"first_user_contains": "HELPER-JOB"}, "content": text("helped")},
        {"match": {"first_user_contains": "SCRIBE-JOB", "last_is_tool_result": False}, "content": [
            write_call("toolu_mem", memory / "MEMORY.md", "- the build uses tabs\n"),
            write_call("toolu_out", repo / "outside.txt", "should not be written"),
        ]},
        {"match": {"first_user_contains": "SCRIBE-JOB", "last_is_tool_result": True}, "content": text("noted")},
        {"match": {"first_user_contains": "PARENT-S", "last_is_tool_result": True}, "content": text("ALL DONE")},
    ]}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp_path = tmp_path_factory.mktemp("skills")
    repo = make_project(tmp_path)
    with AnthropicTestServer(script(repo)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "PARENT-S: greet Ada", "--output-format", "stream-json",
             "--verbose"],
            cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        yield server, events, repo


def parent_requests(server: AnthropicTestServer) -> list[dict[str, Any]]:
    return requests_for(server, "PARENT-S")


def test_parent_gets_the_skill_tool_and_the_reminder(run: Any) -> None:
    server, events, _ = run
    assert events[-1]["type"] == "result" and events[-1]["result"] == "ALL DONE"
    init = events[0]
    assert init["subtype"] == "init" and init["skills"] == ["greet", "internal"] and "Skill" in init["tools"]
    first = parent_requests(server)[0]
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    schema = skill_tool["input_schema"]
    assert set(schema["properties"]) == {"skill", "args"} and schema["required"] == ["skill"]
    assert schema["additionalProperties"] is False and schema["properties"]["args"]["type"] == "string"
    names = tool_names(first)
    assert names == sorted(names)
    reminders = [b["text"] for b in first["messages"][0]["content"] if "Skill tool" in b.get("text", "")]
    assert len(reminders) == 1
    assert "\n- greet: Greets someone by name\n" in reminders[0]
    assert "internal" not in reminders[0]  # disable-model-invocation keeps it out of the list
    assert first["messages"][0]["content"][-1]["text"] == "PARENT-S: greet Ada"


def test_skill_results_launch_text_then_instructions(run: Any) -> None:
    server, _, repo = run
    second = parent_requests(server)[1]
    content = second["messages"][-1]["content"]
    results = {b["tool_use_id"]: b for b in content if b["type"] == "tool_result"}
    assert results["toolu_greet"].get("is_error") is not True
    assert _text(results["toolu_greet"]) == "Launching skill: greet"
    assert results["toolu_unknown"]["is_error"] is True
    assert _text(results["toolu_unknown"]) == "<tool_use_error>Unknown skill: no-such-skill</tool_use_error>"
    assert _text(results["toolu_hidden"]) == "<tool_use_error>Unknown skill: internal</tool_use_error>"
    # The tool_results come first, then the skill's instructions in the same user message.
    assert [b["type"] for b in content[:3]] == ["tool_result"] * 3
    base = repo / ".claude" / "skills" / "greet"
    expected = f"Base directory for this skill: {base}\n\n" + GREET_BODY.replace("$ARGUMENTS", "Ada")
    assert len(content) == 4 and content[3]["type"] == "text" and content[3]["text"] == expected


def test_definition_skills_are_preloaded_into_the_first_message(run: Any) -> None:
    server, _, repo = run
    child = requests_for(server, "HELPER-JOB")[0]
    blocks = [b["text"] for b in child["messages"][0]["content"]]
    assert blocks[0].startswith("<system-reminder>")  # the context reminder stays first
    assert "greet" in blocks[1] and "preloaded" in blocks[1]
    base = repo / ".claude" / "skills" / "greet"
    assert blocks[2] == f"Base directory for this skill: {base}\n\n" + GREET_BODY.replace("$ARGUMENTS", "")
    assert blocks[-1] == "HELPER-JOB" and len(blocks) == 4  # the unknown skill adds nothing
    assert tool_names(child) == ["Grep", "Read"]  # the tool list does not change


def test_memory_agent_gets_write_and_edit_confined_to_its_folder(run: Any) -> None:
    server, _, repo = run
    first, second = requests_for(server, "SCRIBE-JOB")[:2]
    assert tool_names(first) == ["Grep", "Read", "Write", "Edit"]
    results = {b["tool_use_id"]: b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"}
    assert results["toolu_mem"].get("is_error") is not True, results["toolu_mem"]
    memory_file = repo / ".catui" / "agent-memory" / "scribe" / "MEMORY.md"
    assert memory_file.read_text() == "- the build uses tabs\n"
    refused = results["toolu_out"]
    assert refused["is_error"] is True
    assert "memory" in _text(refused) and str(repo / "outside.txt") in _text(refused)
    assert not (repo / "outside.txt").exists()


def _text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
