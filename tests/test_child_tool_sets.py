"""The built-in children's tool sets equal Claude Code 2.1.92's observed lists (observed §2 and §14).

Runs the real CLI against the loopback Anthropic server (which offers WebSearch through the API's server-side
search) in a git repository holding one project skill (so Skill is offered), has the parent call Explore,
Plan and general-purpose, and compares the tool names of each child's first request with the observed lists.
Teammates (observed §10, 17 tools) are not built in catui, so their list is not compared here.
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

OBSERVED_EXPLORE_AND_PLAN = sorted([
    "Bash", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Glob", "Grep", "Read",
    "Skill", "TodoWrite", "WebFetch", "WebSearch",
])
"""Observed §2: Explore and Plan get these 13 tools."""
OBSERVED_GENERAL_PURPOSE = sorted([*OBSERVED_EXPLORE_AND_PLAN, "Edit", "NotebookEdit", "Write"])
"""Observed §2: general-purpose gets the 13 plus Edit, NotebookEdit and Write (16)."""
NEVER_IN_A_CHILD = {"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop"}
"""Observed §2 and §14: in 2.1.92 sub-agents cannot nest, ask the user, switch plan mode or manage tasks."""


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    skill = repo / ".claude" / "skills" / "changelog"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: changelog\ndescription: Writes a changelog entry.\n---\n"
                                    "Write a changelog entry for $ARGUMENTS.\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first"],
                   check=True)
    return repo


def agent_call(tool_id: str, marker: str, subagent_type: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Agent",
            "input": {"description": f"job {tool_id}", "prompt": marker, "subagent_type": subagent_type}}


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False}, "content": [
        agent_call("toolu_explore", "EXPLORE-JOB", "Explore"),
        agent_call("toolu_plan", "PLAN-JOB", "Plan"),
        agent_call("toolu_gp", "GP-JOB", "general-purpose"),
    ]},
    {"match": {"first_user_contains": "EXPLORE-JOB"}, "content": [{"type": "text", "text": "explored"}]},
    {"match": {"first_user_contains": "PLAN-JOB"}, "content": [{"type": "text", "text": "planned"}]},
    {"match": {"first_user_contains": "GP-JOB"}, "content": [{"type": "text", "text": "done"}]},
    {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
     "content": [{"type": "text", "text": "ALL DONE"}]},
]}


@pytest.fixture(scope="module")
def first_requests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The tool names of each agent's first request, keyed by the job marker (``PARENT`` for the main session)."""
    tmp_path = tmp_path_factory.mktemp("child-tools")
    repo = make_repo(tmp_path)
    with AnthropicTestServer(SCRIPT) as server:
        done = subprocess.run([sys.executable, "-m", "catui", "-p", "PARENT: look around", "--output-format", "json"],
                              cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60)
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "ALL DONE"
    firsts: dict[str, list[str]] = {}
    for body in bodies:
        marker = next(m for m in ("EXPLORE-JOB", "PLAN-JOB", "GP-JOB", "PARENT") if m in first_user_text(body))
        firsts.setdefault(marker, [t["name"] for t in body.get("tools", [])])
    return firsts


def test_explore_gets_the_observed_13_tools(first_requests: dict[str, list[str]]) -> None:
    assert sorted(first_requests["EXPLORE-JOB"]) == OBSERVED_EXPLORE_AND_PLAN


def test_plan_gets_the_same_13_tools(first_requests: dict[str, list[str]]) -> None:
    assert sorted(first_requests["PLAN-JOB"]) == OBSERVED_EXPLORE_AND_PLAN


def test_general_purpose_gets_the_observed_16_tools(first_requests: dict[str, list[str]]) -> None:
    assert sorted(first_requests["GP-JOB"]) == OBSERVED_GENERAL_PURPOSE


def test_no_child_gets_a_nesting_or_task_tool_the_main_session_has(first_requests: dict[str, list[str]]) -> None:
    main = set(first_requests["PARENT"])
    assert {"Agent", "TaskOutput", "TaskStop"} <= main  # the exclusion below removes something real
    for marker in ("EXPLORE-JOB", "PLAN-JOB", "GP-JOB"):
        assert not NEVER_IN_A_CHILD & set(first_requests[marker])
