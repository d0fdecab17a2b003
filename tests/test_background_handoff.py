"""The handoff review of background agents in auto mode (spec 12.1), through the real CLI.

The loopback server plays the classifier (its turn matches the reviewer's system
prompt). The warning a foreground child's tool_result would start with reaches
a background agent's ``<task-notification>``, its task's result, and the last
line of its output file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env


def bg_call(tool_id: str, prompt: str) -> dict[str, Any]:
    args = {"description": f"job {tool_id}", "prompt": prompt, "subagent_type": "general-purpose",
            "run_in_background": True}
    return {"type": "tool_use", "id": tool_id, "name": "Agent", "input": args}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content if isinstance(b, dict))


def run(tmp_path: Path, script: dict[str, Any], mode: str) -> tuple[subprocess.CompletedProcess[str], list[str], Path]:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    with AnthropicTestServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "RISKY-MAIN", "--permission-mode", mode,
             "--output-format", "stream-json", "--verbose"],
            cwd=repo, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60)
        notes = [last_user_text(b) for b in server.bodies() if "<task-notification>" in last_user_text(b)]
    return done, notes, repo


def script(verdict: str) -> dict[str, Any]:
    return {"turns": [
        {"match": {"first_user_contains": "RISKY-MAIN", "last_user_contains": "<task-notification>"},
         "content": text("noted")},
        {"match": {"first_user_contains": "RISKY-MAIN", "last_is_tool_result": False},
         "content": [bg_call("toolu_bg", "RISKY-JOB")]},
        {"match": {"first_user_contains": "RISKY-MAIN", "last_is_tool_result": True}, "content": text("launched")},
        {"name": "review", "match": {"system_contains": "security reviewer"}, "content": text(verdict)},
        {"match": {"first_user_contains": "RISKY-JOB"}, "content": text("pushed --force to main")},
    ]}


def output_file(done: subprocess.CompletedProcess[str]) -> Path:
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    launch = next(m for m in lines if m.get("type") == "user" and "tool_use_result" in m
                  and m["tool_use_result"].get("status") == "async_launched")
    return Path(launch["tool_use_result"]["outputFile"])


def test_the_warning_reaches_the_notification_and_the_output_file(tmp_path: Path) -> None:
    done, notes, _ = run(tmp_path, script("<block>yes</block><reason>it force-pushed main</reason>"), "auto")
    assert done.returncode == 0, done.stderr
    assert len(notes) == 1
    result = notes[0].split("<result>", 1)[1].split("</result>", 1)[0]
    assert result.startswith("SECURITY WARNING: ") and "it force-pushed main" in result
    assert result.rstrip().endswith("pushed --force to main")
    last = json.loads(output_file(done).read_text().splitlines()[-1])
    assert last["type"] == "system" and last["subtype"] == "handoff_review"
    assert last["content"].startswith("SECURITY WARNING: ") and "it force-pushed main" in last["content"]


def test_an_unreadable_verdict_gives_the_degraded_note(tmp_path: Path) -> None:
    done, notes, _ = run(tmp_path, script("I cannot decide."), "auto")
    assert done.returncode == 0, done.stderr
    assert len(notes) == 1 and "the safety review could not check this sub-agent's work" in notes[0]
    last = json.loads(output_file(done).read_text().splitlines()[-1])
    assert last["subtype"] == "handoff_review" and "could not check" in last["content"]


def test_outside_auto_mode_nothing_is_reviewed(tmp_path: Path) -> None:
    done, notes, _ = run(tmp_path, script("<block>yes</block><reason>never asked</reason>"), "default")
    assert done.returncode == 0, done.stderr
    assert len(notes) == 1 and "SECURITY WARNING" not in notes[0] and "pushed --force to main" in notes[0]
    assert "handoff_review" not in output_file(done).read_text()
