"""Issue 2's bad input, end to end: one line on stderr that says what and where, a non-zero exit, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_catui(tmp_path: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"), **env_extra)
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "catui", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("catui: ")
    return lines[0]


def write_settings(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "proj" / ".catui"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(text)
    return folder / "settings.json"


def test_unknown_model_from_a_settings_file_names_the_file(tmp_path: Path) -> None:
    path = write_settings(tmp_path, '{"model": "sonet"}')
    message = one_line_error(run_catui(tmp_path, "-p", "hi"))
    assert str(path) in message and "'sonet'" in message and "'sonnet'" in message


def test_a_model_setting_that_is_not_a_string_is_not_blamed(tmp_path: Path) -> None:
    write_settings(tmp_path, '{"model": 5}')
    message = one_line_error(run_catui(tmp_path, "-p", "hi"))
    assert message.startswith("catui: no model provider is configured") and "catui demo" in message


def test_unknown_model_from_the_environment_names_the_variable(tmp_path: Path) -> None:
    message = one_line_error(run_catui(tmp_path, "-p", "hi", CATUI_MODEL="opsu"))
    assert message.startswith("catui: CATUI_MODEL: ") and "'opus'" in message


def test_unreadable_settings_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "proj" / ".catui" / "settings.json").mkdir(parents=True)  # a folder cannot be read as a file
    message = one_line_error(run_catui(tmp_path, "-p", "hi", "--model", "sonnet"))
    assert str(tmp_path / "proj" / ".catui" / "settings.json") in message


def test_settings_that_are_not_an_object_are_named(tmp_path: Path) -> None:
    path = write_settings(tmp_path, "[1, 2]\n")
    message = one_line_error(run_catui(tmp_path, "-p", "hi", "--model", "sonnet"))
    assert str(path) in message and "object" in message


def test_missing_settings_argument_file(tmp_path: Path) -> None:
    message = one_line_error(run_catui(tmp_path, "-p", "hi", "--model", "sonnet", "--settings", "nope.json"))
    assert "--settings" in message and "nope.json" in message


def test_invalid_script_names_the_turn(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("turns:\n  - content: [{type: txt, text: x}]\n")
    message = one_line_error(run_catui(tmp_path, "-p", "hi", "--model", f"scripted:{script}"))
    assert "bad.yaml" in message and "turn 1" in message


def test_invalid_base_url_names_the_variable(tmp_path: Path) -> None:
    message = one_line_error(run_catui(tmp_path, "-p", "hi", ANTHROPIC_BASE_URL="htp://x", ANTHROPIC_API_KEY="k"))
    assert "ANTHROPIC_BASE_URL" in message and "htp://x" in message


def test_json_output_of_a_failed_run_is_an_error_result(tmp_path: Path) -> None:
    import json

    script = tmp_path / "none.yaml"
    script.write_text("turns:\n  - match: {first_user_contains: never}\n    content: [{type: text, text: x}]\n")
    done = run_catui(tmp_path, "-p", "hi", "--model", f"scripted:{script}", "--output-format", "json")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    # a provider that fails is an API error, reported as Claude Code reports one: the loop itself succeeded
    assert result["is_error"] is True and result["subtype"] == "success"
    assert result["terminal_reason"] == "api_error" and result["errors"] == []
    assert result["result"].startswith("API Error: ") and "none.yaml" in result["result"]


def test_option_mistakes_are_one_line_too(tmp_path: Path) -> None:
    wrong_value = run_catui(tmp_path, "-p", "hi", "--max-turns", "many")
    assert wrong_value.returncode == 2
    assert "'--max-turns'" in one_line_error(wrong_value) and "catui --help" in wrong_value.stderr
    typo = one_line_error(run_catui(tmp_path, "--modle", "sonnet"))
    assert "'--modle'" in typo and "'--model'" in typo


def test_help_and_version_still_exit_zero(tmp_path: Path) -> None:
    shown = run_catui(tmp_path, "--help")
    assert shown.returncode == 0 and "Usage: catui" in shown.stdout and "demo" in shown.stdout
    version = run_catui(tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.strip().endswith("(catui)")
