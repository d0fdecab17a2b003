"""``catui --input-format stream-json`` fed raw JSON lines (no SDK): the protocol's edges, bad input, the flags.

The real CLI runs in a subprocess against the loopback Anthropic server; the
tests read its stdout lines and the requests the server received.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.loopback import started_servers

STREAM_FLAGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")
ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    yield from started_servers(AnthropicTestServer)


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
            "session_id": ""}


def control(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}


def run_stream(tmp_path: Path, server: AnthropicTestServer, lines: list[Any], *args: str
               ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    stdin = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6", *args],
                          input=stdin, cwd=project, env=cli_env(tmp_path, server), capture_output=True, text=True,
                          timeout=60)
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def responses(out: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["response"]["request_id"]: o["response"] for o in out if o["type"] == "control_response"}


def test_prompts_without_initialize_each_get_a_turn(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "first"}, "content": [{"type": "text", "text": "one"}]},
        {"match": {"last_user_contains": "second"}, "content": [{"type": "text", "text": "two"}]},
    ]})
    done, out = run_stream(tmp_path, server, [user("first"), user("second")])
    assert done.returncode == 0, done.stderr
    assert [o["result"] for o in out if o["type"] == "result"] == ["one", "two"]
    assert [o["subtype"] for o in out if o["type"] == "system"] == ["init", "init"]
    assert len({o["session_id"] for o in out}) == 1  # one conversation
    first_request, second_request = server.bodies()
    assert "first" in json.dumps(second_request["messages"])  # the second turn carries the first
    # the context reminder (date, memory) opens the conversation once, not every prompt
    assert json.dumps(first_request["messages"]).count("system-reminder") >= 1
    assert json.dumps(second_request["messages"][-1]).count("system-reminder") == 0


def test_control_requests_are_answered_or_refused_by_name(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]})
    done, out = run_stream(tmp_path, server, [
        control("init", "initialize", hooks=None),
        control("status", "mcp_status"),
        control("mode", "set_permission_mode", mode="acceptEdits"),
        control("bad-mode", "set_permission_mode", mode="yolo"),
        control("rewind", "rewind_files", user_message_id="x"),
        control("again", "initialize", hooks=None),
        control("what", "teleport"),
        control("stop", "stop_task", task_id="nope"),
        user("hello"),
    ])
    assert done.returncode == 0, done.stderr
    answers = responses(out)
    assert answers["init"]["subtype"] == "success" and "general-purpose" in [
        a["name"] for a in answers["init"]["response"]["agents"]]
    assert answers["status"]["response"] == {"mcpServers": []}
    assert answers["mode"]["subtype"] == "success"
    assert answers["bad-mode"]["subtype"] == "error" and "unknown permission mode 'yolo'" in answers["bad-mode"]["error"]
    assert answers["rewind"]["subtype"] == "error" and "file checkpointing is off" in answers["rewind"]["error"]
    assert "already initialized" in answers["again"]["error"]
    assert "unknown control request subtype 'teleport'" in answers["what"]["error"]
    assert "no background task with id 'nope'" in answers["stop"]["error"]
    init = next(o for o in out if o["type"] == "system" and o["subtype"] == "init")
    assert init["permissionMode"] == "acceptEdits"


def test_bad_stdin_lines_are_reported_with_their_number_and_skipped(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "still here"}]}]})
    done, out = run_stream(tmp_path, server, [
        "this is not json",
        {"type": "user", "message": {"role": "user"}},
        [1, 2],
        {"type": "keep_alive"},
        user("go"),
    ])
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    assert "stdin line 1 is not JSON" in done.stderr
    assert "stdin line 2: message.content must be a string" in done.stderr
    assert "stdin line 3 is not a message object" in done.stderr
    assert "stdin line 4: catui does not handle messages of type 'keep_alive'" in done.stderr
    # A user line that cannot be a prompt is answered with an error result (the driver waits for one per
    # prompt), in order; the lines that are no prompt at all are only reported.
    results = [(o["is_error"], o["result"]) for o in out if o["type"] == "result"]
    assert results[0][0] and results[0][1].startswith("stdin line 2: message.content must be a string")
    assert results[1:] == [(False, "still here")]


def test_the_exit_status_follows_the_last_result(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"error": {"status": 400, "type": "invalid_request_error", "message": "bad"}}]})
    done, out = run_stream(tmp_path, server, [user("fail please")])
    assert done.returncode == 1
    assert [o["is_error"] for o in out if o["type"] == "result"] == [True]


@pytest.mark.parametrize(("args", "expected"), [
    (("--max-budget-usd", "lots"), "--max-budget-usd must be a positive amount in US dollars"),
    (("--json-schema", "{not json"), "--json-schema is not valid JSON"),
    (("--json-schema", '{"type": "array"}'), "--json-schema: the schema's type is 'array'"),
    (("--permission-prompt-tool", "mcp__auth__ask"), "use --permission-prompt-tool stdio"),
    (("--setting-sources", "user,team"), "--setting-sources: unknown source 'team'"),
    (("--tools", "Read,Teleport"), "--tools: 'Teleport' is not a built-in tool"),
    (("--thinking", "sometimes"), "--thinking 'sometimes'"),
    (("--mcp-config", "{not json"), "--mcp-config is not valid JSON"),
    (("--mcp-config", "missing.json"), "--mcp-config missing.json: cannot read it"),
    (("--system-prompt-file", "nowhere.md"), "--system-prompt-file nowhere.md: cannot read it"),
])
def test_flags_catui_cannot_honour_are_one_line_errors(loopback: ServerFactory, tmp_path: Path,
                                                       args: tuple[str, ...], expected: str) -> None:
    server = loopback({"turns": []})
    done, out = run_stream(tmp_path, server, [user("hi")], *args)
    assert done.returncode == 1 and out == []
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("catui: ") and expected in lines[0], done.stderr
    assert server.bodies() == []


def test_stream_json_input_needs_stream_json_output(loopback: ServerFactory, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "catui", "--input-format", "stream-json"], input="",
                          cwd=tmp_path, env=cli_env(tmp_path, loopback()), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "--input-format stream-json needs --output-format stream-json" in done.stderr


def test_tools_system_prompt_file_and_setting_sources_shape_the_request(loopback: ServerFactory,
                                                                        tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}]}]})
    (tmp_path / "proj" / ".catui").mkdir(parents=True)
    (tmp_path / "proj" / ".catui" / "settings.json").write_text(json.dumps({"model": "claude-opus-4-1"}))
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("You are PROMPT-FROM-FILE.", encoding="utf-8")
    done, _ = run_stream(tmp_path, server, [user("hi")], "--tools", "Read,Glob", "--system-prompt-file",
                         str(prompt_file), "--setting-sources=", "--include-hook-events")
    assert done.returncode == 0, done.stderr
    assert "include-hook-events" not in done.stderr  # honoured in full: no warning
    (body,) = server.bodies()
    assert sorted(t["name"] for t in body["tools"]) == ["Glob", "Read"], [t["name"] for t in body["tools"]]
    assert "PROMPT-FROM-FILE" in json.dumps(body["system"])
    assert body["model"] == "claude-sonnet-4-6"


def test_an_sdk_mcp_server_without_a_driver_fails_with_the_reason(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "answered anyway"}]}]})
    config = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    (tmp_path / "proj").mkdir()
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--model", "claude-sonnet-4-6",
                           "--mcp-config", config, "--strict-mcp-config"], cwd=tmp_path / "proj",
                          env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered anyway"
    assert "calc" in done.stderr and "--input-format stream-json" in done.stderr
