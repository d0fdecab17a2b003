"""Point 6's hook input fields (``prompt_id``, ``effort``, ``background_tasks``, ``session_crons``) through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import CURRENT, stream_run, text


@pytest.mark.parametrize("extra", [CURRENT, {}])
def test_hook_inputs(tmp_path: Path, extra: dict[str, str]) -> None:
    repo = git_repo(tmp_path)
    log = tmp_path / "hooks.jsonl"
    record = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [record]}], "Stop": [{"hooks": [record]}],
                          "PostToolUse": [{"matcher": "*", "hooks": [record]}],
                          "UserPromptSubmit": [{"hooks": [record]}]}}
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "true", "description": "x"}}]},
        {"match": {"last_is_tool_result": True}, "content": text("done"), "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **extra), "Go", "--settings", json.dumps(settings),
                             "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    inputs = {i["hook_event_name"]: i for i in (json.loads(line) for line in log.read_text().splitlines() if line)}
    pre, stop, post, submit = inputs["PreToolUse"], inputs["Stop"], inputs["PostToolUse"], inputs["UserPromptSubmit"]
    if not extra:
        assert not {"prompt_id", "effort", "background_tasks", "session_crons", "duration_ms"} & {*pre, *stop, *post}
        return
    assert pre["prompt_id"] == stop["prompt_id"] and len(pre["prompt_id"]) == 36
    # The prompt's own UserPromptSubmit has its turn's id; PostToolUse ends with how long the call ran.
    assert submit["prompt_id"] == pre["prompt_id"] == post["prompt_id"]
    assert list(post)[-1] == "duration_ms" and isinstance(post["duration_ms"], int) and post["duration_ms"] >= 0
    assert "duration_ms" not in pre
    assert pre["effort"] == {"level": "medium"} and stop["effort"] == {"level": "medium"}
    assert stop["background_tasks"] == [] and stop["session_crons"] == []
    assert "background_tasks" not in pre


def agent_turns(call: dict[str, object]) -> dict[str, object]:
    return {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("parent done"),
         "repeat": True},
        {"match": {"first_user_contains": "Child one", "last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_sh", "name": "Bash", "input": {"command": "true", "description": "x"}}]},
        {"match": {"first_user_contains": "Child one"}, "content": text("All good"), "repeat": True},
    ]}


def logged_inputs(folder: Path) -> list[dict[str, object]]:
    """Each hook invocation wrote its own file (hooks of the parent and a background child run at once)."""
    return [json.loads(f.read_text()) for f in sorted(folder.iterdir())]


@pytest.mark.parametrize("extra", [CURRENT, {}])
@pytest.mark.parametrize("background", [True, False])
def test_notification_turn_hooks_and_one_stop_per_turn(tmp_path: Path, extra: dict[str, str], background: bool) -> None:
    """A background agent's notification starts a turn: the current profile runs UserPromptSubmit with the
    notification as the prompt (a new prompt_id); every turn fires Stop once."""
    repo = git_repo(tmp_path)
    folder = tmp_path / "hook-inputs"
    folder.mkdir()
    record = {"type": "command", "command": f"cat > $(mktemp -p {folder} h.XXXXXXXX)"}
    settings = {"hooks": {event: [{"hooks": [record]}] for event in ("UserPromptSubmit", "Stop", "SubagentStop")}}
    call = {"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {
        "description": "job", "prompt": "Child one", "subagent_type": "general-purpose",
        "run_in_background": background}}
    with AnthropicTestServer(agent_turns(call)) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go", "--settings", json.dumps(settings),
                                 "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    turns = len([line for line in lines if line.get("type") == "result"])
    assert turns == (2 if background else 1)
    inputs = logged_inputs(folder)
    stops = [i for i in inputs if i["hook_event_name"] == "Stop"]
    submits = [i for i in inputs if i["hook_event_name"] == "UserPromptSubmit"]
    assert len(stops) == turns and len([i for i in inputs if i["hook_event_name"] == "SubagentStop"]) == 1
    if not extra:
        assert [s["prompt"] for s in submits] == ["Go"]
        return
    assert len({s["prompt_id"] for s in stops}) == turns  # one Stop per turn, each with its turn's prompt_id
    assert {s["prompt_id"] for s in submits} == {s["prompt_id"] for s in stops}
    if background:
        first, second = sorted(submits, key=lambda s: s["prompt"] != "Go")
        assert first["prompt"] == "Go"
        prompt = str(second["prompt"])
        assert prompt.startswith("<task-notification>\n<task-id>") and prompt.endswith("</task-notification>")
        assert "<result>All good</result>" in prompt and "system-reminder" not in prompt
    else:
        assert [s["prompt"] for s in submits] == ["Go"]
