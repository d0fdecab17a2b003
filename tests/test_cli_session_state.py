"""``session_state_changed`` and ``task_updated`` frames of ``catui --input-format stream-json``.

Raw lines first (the real CLI in a subprocess on the loopback server), then the official
claude-agent-sdk, which asks for the state frames itself and uses them to keep catui's stdin open
until the turn a finished background agent owes has run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.loopback import Fault, RecordedRequest
from tests.test_cli_stream_input import STREAM_FLAGS, ServerFactory, loopback, user

__all__ = ["loopback"]  # fixture used by name

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)

BACKGROUND_SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"first_user_contains": "BG-JOB"}, "content": [{"type": "text", "text": "bg result"}]},
    {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "bg reported"}]},
    {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
     "input": {"description": "background job", "prompt": "BG-JOB: report", "subagent_type": "general-purpose",
               "run_in_background": True}}]},
    # The main agent's answer comes late (HeldAnswerServer), so the background agent has finished before this
    # turn's result: the driver must still keep stdin open for the notification turn that follows.
    {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "started it"}]},
]}


class HeldAnswerServer(AnthropicTestServer):
    """Holds the main agent's answer to its Agent call's result until :meth:`release` (a fixed 1.5 s delay
    before did not guarantee, on a loaded machine, that the background agent had finished by then)."""

    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(script)
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        last = (body.get("messages") or [{}])[-1]
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == "toolu_bg"
            for b in content
        ):
            self._released.wait(GUARD_S)  # a guard against a hang, not a delay
        super().handle_post(handler, request, fault)


def run_lines_releasing_when_the_task_completes(
    tmp_path: Path, server: HeldAnswerServer, lines: list[dict[str, Any]], **env: str
) -> list[dict[str, Any]]:
    """``run_lines``, releasing the server's held answer once the CLI reported the background task completed."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6"]
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryFile("w+") as stderr, subprocess.Popen(
        command, cwd=project, env=cli_env(tmp_path, server, **env), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=stderr, text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.close()
        try:
            for text in proc.stdout:  # ends when the CLI exits; the server's hold guards against a hang
                if not text.strip():
                    continue
                out.append(json.loads(text))
                if out[-1].get("subtype") == "task_updated" and out[-1]["patch"].get("status") == "completed":
                    server.release()
            proc.wait(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr.seek(0)
        assert proc.returncode == 0, stderr.read()
    return out


def run_lines(tmp_path: Path, server: AnthropicTestServer, lines: list[dict[str, Any]], **env: str
              ) -> list[dict[str, Any]]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6"],
                          input=stdin, cwd=project, env=cli_env(tmp_path, server, **env), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def marks(out: list[dict[str, Any]]) -> list[str]:
    """The stream reduced to states, results and task status changes, in order."""
    seen = []
    for line in out:
        if line.get("subtype") == "session_state_changed":
            seen.append(f"state:{line['state']}")
        elif line["type"] == "result":
            seen.append(f"result:{line['result']}")
        elif line.get("subtype") == "task_updated":
            seen.append(f"task:{line['patch']['status']}")
    return seen


def test_state_frames_stay_running_until_the_background_agents_turn_has_run(tmp_path: Path) -> None:
    with HeldAnswerServer(BACKGROUND_SCRIPT) as server:
        out = run_lines_releasing_when_the_task_completes(
            tmp_path, server, [user("start a background job")], CLAUDE_CODE_SDK_READS_SESSION_STATE="1")
    assert marks(out) == ["state:running", "task:completed", "result:started it", "result:bg reported", "state:idle"]
    frames = [o for o in out if o.get("subtype") == "session_state_changed"]
    assert all(f["sdk_host_only"] is True and f["session_id"] == out[-1]["session_id"] for f in frames)
    updated = next(o for o in out if o.get("subtype") == "task_updated")
    started = next(o for o in out if o.get("subtype") == "task_started")
    assert updated["task_id"] == started["task_id"] and updated["type"] == "system"


def test_no_state_frames_unless_asked_and_the_callers_opt_in_has_no_marker(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]})
    plain = run_lines(tmp_path, server, [user("one")])
    assert marks(plain) == ["result:hi"]
    asked = run_lines(tmp_path, server, [user("one"), user("two")], CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS="1")
    assert marks(asked) == ["state:running", "result:hi", "state:idle", "state:running", "result:hi", "state:idle"]
    assert not any("sdk_host_only" in o for o in asked)


async def test_the_sdk_keeps_stdin_open_for_the_notification_turns_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.test_cli_sdk_protocol import options_for

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("CATUI_MAX_RETRIES", "0")
    stops: list[str] = []

    async def on_stop(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        stops.append(input_data["hook_event_name"])
        return {}

    async def gather(server: HeldAnswerServer) -> list[Any]:
        options = options_for(server, tmp_path, hooks={"Stop": [sdk.HookMatcher(hooks=[on_stop])]})
        messages = []
        async for message in sdk.query(prompt="start a background job", options=options):
            messages.append(message)
            if isinstance(message, sdk.TaskUpdatedMessage) and message.status == "completed":
                server.release()
        return messages

    with HeldAnswerServer(BACKGROUND_SCRIPT) as server:
        messages = await asyncio.wait_for(gather(server), GUARD_S)
    assert [m.result for m in messages if isinstance(m, sdk.ResultMessage)] == ["started it", "bg reported"]
    assert stops == ["Stop", "Stop"]  # the notification turn's Stop hook was answered too
    updates = [m for m in messages if isinstance(m, sdk.TaskUpdatedMessage)]
    assert [u.status for u in updates] == ["completed"]
    assert not any(isinstance(m, sdk.SystemMessage) and m.subtype == "session_state_changed" for m in messages)
