"""The interactive session end to end: ``catui`` in a pseudo-terminal, driven by keystrokes.

Each test starts ``python -m catui --model scripted:<script>`` with stdin and
stdout on a pty, types into it, and checks both the screen and the effects
(files written, the transcript the model's answers were recorded in).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT_READY = r"project · [\d.]+k? tokens"  # the default status line under an idle prompt
TIMEOUT_S = 20


class PtyProcess:
    """A child process whose stdin, stdout and stderr are a pseudo-terminal."""

    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str], columns: int = 120) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True
        )
        os.close(slave)
        self.raw = b""
        self.position = 0  # expectations match only output that came after the previous match

    def screen_text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def _pump(self, wait_s: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait_s)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        self.raw += chunk
        return True

    def expect(self, pattern: str, timeout: float = TIMEOUT_S) -> re.Match[str]:
        """Wait for ``pattern`` (a regex) in the output after the last match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            found = regex.search(self.screen_text(), self.position)
            if found:
                self.position = found.end()
                return found
            if time.monotonic() > deadline or not self._pump(0.05):
                tail = self.screen_text()[self.position :][-3000:]
                raise AssertionError(f"{pattern!r} did not appear; output after the last match:\n{tail}")

    def send(self, text: str | bytes) -> None:
        os.write(self.master, text.encode() if isinstance(text, str) else text)

    def wait_exit(self, timeout: float = TIMEOUT_S) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.05)
        while self._pump(0.01) and select.select([self.master], [], [], 0)[0]:
            pass
        return self.proc.wait(timeout=1)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return {"home": home, "catui_home": home / ".catui", "project": project, "tmp": tmp_path}


def start_catui(ws: dict[str, Path], script: dict[str, Any], *extra: str) -> PtyProcess:
    script_path = ws["tmp"] / "script.yaml"
    script_path.write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(ws["home"]), CATUI_HOME=str(ws["catui_home"]), TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    argv = [sys.executable, "-m", "catui", "--model", f"scripted:{script_path}", *extra]
    return PtyProcess(argv, cwd=ws["project"], env=env)


@pytest.fixture
def launch(workspace: dict[str, Path]) -> Iterator[Callable[..., PtyProcess]]:
    started: list[PtyProcess] = []

    def run(script: dict[str, Any], *extra: str) -> PtyProcess:
        proc = start_catui(workspace, script, *extra)
        started.append(proc)
        return proc

    yield run
    for proc in started:
        proc.close()


def transcript_lines(ws: dict[str, Path]) -> list[dict[str, Any]]:
    files = sorted((ws["catui_home"] / "projects").glob("*/*.jsonl"))
    assert files, "no transcript was written"
    return [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def tool_results(ws: dict[str, Path]) -> list[dict[str, Any]]:
    out = []
    for line in transcript_lines(ws):
        content = (line.get("message") or {}).get("content")
        if isinstance(content, list):
            out += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def write_turn(trigger: str, path: Path, text: str) -> dict[str, Any]:
    return {
        "match": {"last_user_contains": trigger, "last_is_tool_result": False},
        "content": [
            {"type": "text", "text": f"Writing {path.name}."},
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(path), "content": text}},
        ],
    }


