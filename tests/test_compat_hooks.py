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
    settings = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [record]}], "Stop": [{"hooks": [record]}]}}
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
    pre, stop = inputs["PreToolUse"], inputs["Stop"]
    if not extra:
        assert not {"prompt_id", "effort", "background_tasks", "session_crons"} & {*pre, *stop}
        return
    assert pre["prompt_id"] == stop["prompt_id"] and len(pre["prompt_id"]) == 36
    assert pre["effort"] == {"level": "medium"} and stop["effort"] == {"level": "medium"}
    assert stop["background_tasks"] == [] and stop["session_crons"] == []
    assert "background_tasks" not in pre
