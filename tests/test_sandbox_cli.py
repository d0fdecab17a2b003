"""The sandbox through the real CLI: ``catui sandbox check``, bwrap missing (fallback and refusal), bad settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.sandbox.probe import probe_bwrap
from tests.support.cli_env import SRC

AVAILABILITY = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}")


def run_catui(tmp_path: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"), PYTHONPATH=str(SRC))
    if path is not None:
        env["PATH"] = path
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "catui", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)


def write_settings(tmp_path: Path, sandbox: Any) -> Path:
    folder = tmp_path / "proj" / ".catui"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    return folder / "settings.json"


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with bash (and nothing else): bwrap is missing for real."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bash = subprocess.run(["bash", "-c", "command -v bash"], capture_output=True, text=True).stdout.strip()
    (bin_dir / "bash").symlink_to(bash)
    return str(bin_dir)


def two_bash_calls(tmp_path: Path) -> Path:
    script = tmp_path / "script.yaml"
    calls = [{"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": f"echo run-{n}"}} for n in (1, 2)]
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"last_is_tool_result": False}, "content": calls},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}))
    return script


def tool_results(stdout: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for line in stdout.splitlines():
        event = json.loads(line)
        if event.get("type") == "user":
            for block in event["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def text_of(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


@needs_bwrap
def test_sandbox_check_reports_and_proves_what_is_allowed(tmp_path: Path) -> None:
    write_settings(tmp_path, {"enabled": True, "excludedCommands": ["docker"]})
    done = run_catui(tmp_path, "sandbox", "check")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    project = (tmp_path / "proj").resolve()
    assert "sandbox.enabled: true" in out and f"bubblewrap: usable ({AVAILABILITY.binary})" in out
    assert f"writable for the main agent: {project}, and a private /tmp" in out
    assert "network: off" in out and "excludedCommands (run unsandboxed): docker" in out
    assert f"write in {project}: allowed" in out
    assert "write in /usr: refused" in out and "connect to 127.0.0.1:1: refused" in out
    assert not list(project.glob(".catui-sandbox-check*"))


def test_missing_bwrap_falls_back_with_one_clear_notice(tmp_path: Path) -> None:
    write_settings(tmp_path, {"enabled": True})
    script = two_bash_calls(tmp_path)
    done = run_catui(tmp_path, "-p", "go", "--model", f"scripted:{script}", "--output-format", "stream-json",
                     "--verbose", "--permission-mode", "bypassPermissions", path=path_without_bwrap(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("the sandbox cannot run") == 1, done.stderr
    assert "not on PATH" in done.stderr and "commands run UNSANDBOXED" in done.stderr
    results = tool_results(done.stdout)
    assert "run-1" in text_of(results["b1"]) and "UNSANDBOXED" in text_of(results["b1"])
    assert "run-2" in text_of(results["b2"]) and "UNSANDBOXED" not in text_of(results["b2"])


def test_missing_bwrap_with_fail_if_unavailable_refuses_bash(tmp_path: Path) -> None:
    write_settings(tmp_path, {"enabled": True, "failIfUnavailable": True})
    script = two_bash_calls(tmp_path)
    no_bwrap = path_without_bwrap(tmp_path)
    done = run_catui(tmp_path, "-p", "go", "--model", f"scripted:{script}", "--output-format", "stream-json",
                     "--verbose", "--permission-mode", "bypassPermissions", path=no_bwrap)
    assert done.returncode == 0, done.stderr
    results = tool_results(done.stdout)
    for key in ("b1", "b2"):
        assert results[key].get("is_error")
        text = text_of(results[key])
        assert "Bash is refused" in text and "not on PATH" in text and "sandbox.failIfUnavailable" in text
        assert "run-" not in text
    check = run_catui(tmp_path, "sandbox", "check", path=no_bwrap)
    assert check.returncode == 1 and "bubblewrap: NOT usable" in check.stdout and "Bash is refused" in check.stdout


def test_a_badly_typed_sandbox_setting_is_one_clear_line(tmp_path: Path) -> None:
    path = write_settings(tmp_path, {"enabled": "yes"})
    done = run_catui(tmp_path, "-p", "hi", "--model", f"scripted:{two_bash_calls(tmp_path)}")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "sandbox.enabled must be true or false" in lines[0], done.stderr
    assert str(path) in lines[0]
