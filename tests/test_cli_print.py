"""Print mode end to end: the real CLI in a subprocess, text / json / stream-json, and bad input.

The anthropic provider runs against the loopback server (real HTTP and SSE);
the scripted provider is used where the provider does not matter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.mcp_wait import MCP_WAIT_ENV

SCRIPT = {
    "turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "text", "text": "Let me look."},
                     {"type": "tool_use", "name": "Read", "input": {"file_path": "__FILE__"}}]},
        {"match": {"last_user_contains": "hello world"}, "content": [{"type": "text", "text": "It says hello world."}]},
    ]
}


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"))
    env.update(extra)
    return env


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir(exist_ok=True)
    (proj / "greeting.txt").write_text("hello world\n")
    return proj


def script_for(proj: Path) -> dict[str, Any]:
    return json.loads(json.dumps(SCRIPT).replace("__FILE__", str(proj / "greeting.txt")))


def catui(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
          input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catui", *args], cwd=project(tmp_path), env=env or clean_env(tmp_path),
        capture_output=True, text=True, timeout=60, input=input_text,
    )


def test_text_output_against_the_anthropic_wire_protocol(tmp_path: Path) -> None:
    proj = project(tmp_path)
    with AnthropicTestServer(script_for(proj)) as server:
        out = catui(tmp_path, "-p", "What does greeting.txt say?", env=clean_env(tmp_path, **server.env()))
        bodies = server.bodies()
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It says hello world."
    assert len(bodies) == 2
    first = bodies[0]
    assert first["model"] == "claude-sonnet-4-6" and first["stream"] is True
    names = [t["name"] for t in first["tools"]]
    assert names == sorted(names) and {"Agent", "Read", "Bash", "Edit"} <= set(names)
    assert first["messages"][0]["content"][-1]["text"] == "What does greeting.txt say?"
    tool_result = bodies[1]["messages"][2]["content"][0]
    assert tool_result["type"] == "tool_result" and "hello world" in json.dumps(tool_result["content"])


def test_json_output_has_claude_codes_result_shape(tmp_path: Path) -> None:
    proj = project(tmp_path)
    with AnthropicTestServer(script_for(proj)) as server:
        out = catui(tmp_path, "-p", "What does it say?", "--output-format", "json",
                    env=clean_env(tmp_path, **server.env()))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "It says hello world."
    assert result["num_turns"] == 2
    for key in ("session_id", "duration_ms", "duration_api_ms", "usage", "modelUsage", "total_cost_usd",
                "permission_denials", "uuid"):
        assert key in result
    usage = result["usage"]
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                "server_tool_use", "service_tier", "cache_creation"):
        assert key in usage
    assert set(result["modelUsage"]) == {"claude-sonnet-4-6"}
    assert result["modelUsage"]["claude-sonnet-4-6"]["contextWindow"] == 200_000
    assert result["modelUsage"]["claude-sonnet-4-6"]["maxOutputTokens"] == 32_000
    assert result["modelUsage"]["claude-sonnet-4-6"]["outputTokens"] == usage["output_tokens"]
    assert result["total_cost_usd"] > 0


def test_stream_json_emits_init_messages_and_result(tmp_path: Path) -> None:
    proj = project(tmp_path)
    with AnthropicTestServer(script_for(proj)) as server:
        out = catui(tmp_path, "-p", "What does it say?", "--output-format", "stream-json",
                    env=clean_env(tmp_path, **server.env()))
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init"
    assert "Task" in events[0]["tools"] and "Agent" in events[0]["tools"]
    assert events[0]["model"] == "claude-sonnet-4-6"
    kinds = [e["type"] for e in events]
    # As in Claude Code, the prompt itself is not echoed (that takes --replay-user-messages there), and
    # each content block of an assistant message is its own event with the message's id.
    assert kinds[1:] == ["assistant", "assistant", "user", "assistant", "result"]
    assert all(e["parent_tool_use_id"] is None for e in events[1:-1])
    assert [b["type"] for b in events[1]["message"]["content"]] == ["text"]
    assert events[2]["message"]["content"][0]["name"] == "Read"
    assert events[1]["message"]["id"] == events[2]["message"]["id"] and events[1]["uuid"] != events[2]["uuid"]
    assert events[3]["message"]["content"][0]["type"] == "tool_result"
    assert events[-1]["result"] == "It says hello world."
    assert len({e["session_id"] for e in events}) == 1
    # The API's message id, stop reason and usage come through, as in Claude Code's events.
    assert events[2]["message"]["id"].startswith("msg_scripted_")
    assert events[2]["message"]["stop_reason"] == "tool_use" and events[2]["message"]["usage"]["output_tokens"] > 0
    init = events[0]
    assert init["apiKeySource"] == "ANTHROPIC_API_KEY" and init["claude_code_version"]
    assert init["skills"] == [] and init["plugins"] == []


def test_prompt_from_stdin_and_scripted_provider(tmp_path: Path) -> None:
    proj = project(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(script_for(proj)))
    out = catui(tmp_path, "-p", "--model", f"scripted:{script}", input_text="What does it say?")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It says hello world."


def test_transcript_is_written_under_the_catui_home(tmp_path: Path) -> None:
    proj = project(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(script_for(proj)))
    out = catui(tmp_path, "-p", "Read it", "--model", f"scripted:{script}", "--output-format", "json")
    session_id = json.loads(out.stdout)["session_id"]
    transcripts = list((tmp_path / "home" / ".catui" / "projects").glob(f"*/{session_id}.jsonl"))
    assert len(transcripts) == 1
    lines = [json.loads(line) for line in transcripts[0].read_text().splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]


def one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_no_key_says_what_to_set_and_points_at_the_demo(tmp_path: Path) -> None:
    message = one_line_error(catui(tmp_path, "-p", "hello"))
    assert "ANTHROPIC_API_KEY" in message and "catui demo" in message


def test_unknown_model_alias(tmp_path: Path) -> None:
    message = one_line_error(catui(tmp_path, "-p", "hello", "--model", "sonet"))
    assert "sonet" in message and "sonnet" in message


def test_invalid_settings_file_names_file_and_line(tmp_path: Path) -> None:
    proj = project(tmp_path)
    (proj / ".catui").mkdir(exist_ok=True)
    (proj / ".catui" / "settings.json").write_text('{\n  "model": "sonnet",\n  oops\n}\n')
    message = one_line_error(catui(tmp_path, "-p", "hello", "--model", "sonnet"))
    assert "settings.json" in message and "line 3" in message


def test_unreachable_endpoint(tmp_path: Path) -> None:
    env = clean_env(tmp_path, ANTHROPIC_BASE_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY="k")
    message = one_line_error(catui(tmp_path, "-p", "hello", env=env))
    assert "127.0.0.1:9" in message


def test_invalid_api_key(tmp_path: Path) -> None:
    proj = project(tmp_path)
    with AnthropicTestServer(script_for(proj), require_key="right-key") as server:
        env = clean_env(tmp_path, **server.env(api_key="wrong-key"))
        message = one_line_error(catui(tmp_path, "-p", "hello", env=env))
    assert "ANTHROPIC_API_KEY" in message


def test_script_without_a_turn_for_the_request(tmp_path: Path) -> None:
    script = tmp_path / "empty.yaml"
    script.write_text("turns:\n  - match: {first_user_contains: never}\n    content: [{type: text, text: x}]\n")
    message = one_line_error(catui(tmp_path, "-p", "hello there", "--model", f"scripted:{script}"))
    assert "empty.yaml" in message and "hello there" in message


def test_verbose_shows_the_traceback(tmp_path: Path) -> None:
    out = catui(tmp_path, "-p", "hello", "--model", "sonet", "--verbose")
    assert out.returncode != 0 and "Traceback" in out.stderr


def test_stream_json_gives_each_tool_result_its_own_user_event() -> None:
    from catui.cli.stream.output import split_tool_results
    from catui.session.events import UserMessageEvent

    message = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "two"},
        {"type": "text", "text": "a queued note"},
    ]}
    event = UserMessageEvent(message=message, tool_use_results={"t2": {"status": "completed"}}, uuid="u-1")
    first, second = split_tool_results(event, "s")
    assert first["message"]["content"] == [message["content"][0]] and "tool_use_result" not in first
    assert first["uuid"] == "u-1"
    assert [b.get("tool_use_id") for b in second["message"]["content"]] == ["t2", None]
    assert second["tool_use_result"] == {"status": "completed"}


def test_mcp_servers_of_the_project_in_print_mode(tmp_path: Path) -> None:
    proj = project(tmp_path)
    server = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"
    (proj / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"tools": {"command": sys.executable, "args": [str(server)]}}}))
    (proj / ".catui").mkdir(exist_ok=True)
    (proj / ".catui" / "settings.local.json").write_text(json.dumps(
        {"enableAllProjectMcpServers": True, "permissions": {"allow": ["mcp__tools"]}}))
    script = {"turns": [
        {"match": {"last_is_tool_result": False, "tools_include": ["mcp__tools__echo"]},
         "content": [{"type": "tool_use", "name": "mcp__tools__echo", "input": {"text": "over mcp"}}]},
        {"match": {"last_user_contains": "over mcp"}, "content": [{"type": "text", "text": "echoed"}]},
    ]}
    with AnthropicTestServer(script) as api:
        env = clean_env(tmp_path, **api.env(), PYTHONPATH=str(Path(__file__).resolve().parents[1]), **MCP_WAIT_ENV)
        out = catui(tmp_path, "-p", "echo it", "--output-format", "stream-json", env=env)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert {"name": "tools", "status": "connected"} in events[0]["mcp_servers"]
    assert "mcp__tools__echo" in events[0]["tools"]
    assert events[-1]["result"] == "echoed"


def test_a_tool_denied_outright_is_not_offered_to_the_model(tmp_path: Path) -> None:
    proj = project(tmp_path)
    with AnthropicTestServer(script_for(proj)) as server:
        out = catui(tmp_path, "-p", "read it", "--disallowedTools", "Bash", "--disallowedTools", "Edit(src/**)",
                    env=clean_env(tmp_path, **server.env()))
        bodies = server.bodies()
    assert out.returncode == 0, out.stderr
    names = [t["name"] for t in bodies[0]["tools"]]
    assert "Bash" not in names, "a whole-tool deny rule removes the tool from the list"
    assert "Edit" in names, "a rule for some calls of a tool keeps the tool"


def test_catui_runtime_folder_is_invisible_to_git_and_search(tmp_path: Path) -> None:
    from catui.paths import project_runtime_dir

    runtime = project_runtime_dir(tmp_path)
    assert (runtime / ".gitignore").is_file() and (runtime / ".ignore").is_file()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (runtime / "tasks").mkdir()
    (runtime / "tasks" / "a1.output").write_text("{}\n")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                            capture_output=True, text=True, check=True).stdout
    assert status.strip() == ""


def test_the_guide_agent_tools_follow_the_sessions_search_tools(tmp_path: Path, monkeypatch: Any) -> None:
    from catui.app import RunOptions, build_app

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: hi}]\n")
    proj = project(tmp_path)
    with_search = build_app(RunOptions(cwd=proj, model=f"scripted:{script}", interactive=True, setting_sources=()))
    without = build_app(RunOptions(cwd=proj, model=f"scripted:{script}", interactive=True, setting_sources=(),
                                   disallowed_tools=["Glob", "Grep"]))
    assert with_search.registry.get("catui-guide").tools[:2] == ["Glob", "Grep"]
    assert without.registry.get("catui-guide").tools[0] == "Bash"
    assert "Glob" not in [t.name for t in without.session.tools]
