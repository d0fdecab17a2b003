"""Print-mode options end to end in a subprocess (issue 2, point 5): --append-system-prompt, --max-turns,
--settings, --disallowedTools, --allowedTools and --permission-mode as the model and the user see them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer

GLOB_FOREVER = {"turns": [{"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}],
                           "repeat": True}]}


def run_catui(tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"), **(extra_env or {}))
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "catui", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def one_request(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    with AnthropicTestServer({"turns": [{"content": [{"type": "text", "text": "ok"}]}]}) as server:
        done = run_catui(tmp_path, "-p", "hi", *args, extra_env=server.env())
        [body] = server.bodies()
    assert done.returncode == 0, done.stderr
    return done, body


def test_append_system_prompt_ends_the_system_prompt(tmp_path: Path) -> None:
    _, body = one_request(tmp_path, "--append-system-prompt", "APPENDED-MARKER: answer tersely.")
    system = "\n".join(block["text"] for block in body["system"])
    assert system.rstrip().endswith("APPENDED-MARKER: answer tersely.")


def test_model_option_picks_the_id_and_its_max_tokens(tmp_path: Path) -> None:
    _, body = one_request(tmp_path, "--model", "opus")
    assert body["model"] == "claude-opus-4-6" and body["max_tokens"] == 64000


def test_settings_argument_applies_over_the_files(tmp_path: Path) -> None:
    settings = json.dumps({"model": "haiku", "modelAliases": {"haiku": "claude-haiku-custom"}})
    _, body = one_request(tmp_path, "--settings", settings)
    assert body["model"] == "claude-haiku-custom" and body["max_tokens"] == 32000


def test_max_turns_stops_the_run_with_an_error_result(tmp_path: Path) -> None:
    script = tmp_path / "forever.json"
    script.write_text(json.dumps(GLOB_FOREVER))
    done = run_catui(tmp_path, "-p", "go", "--model", f"scripted:{script}", "--max-turns", "2",
                     "--output-format", "json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True and result["num_turns"] == 2


def test_permission_flags_decide_whether_a_command_runs(tmp_path: Path) -> None:
    script = tmp_path / "touch.json"
    script.write_text(json.dumps({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}))
    args = ("-p", "go", "--model", f"scripted:{script}", "--output-format", "json")
    denied = json.loads(run_catui(tmp_path, *args).stdout)
    assert [d["tool_name"] for d in denied["permission_denials"]] == ["Bash"]
    assert not (tmp_path / "proj" / "made.txt").exists()
    allowed = json.loads(run_catui(tmp_path, *args, "--allowedTools", "Bash(touch:*)").stdout)
    assert allowed["permission_denials"] == [] and (tmp_path / "proj" / "made.txt").exists()
    (tmp_path / "proj" / "made.txt").unlink()
    bypass = json.loads(run_catui(tmp_path, *args, "--permission-mode", "bypassPermissions").stdout)
    assert bypass["permission_denials"] == [] and (tmp_path / "proj" / "made.txt").exists()
    (tmp_path / "proj" / "made.txt").unlink()
    # A deny rule beats every mode.
    denied_again = json.loads(run_catui(tmp_path, *args, "--permission-mode", "bypassPermissions",
                                        "--disallowedTools", "Bash(touch:*)").stdout)
    assert [d["tool_name"] for d in denied_again["permission_denials"]] == ["Bash"]
    assert not (tmp_path / "proj" / "made.txt").exists()
    # A tool denied outright is not even offered, as in Claude Code: a call to it finds no such tool.
    removed = json.loads(run_catui(tmp_path, *args, "--permission-mode", "bypassPermissions",
                                   "--disallowedTools", "Bash").stdout)
    assert removed["permission_denials"] == [] and not (tmp_path / "proj" / "made.txt").exists()
