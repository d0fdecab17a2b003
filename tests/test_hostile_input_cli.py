"""The real CLI (``python -m catui``) against hostile input at every boundary, end to end.

stream-json lines that are too deep, too long, malformed content blocks, lone
surrogates; garbage in the model's event stream; settings and ``.mcp.json``
files that are FIFOs, links to ``/dev/zero`` or nested too deeply; a process a
Bash command forks into the background. Each is a one-line error (or a warning)
naming the thing, the other input still served, the exit status telling the
truth, and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catui.paths import project_slug
from tests.support.anthropic_server import AnthropicTestServer, Fault
from tests.support.cli_env import cli_env, run_catui

STREAM_FLAGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")
ECHO: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "first"}, "repeat": True, "content": [{"type": "text", "text": "one"}]},
    {"match": {"last_user_contains": "second"}, "repeat": True, "content": [{"type": "text", "text": "two"}]},
    {"repeat": True, "content": [{"type": "text", "text": "other"}]},
]}


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer(ECHO) as running:
        yield running


def user(content: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": None,
            "session_id": ""}


def stream(tmp_path: Path, server: AnthropicTestServer, lines: list[bytes | str | dict[str, Any]],
           *args: str) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, Any]]]:
    """Run catui with ``lines`` on stdin, written as they come (a huge line is never held whole here)."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    with (tmp_path / "out").open("w+b") as out, (tmp_path / "err").open("w+b") as err:
        proc = subprocess.Popen([sys.executable, "-m", "catui", *STREAM_FLAGS, *args], cwd=project,
                                env=cli_env(tmp_path, server), stdin=subprocess.PIPE, stdout=out, stderr=err)
        assert proc.stdin is not None
        try:
            for line in lines:
                if isinstance(line, dict):
                    proc.stdin.write(json.dumps(line).encode() + b"\n")
                elif isinstance(line, str):
                    proc.stdin.write(line.encode() + b"\n")
                else:
                    proc.stdin.write(line)
            proc.stdin.close()
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def results(out: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    return [(o["is_error"], o["result"]) for o in out if o["type"] == "result"]


def test_a_line_over_the_limit_is_skipped_and_the_later_prompts_still_run(tmp_path: Path,
                                                                       server: AnthropicTestServer) -> None:
    from catui.cli.stream.input import MAX_LINE_BYTES

    def huge_line() -> Iterator[bytes]:
        chunk = b"z" * (8 * 1024 * 1024)
        for _ in range(MAX_LINE_BYTES // len(chunk) + 2):
            yield chunk
        yield b"\n"

    done, out = stream(tmp_path, server, [user("first"), *huge_line(), user("second")])
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    assert f"stdin line 2 is longer than {MAX_LINE_BYTES} bytes; it is skipped" in stderr
    assert results(out) == [(False, "one"), (False, "two")]
    assert done.returncode == 0


def test_a_deeply_nested_line_is_skipped_with_its_number(tmp_path: Path, server: AnthropicTestServer) -> None:
    nested = '{"type": "user", "message": ' + "[" * 50_000 + "]" * 50_000 + "}"
    done, out = stream(tmp_path, server, [nested, user("second")])
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr and "RecursionError" not in stderr
    assert "stdin line 1 nests objects or arrays more than 200 levels deep; the line is skipped" in stderr
    assert results(out) == [(False, "two")] and done.returncode == 0


@pytest.mark.parametrize(("block", "says"), [
    ({"type": "text", "text": 5}, "content block 0 ('text'): 'text' must be a string, not a number"),
    ({"type": "image"}, "content block 0 ('image'): needs a 'source' object"),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/png"}},
     "source.data (the base64 bytes) must be a non-empty string"),
    ({"type": "document", "source": {"type": "base64", "media_type": "text/html", "data": "x"}},
     "source.media_type must be 'application/pdf'"),
    ({"type": "tool_use", "id": "t", "name": "Bash", "input": {}},
     "a user message cannot carry 'tool_use' blocks"),
    ({"type": "frobnicate"}, "unknown block type"),
    ("just a string", "content block 0: must be an object with a 'type', not a string"),
])
def test_a_malformed_block_is_refused_with_an_error_result_and_never_stored(
        tmp_path: Path, server: AnthropicTestServer, block: Any, says: str) -> None:
    done, out = stream(tmp_path, server, [user([block]), user("second")])
    assert "Traceback" not in done.stderr.decode()
    (refused, refusal), answered = results(out)
    assert refused and refusal.startswith("stdin line 1: ") and says in refusal
    assert answered == (False, "two") and done.returncode == 0
    # The bad block never reached the model nor the history: the one request carries only the good prompt.
    (request,) = server.bodies()
    assert "frobnicate" not in json.dumps(request) and len(request["messages"]) == 1


def test_a_tool_result_for_no_open_call_is_refused_and_the_session_goes_on(tmp_path: Path,
                                                                         server: AnthropicTestServer) -> None:
    orphan = {"type": "tool_result", "tool_use_id": "toolu_nobody", "content": "hi"}
    done, out = stream(tmp_path, server, [user("first"), user([orphan]), user("second")])
    assert "Traceback" not in done.stderr.decode()
    got = results(out)
    assert got[0] == (False, "one") and got[2] == (False, "two")
    assert got[1][0] and "tool_use_id 'toolu_nobody' answers no tool call the model is waiting on" in got[1][1]
    assert "toolu_nobody" not in json.dumps(server.bodies())
    resumed = run_catui(tmp_path / "proj", cli_env(tmp_path, server), "-c", "-p", "second", timeout=60)
    assert resumed.returncode == 0 and resumed.stdout.strip() == "two"  # the transcript holds no orphan


def test_a_lone_surrogate_in_a_prompt_is_kept_and_sent_as_an_escape(tmp_path: Path,
                                                                  server: AnthropicTestServer) -> None:
    line = '{"type": "user", "message": {"role": "user", "content": "first \\ud83d half an emoji"}}'
    done, out = stream(tmp_path, server, [line], "--replay-user-messages")
    assert "Traceback" not in done.stderr.decode(), done.stderr.decode()
    assert results(out) == [(False, "one")] and done.returncode == 0
    assert server.bodies()[0]["messages"][0]["content"][-1]["text"] == "first \ud83d half an emoji"
    (transcript,) = (tmp_path / "catui-home" / "projects" / project_slug(tmp_path / "proj")).glob("*.jsonl")
    assert "first \\ud83d half an emoji" in transcript.read_text(encoding="utf-8")


def test_random_bytes_in_the_event_stream_are_a_retried_stream_fault(tmp_path: Path,
                                                                     server: AnthropicTestServer) -> None:
    garbage = bytes(range(256)) * 16 + b"\n\ndata: {not json\n\n" + os.urandom(2048)
    server.inject(Fault(raw_body=garbage))
    project = tmp_path / "proj"
    project.mkdir()
    done = run_catui(project, cli_env(tmp_path, server), "-p", "first", timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "one", done.stderr
    server.inject(Fault(raw_body=garbage), Fault(raw_body=garbage))  # CATUI_MAX_RETRIES=1: both attempts fail
    failed = run_catui(project, cli_env(tmp_path, server), "-p", "first", timeout=60)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "sent an event that is not JSON" in failed.stderr and "gave up after 1 retries" in failed.stderr


@pytest.mark.parametrize("attack", ["fifo", "dev-zero", "nested"])
def test_a_hostile_settings_file_is_a_one_line_error_at_start(tmp_path: Path, server: AnthropicTestServer,
                                                               attack: str) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    if attack == "fifo":
        os.mkfifo(settings)  # a blocking open would hang the start forever
    elif attack == "dev-zero":
        settings.symlink_to("/dev/zero")  # an unbounded read would fill the memory
    else:
        settings.write_text('{"env": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = run_catui(project, cli_env(tmp_path, server), "-p", "first", timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"catui: {settings}: settings ")
    assert {"fifo": "is a named pipe (FIFO), not a regular file", "dev-zero": "is a character device",
            "nested": "nests objects or arrays more than 200 levels deep"}[attack] in line


def test_a_deeply_nested_mcp_json_is_a_warning_and_the_run_goes_on(tmp_path: Path,
                                                                   server: AnthropicTestServer) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = run_catui(project, cli_env(tmp_path, server), "-p", "first", timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "one" and "Traceback" not in done.stderr
    assert f"{project / '.mcp.json'}: nests objects or arrays more than 200 levels deep" in done.stderr


def test_a_read_only_catui_home_is_a_one_line_error(tmp_path: Path, server: AnthropicTestServer) -> None:
    from tests.support.small_disk import small_tmpfs

    project = tmp_path / "proj"
    project.mkdir()
    with small_tmpfs(tmp_path / "catui-home", 1024 * 1024, read_only=True):
        done = run_catui(project, cli_env(tmp_path, server), "-p", "first", timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "Read-only file system" in line and "CATUI_HOME" in line


def test_a_process_forked_by_a_bash_command_ends_with_catui(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "sleep 300 & echo PID=$!"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "started"}]},
    ]}
    project = tmp_path / "proj"
    project.mkdir()
    with AnthropicTestServer(script) as server:
        done = run_catui(project, cli_env(tmp_path, server), "-p", "start it", "--permission-mode", "bypassPermissions",
                         timeout=60)
        assert done.returncode == 0, done.stderr
        sent = json.dumps(server.bodies()[-1])
    pid = int(sent.split("PID=")[-1].split("\\")[0].split('"')[0])
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)  # init reaps the killed sleep a moment after catui's exit
    assert not _alive(pid), f"sleep {pid} outlived catui"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
