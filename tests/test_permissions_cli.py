"""Permissions end to end: `catui -p` in a subprocess, rules from settings and flags, denials in the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def bash_script(command: str) -> dict[str, Any]:
    return {
        "turns": [
            {"match": {"last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]},
            {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
        ]
    }


def run(project: Path, script: dict[str, Any], *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    script_path = project.parent / "script.yaml"
    script_path.write_text(yaml.safe_dump(script), encoding="utf-8")
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "CATUI_HOME": str(home / ".catui")}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CLAUDE_CONFIG_DIR"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "go", "--model", f"scripted:{script_path}",
         "--output-format", "stream-json", "--verbose", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done, events


def tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for event in events:
        if event.get("type") != "user":
            continue
        for block in event["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(block)
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def test_unapproved_command_is_denied_with_a_reason_and_listed(project: Path) -> None:
    done, events = run(project, bash_script("touch made.txt"))
    assert done.returncode == 0, done.stderr  # a denied call is reported to the model; the run goes on
    result = events[-1]
    assert result["type"] == "result"
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    [block] = tool_results(events)
    assert block["is_error"] is True
    text = result_text(block)
    assert "default mode" in text and "'Bash(touch made.txt:*)'" in text and "--allowedTools" in text
    assert not (project / "made.txt").exists()


def test_allowed_tools_flag_lets_the_command_run(project: Path) -> None:
    done, events = run(project, bash_script("touch made.txt"), "--allowedTools", "Read,Bash(touch:*)")
    assert done.returncode == 0, done.stderr
    assert events[-1]["permission_denials"] == []
    assert (project / "made.txt").exists()


def test_project_deny_rule_beats_the_allow_flag(project: Path) -> None:
    settings = project / ".catui" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}}))
    done, events = run(project, bash_script("touch made.txt"), "--allowedTools", "Bash")
    assert done.stderr == ""
    [block] = tool_results(events)
    text = result_text(block)
    assert "Bash(touch:*)" in text and "projectSettings" in text and str(settings) in text
    assert [d["tool_name"] for d in events[-1]["permission_denials"]] == ["Bash"]
    assert not (project / "made.txt").exists()


def test_disallowed_tools_flag_and_plan_mode(project: Path) -> None:
    _, events = run(project, bash_script("touch made.txt"), "--permission-mode", "bypassPermissions",
                    "--disallowedTools", "Bash(touch:*)")
    assert "--disallowedTools" in result_text(tool_results(events)[0])
    _, events = run(project, bash_script("touch made.txt"), "--permission-mode", "plan")
    assert "plan mode is on" in result_text(tool_results(events)[0])
    assert not (project / "made.txt").exists()


def test_malformed_rule_is_reported_on_stderr_and_ignored(project: Path) -> None:
    settings = project / ".catui" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(touch made.txt"]}}))
    done, events = run(project, bash_script("touch made.txt"))
    assert f"{settings}: ignoring permissions.allow entry 'Bash(touch made.txt'" in done.stderr
    assert [d["tool_name"] for d in events[-1]["permission_denials"]] == ["Bash"]
    assert not (project / "made.txt").exists()


def test_file_tools_outside_the_working_directories(project: Path) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("secret\n")
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(outside / "notes.txt")}},
            {"type": "tool_use", "name": "Glob", "input": {"pattern": f"{outside}/*.txt"}},
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(outside / "new.txt"), "content": "x"}},
        ]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]}
    _, events = run(project, script, "--permission-mode", "acceptEdits")
    assert [d["tool_name"] for d in events[-1]["permission_denials"]] == ["Read", "Glob", "Write"]
    assert all("outside the working directories" in result_text(b) for b in tool_results(events))
    assert not (outside / "new.txt").exists()

    _, events = run(project, script, "--allowedTools", f"Read(/{outside}/**)")
    assert [d["tool_name"] for d in events[-1]["permission_denials"]] == ["Write"]
    assert "secret" in result_text(tool_results(events)[0])

    _, events = run(project, script, "--permission-mode", "acceptEdits", "--add-dir", str(outside))
    assert events[-1]["permission_denials"] == [] and (outside / "new.txt").read_text() == "x"


def test_print_mode_cannot_leave_plan_mode_without_a_plan(project: Path) -> None:
    # With a plan file, print mode denies ExitPlanMode (tests/test_tools_plan_mode_flow.py, where the session
    # id and so the plan file are known); without one there is nothing to approve and the model is told
    # where to write the plan, while plan mode stays on.
    target = project / "impl.txt"
    script = {"turns": [
        {"match": {"last_is_tool_result": False, "last_user_contains": ["<system-reminder>", "/plans/"]},
         "content": [{"type": "tool_use", "name": "ExitPlanMode", "input": {}}]},
        {"match": {"last_is_tool_result": True, "last_user_contains": "No plan to present"}, "content": [
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(target), "content": "x"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]}
    _, events = run(project, script, "--permission-mode", "plan", "--allowedTools", "Write,ExitPlanMode")
    assert [d["tool_name"] for d in events[-1]["permission_denials"]] == ["Write"]
    results = tool_results(events)
    assert "Write your plan to that file" in result_text(results[0]) and "/plans/" in result_text(results[0])
    assert "plan mode is on" in result_text(results[1]) and not target.exists()
