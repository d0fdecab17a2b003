"""Custom slash commands through the real CLI (print mode) against the loopback Anthropic server.

The project has commands in ``.claude/commands`` (one in a subfolder), the user one in
``$CLAUDE_CONFIG_DIR/commands``, a plugin that has nothing but a command. The assertions read the init
event and what the model received, which is what Claude Code 2.1.92 sent for the same files.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

OK = {"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}


def make_project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, user config dir, plugin folder)."""
    repo = tmp_path / "repo"
    commands = repo / ".claude" / "commands"
    (commands / "ns").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "notes.txt").write_text("hello from notes\n")
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: <name> [mood]\nallowed-tools: Bash(echo:*)\n---\n"
        "Greet $ARGUMENTS warmly. First $0, second $1.\nNotes: @notes.txt\nShell: !`echo shell-ran-$1`\n")
    (commands / "ns" / "deep.md").write_text("Deep command without frontmatter. Args: $ARGUMENTS\n")
    (commands / "hidden.md").write_text("---\ndescription: Hidden from model\ndisable-model-invocation: true\n---\n"
                                        "Hidden body\n")
    (commands / "touchy.md").write_text("---\ndescription: Writes a file\n---\nResult: !`touch made.txt && echo t`\n")
    user = tmp_path / "claude-config"
    (user / "commands").mkdir(parents=True)
    (user / "commands" / "mine.md").write_text("---\ndescription: A user command\n---\nUser body $ARGUMENTS\n")
    plugin = tmp_path / "tidy-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "tidy"}))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "sweep.md").write_text("Sweep $ARGUMENTS\n")
    return repo, user, plugin


def run(tmp_path: Path, script: Any, prompt: str, *extra: str) -> tuple[subprocess.CompletedProcess[str],
                                                                         list[dict[str, Any]], list[Any]]:
    repo, user, plugin = make_project(tmp_path)
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, CLAUDE_CONFIG_DIR=str(user))
        done = run_catui(repo, env, "-p", prompt, "--output-format", "stream-json", "--verbose",
                         "--plugin-dir", str(plugin), *extra, timeout=60)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        return done, events, [r.body for r in server.requests]


def texts(request: dict[str, Any]) -> list[str]:
    return [b["text"] for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "text"]


def test_a_command_expands_into_what_claude_code_sends(tmp_path: Path) -> None:
    done, events, requests = run(tmp_path, OK, "/greet Alice happy")
    assert done.returncode == 0, done.stderr
    init = events[0]
    assert init["slash_commands"] == ["greet", "hidden", "mine", "ns:deep", "tidy:sweep", "touchy", "compact"]
    assert init["skills"] == ["hidden"]  # as Claude Code lists a described command that the model may not use
    assert {"name": "tidy", "path": str(tmp_path / "tidy-plugin")} in init["plugins"]
    assert "Skill" in init["tools"]
    [request] = requests
    sent = texts(request)
    notes = str(tmp_path / "repo" / "notes.txt")
    header = ("<command-message>greet</command-message>\n<command-name>/greet</command-name>\n"
              "<command-args>Alice happy</command-args>\n")
    body = "Greet Alice happy warmly. First Alice, second happy.\nNotes: @notes.txt\nShell: shell-ran-happy\n"
    assert sent[-2:] == [header, body]
    read_call = next(t for t in sent if "Called the Read tool" in t)
    assert json.dumps({"file_path": notes}) in read_call
    assert "hello from notes" in next(t for t in sent if "Result of calling the Read tool" in t)
    listing = next(t for t in sent if "Skill tool" in t)
    # the model is told of the project and user commands, not of the hidden one nor the undescribed plugin one
    assert "- greet: Greet someone" in listing and "- ns:deep: Deep command without frontmatter." in listing
    assert "- mine: A user command" in listing and "hidden" not in listing and "tidy:sweep" not in listing


def test_namespaced_plugin_and_hidden_commands_run_for_the_user(tmp_path: Path) -> None:
    for prompt, body in [("/ns:deep  zz  yy ", "Deep command without frontmatter. Args:  zz  yy\n"),
                         ("/tidy:sweep the floor", "Sweep the floor\n"),
                         ("/hidden x", "Hidden body\n\n\nARGUMENTS: x")]:
        folder = tmp_path / prompt.split()[0].strip("/").replace(":", "-")
        folder.mkdir()
        done, _events, requests = run(folder, OK, prompt)
        assert done.returncode == 0, done.stderr
        assert texts(requests[0])[-1] == body


