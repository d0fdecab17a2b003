"""Agent names across processes, and ``is_resume`` in telemetry for resumed runs.

A catui process (the SDK, in a subprocess, on the loopback Anthropic server)
names a background agent and is killed with SIGKILL while the agent runs; the
next process of the same session reads the name back from state.db, and
SendMessage to that name resumes the agent from its output file. When it ends,
the name is released (gone from state.db).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from catui.state.db import StateDB
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

GUARD_S = 30  # a broken scenario fails here instead of hanging (not a timing assertion)
SESSION = "names-session-1"
SDK_RUN = """
import asyncio, sys
from catui.sdk import CatuiOptions, query

async def main() -> None:
    options = CatuiOptions(cwd=sys.argv[1], session_id=sys.argv[2], env={"CATUI_AGENT_TEAMS": "1"})
    async for message in query(sys.argv[3], options=options):
        print(type(message).__name__, flush=True)

asyncio.run(main())
"""


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def tool_use(tool_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": tool, "input": args}


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        inner = block.get("content")
        parts.append(block.get("text", "") if inner is None else json.dumps(inner))
    return "\n".join(parts)


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def sdk(repo: Path, env: dict[str, str], prompt: str) -> list[str]:
    return [sys.executable, "-c", SDK_RUN, str(repo), SESSION, prompt]


SCRIPT = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
    {"match": {"first_user_contains": "NAMES-ONE", "last_is_tool_result": False},
     "content": [tool_use("toolu_scout", "Agent", {
         "description": "scout the repo", "prompt": "SCOUT-JOB", "subagent_type": "general-purpose",
         "run_in_background": True, "name": "scout"})]},
    {"match": {"first_user_contains": "NAMES-ONE", "last_is_tool_result": True}, "content": text("launched")},
    {"match": {"first_user_contains": "NAMES-TWO", "last_is_tool_result": False},
     "content": [tool_use("toolu_send", "SendMessage", {"to": "scout", "message": "After the restart: report."})]},
    {"match": {"first_user_contains": "NAMES-TWO", "last_is_tool_result": True}, "content": text("sent")},
    {"match": {"first_user_contains": "SCOUT-JOB", "last_user_contains": "After the restart"},
     "content": text("scout is back")},
    {"match": {"first_user_contains": "SCOUT-JOB"}, "content": text("too late"), "delay_ms": 20_000},
]}


def test_a_name_survives_a_restart_until_its_agent_ends(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    with AnthropicTestServer(SCRIPT) as server:
        env = cli_env(tmp_path, server)
        first = subprocess.Popen(sdk(repo, env, "NAMES-ONE"), cwd=repo, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        try:
            def named_and_running() -> bool:
                if not (repo / ".catui" / "state.db").exists():
                    return False
                state = StateDB(repo)
                return bool(state.names(SESSION)) and bool(state.list_tasks(status="running"))

            def waiting_on_the_model() -> bool:
                # Running is not enough: the row says running before the agent's transcript holds its prompt,
                # and a process killed in between leaves nothing to resume (seen under load).
                return any("SCOUT-JOB" in json.dumps(b["messages"][0]) for b in server.bodies())

            wait_for(lambda: named_and_running() and waiting_on_the_model(),
                     "the named agent running in the first process, waiting on its model")
            os.kill(first.pid, signal.SIGKILL)
            first.wait(GUARD_S)
        finally:
            if first.poll() is None:
                first.kill()
            first.communicate()
        [agent_id] = StateDB(repo).names(SESSION).values()

        second = subprocess.run(sdk(repo, env, "NAMES-TWO"), cwd=repo, env=env, capture_output=True, text=True,
                                timeout=GUARD_S * 2)
        assert second.returncode == 0, second.stderr
        bodies = server.bodies()
    replies = [last_user_text(b) for b in bodies if "NAMES-TWO" in json.dumps(b["messages"][0])
               and "toolu_send" in json.dumps(b["messages"][-1])]
    assert replies and f"Agent {agent_id} had finished; it is continuing in the background" in replies[0]
    resumed = [b for b in bodies if "After the restart" in last_user_text(b) and "SCOUT-JOB" in json.dumps(b)]
    assert resumed, "the agent named scout was not resumed"
    assert StateDB(repo).names(SESSION) == {}  # released when the resumed agent ended
    assert StateDB(repo).get_task(agent_id)["status"] == "completed"  # type: ignore[index]
    records = [json.loads(line) for line in (tmp_path / "catui-home" / "telemetry.jsonl").read_text().splitlines()]
    selected = [r["is_resume"] for r in records if r["event"] == "catui_agent_tool_selected"]
    assert selected == [False, True]