def test_approving_a_write_runs_it_and_denying_sends_the_reason_to_the_model(launch, workspace) -> None:
    approved = workspace["project"] / "approved.txt"
    refused = workspace["project"] / "refused.txt"
    script = {
        "turns": [
            write_turn("make approved", approved, "yes\n"),
            {"match": {"last_is_tool_result": True, "last_user_contains": "approved.txt"},
             "content": [{"type": "text", "text": "Wrote approved.txt for you."}]},
            write_turn("make refused", refused, "no\n"),
            {"match": {"last_is_tool_result": True, "last_user_contains": "REASON-7f3"},
             "content": [{"type": "text", "text": "Understood, I will not write refused.txt."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)  # the status line under the first prompt
    tui.send("please make approved\r")
    tui.expect(r"Write\(approved\.txt\)[\s\S]*Do you want to allow")
    tui.send("1")
    tui.expect(r"Wrote approved\.txt for you\.")
    assert approved.read_text() == "yes\n"

    tui.send("now make refused\r")
    tui.expect(r"Write\(refused\.txt\)[\s\S]*Do you want to allow")
    tui.send("3")
    tui.expect(r"Why not\?")
    tui.send("use a database instead REASON-7f3\r")
    tui.expect(r"Understood, I will not write refused\.txt\.")
    tui.send(b"\x04")
    assert tui.wait_exit() == 0
    assert not refused.exists()

    denial = [r for r in tool_results(workspace) if "REASON-7f3" in json.dumps(r)]
    assert denial and denial[0].get("is_error") is True
    assert "use a database instead" in json.dumps(denial[0])
    assert "Transcript:" in tui.screen_text()


def test_dont_ask_again_adds_a_session_rule(launch, workspace) -> None:
    first = workspace["project"] / "one.txt"
    second = workspace["project"] / "two.txt"
    script = {
        "turns": [
            write_turn("write one", first, "1\n"),
            {"match": {"last_is_tool_result": True, "last_user_contains": "one.txt"},
             "content": [{"type": "text", "text": "First done."}]},
            write_turn("write two", second, "2\n"),
            {"match": {"last_is_tool_result": True, "last_user_contains": "two.txt"},
             "content": [{"type": "text", "text": "Second done."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("write one\r")
    tui.expect(r"don't ask again this session for Write")
    tui.send("2")
    tui.expect(r"First done\.")
    tui.send("write two\r")
    tui.expect(r"Second done\.")
    after_second = tui.screen_text()[tui.screen_text().rfind("write two") :]
    assert "Do you want to allow" not in after_second
    assert second.read_text() == "2\n"
    tui.send(b"\x04")
    assert tui.wait_exit() == 0


def test_ctrl_c_interrupts_a_turn_and_the_conversation_goes_on(launch, workspace) -> None:
    script = {
        "turns": [
            {"match": {"last_user_contains": "slow question"}, "delay_ms": 8000,
             "content": [{"type": "text", "text": "This answer never arrives."}]},
            {"match": {"last_user_contains": "quick question"},
             "content": [{"type": "text", "text": "Quick answer."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("slow question\r")
    tui.expect(r"Working")
    tui.send(b"\x03")
    tui.expect(r"Interrupted")
    tui.expect(r"› ")
    tui.send("quick question\r")
    tui.expect(r"Quick answer\.")
    tui.expect(PROMPT_READY)  # back at the prompt
    assert "never arrives" not in tui.screen_text()
    # at the prompt: Ctrl-C clears a typed line, then twice on an empty line exits
    tui.send("half typed")
    tui.send(b"\x03")
    tui.send(b"\x03")
    tui.expect(r"Ctrl-C again to exit")
    tui.send(b"\x03")
    assert tui.wait_exit() == 0


def test_status_line_runs_the_configured_command_with_session_json(launch, workspace) -> None:
    settings_dir = workspace["project"] / ".catui"
    settings_dir.mkdir()
    captured = workspace["tmp"] / "status-input.json"
    command = f"cat > {captured} && echo STATUS-FROM-COMMAND"
    (settings_dir / "settings.json").write_text(
        json.dumps({"statusLine": {"type": "command", "command": command}}), encoding="utf-8"
    )
    tui = launch({"turns": [{"content": [{"type": "text", "text": "hi"}]}]})
    tui.expect(r"STATUS-FROM-COMMAND")
    tui.send(b"\x04")
    assert tui.wait_exit() == 0
    payload = json.loads(captured.read_text())
    assert payload["cwd"] == str(workspace["project"].resolve())
    assert payload["workspace"]["current_dir"] == str(workspace["project"].resolve())
    assert payload["model"]["id"] and payload["model"]["display_name"]
    assert payload["session_id"] and payload["version"]
    assert Path(payload["transcript_path"]).name.endswith(".jsonl")
    assert payload["cost"]["total_cost_usd"] == 0


def test_default_status_line_shows_model_cwd_and_tokens(launch, workspace) -> None:
    tui = launch({"turns": [{"content": [{"type": "text", "text": "hi"}]}]})
    line = tui.expect(r"scripted[^\n]*· [^\n]*project · \d+ tokens")
    assert line
    tui.send(b"\x04")
    assert tui.wait_exit() == 0


def test_parallel_subagents_show_live_lines_under_their_calls(launch, workspace) -> None:
    def explore(description: str, marker: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": "Agent",
                "input": {"subagent_type": "Explore", "description": description, "prompt": f"Look for {marker}"}}

    def child_turns(marker: str, answer: str) -> list[dict[str, Any]]:
        return [
            {"match": {"first_user_contains": marker, "last_is_tool_result": False}, "delay_ms": 1300,
             "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.txt"}}]},
            {"match": {"first_user_contains": marker, "last_is_tool_result": True}, "delay_ms": 1300,
             "content": [{"type": "text", "text": answer}]},
        ]

    script = {
        "turns": [
            {"match": {"first_user_contains": "explore twice", "last_is_tool_result": False},
             "content": [explore("Survey alpha", "ALPHA-MARK"), explore("Survey beta", "BETA-MARK")]},
            *child_turns("ALPHA-MARK", "alpha found"),
            *child_turns("BETA-MARK", "beta found"),
            {"match": {"first_user_contains": "explore twice", "last_is_tool_result": True},
             "content": [{"type": "text", "text": "Both surveys are back."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("explore twice\r")
    # after two seconds each running agent has its line: type, description, tool count, tokens, elapsed
    live = tui.expect(r"⎿ Explore · Survey (alpha|beta) · \d+ tool uses? · [\d.]+k? tokens · \ds")
    other = "beta" if live.group(1) == "alpha" else "alpha"
    tui.expect(rf"⎿ Explore · Survey {other} · \d+ tool uses? · [\d.]+k? tokens · \ds")
    tui.expect(r"Both surveys are back\.")
    text = tui.screen_text()
    assert re.search(r"Explore\(Survey alpha\)\s*\n\s*⎿ Done \(\d+ tool uses? · ", text)
    assert re.search(r"Explore\(Survey beta\)\s*\n\s*⎿ Done \(\d+ tool uses? · ", text)
    tui.send(b"\x04")
    assert tui.wait_exit() == 0


def test_ctrl_b_moves_running_agents_to_the_background(launch, workspace) -> None:
    from importlib.util import find_spec

    from catui.subagents import runtime as runtime_module

    if find_spec("catui.subagents.install") is None or not hasattr(
        getattr(runtime_module, "SubagentRuntime", object), "background_all_foreground"
    ):
        pytest.skip("the sub-agent runtime has no background_all_foreground yet")
    script = {
        "turns": [
            {"match": {"first_user_contains": "go slow", "last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Agent", "input": {
                 "subagent_type": "general-purpose", "description": "Slow job", "prompt": "SLOW-CHILD"}}]},
            {"match": {"first_user_contains": "SLOW-CHILD"}, "delay_ms": 4000,
             "content": [{"type": "text", "text": "slow child done"}]},
            {"match": {"first_user_contains": "go slow", "last_is_tool_result": True},
             "content": [{"type": "text", "text": "Parent carries on."}]},
            {"match": {"last_user_contains": "<task-notification>"},
             "content": [{"type": "text", "text": "The slow job has finished."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("go slow\r")
    tui.expect(r"general-purpose\(Slow job\)")
    time.sleep(0.5)
    tui.send(b"\x02")
    tui.expect(r"Moved 1 running agent to the background")
    # The parent's turn ends while the child is still running: its answer comes first, and the child's end
    # arrives later as a notification (a parent that waited for the child would get no notification at all).
    tui.expect(r"Parent carries on\.")
    tui.expect(PROMPT_READY)
    # the agent finishes in the background while the user is at the prompt: its notification is a new turn
    tui.expect(r"The slow job has finished\.")
    tui.expect(PROMPT_READY)
    tui.send(b"\x04")
    assert tui.wait_exit() in (0, 130)


def test_ask_user_question_takes_a_numbered_answer(launch, workspace) -> None:
    question = {"question": "Which database?", "header": "Storage", "multiSelect": False,
                "options": [{"label": "Postgres", "description": "a server"},
                            {"label": "SQLite", "description": "a file"}]}
    script = {
        "turns": [
            {"match": {"last_user_contains": "pick storage", "last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "AskUserQuestion", "input": {"questions": [question]}}]},
            {"match": {"last_is_tool_result": True, "last_user_contains": "SQLite"},
             "content": [{"type": "text", "text": "Going with SQLite as you chose."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("pick storage\r")
    tui.expect(r"\[Storage\] Which database\?[\s\S]*2\. SQLite[\s\S]*Answer")
    tui.send("2\r")
    tui.expect(r"Going with SQLite as you chose\.")
    tui.expect(PROMPT_READY)
    tui.send(b"\x04")
    assert tui.wait_exit() == 0


def test_interrupting_a_running_tool_leaves_a_conversation_the_api_accepts(launch, workspace) -> None:
    script = {
        "turns": [
            {"match": {"last_user_contains": "run slow", "last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Bash",
                          "input": {"command": "sleep 20", "description": "Wait a while"}},
                         {"type": "tool_use", "name": "Agent", "input": {
                             "subagent_type": "general-purpose", "description": "Slow helper",
                             "prompt": "SLOW-HELPER"}}]},
            # the sub-agent's model call does not notice the interrupt: the UI must end the turn anyway
            {"match": {"first_user_contains": "SLOW-HELPER"}, "delay_ms": 15000,
             "content": [{"type": "text", "text": "too late"}]},
            {"match": {"last_user_contains": "next question"},
             "content": [{"type": "text", "text": "Answering the next question."}]},
        ]
    }
    tui = launch(script, "--permission-mode", "bypassPermissions")
    tui.expect(PROMPT_READY)
    tui.send("run slow\r")
    tui.expect(r"Bash\(sleep 20\)")
    time.sleep(0.3)  # let the sub-agent start
    tui.send(b"\x1b")  # Esc interrupts too
    tui.expect(r"Interrupted")
    tui.expect(PROMPT_READY)
    tui.send("next question\r")
    tui.expect(r"Answering the next question\.")
    tui.expect(PROMPT_READY)
    tui.send(b"\x04")
    assert tui.wait_exit() == 0
    messages = [line["message"] for line in transcript_lines(workspace) if "message" in line]
    for index, message in enumerate(messages):
        uses = [b["id"] for b in message.get("content", []) if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses and message["role"] == "assistant":
            answer = messages[index + 1]
            answered = [b["tool_use_id"] for b in answer["content"] if b.get("type") == "tool_result"]
            assert answered == uses, f"tool_use {uses} not answered by the next message: {answer}"