def test_an_unknown_command_ends_without_a_model_call(tmp_path: Path) -> None:
    _done, events, requests = run(tmp_path, OK, "/nonexistent foo")
    assert requests == []
    assert events[-1]["result"] == "Unknown skill: nonexistent" and events[-1]["is_error"] is False


def test_a_shell_line_that_needs_approval_stops_the_command(tmp_path: Path) -> None:
    done, events, requests = run(tmp_path, OK, "/touchy")
    assert requests == [] and done.returncode == 1
    assert not (tmp_path / "repo" / "made.txt").exists()
    result = events[-1]
    assert result["is_error"] is True and "Shell command permission check failed" in result["result"]
    assert "!`touch made.txt && echo t`" in result["result"] and "allowed-tools" in result["result"]
    # allowed by the session's own rules, the same line runs
    allowed, _events, requests = run(tmp_path / "again", OK, "/touchy", "--allowedTools", "Bash(touch:*)")
    assert allowed.returncode == 0, allowed.stderr
    assert texts(requests[0])[-1] == "Result: t\n"


def test_the_model_loads_a_command_through_the_skill_tool(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_deep", "name": "Skill", "input": {"skill": "ns:deep", "args": "q"}},
            {"type": "tool_use", "id": "toolu_greet", "name": "Skill", "input": {"skill": "greet", "args": "Bo"}},
            {"type": "tool_use", "id": "toolu_hidden", "name": "Skill", "input": {"skill": "hidden"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}]},
    ]}
    done, events, requests = run(tmp_path, script, "please work")
    assert done.returncode == 0, done.stderr
    last = requests[-1]["messages"][-1]["content"]
    results = {b["tool_use_id"]: b for b in last if b.get("type") == "tool_result"}
    assert results["toolu_deep"]["content"] == "Launching skill: ns:deep"
    # a command with allowed-tools asks first, as in Claude Code: print mode has nobody to ask
    assert results["toolu_greet"].get("is_error") is True
    assert "Unknown skill: hidden" in json.dumps(results["toolu_hidden"])
    follow = [b["text"] for b in last if b.get("type") == "text"]
    assert "Deep command without frontmatter. Args: q\n" in follow
    denials = events[-1]["permission_denials"]
    assert [d["tool_use_id"] for d in denials] == ["toolu_greet"]


@pytest.mark.parametrize("mode", ["text", "json"])
def test_print_mode_text_and_json_outputs(tmp_path: Path, mode: str) -> None:
    repo, user, _plugin = make_project(tmp_path)
    with AnthropicTestServer(OK) as server:
        env = cli_env(tmp_path, server, CLAUDE_CONFIG_DIR=str(user))
        done = run_catui(repo, env, "-p", "/mine hi", "--output-format", mode, timeout=60)
        assert done.returncode == 0, done.stderr
        assert texts(server.requests[0].body)[-1] == "User body hi\n"
    assert (done.stdout.strip() if mode == "text" else json.loads(done.stdout)["result"]) == "ok"


def test_catui_skills_lists_and_shows_commands(tmp_path: Path) -> None:
    repo, user, plugin = make_project(tmp_path)
    with AnthropicTestServer(OK) as server:
        env = cli_env(tmp_path, server, CLAUDE_CONFIG_DIR=str(user))
        listed = run_catui(repo, env, "skills", "list", "--json", "--plugin-dir", str(plugin), timeout=60)
        shown = run_catui(repo, env, "skills", "show", "ns:deep", timeout=60)
    assert listed.returncode == 0, listed.stderr
    kinds = {s["name"]: s["kind"] for s in json.loads(listed.stdout)["skills"]}
    assert kinds == {"greet": "command", "hidden": "command", "mine": "command", "ns:deep": "command",
                     "tidy:sweep": "command", "touchy": "command"}
    assert "Kind: custom command (/ns:deep args)" in shown.stdout and "Args: $ARGUMENTS" in shown.stdout
