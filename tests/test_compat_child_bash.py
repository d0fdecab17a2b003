"""A sub-agent's background Bash in the current profile (observed-cc-now.md §9), through the real CLI against the
loopback Anthropic server: the main stream hears of the shell (``background_tasks_changed``, ``task_started`` with
``owned_by_subagent``, ``parent_task_id`` and ``task_type: "local_bash"``) and of its end, and a shell still running
when the child ends is stopped then. The 2.1.92 profile sends none of these events and leaves the shell running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import (
    CURRENT,
    SHELL_ID,
    DynamicServer,
    agent_call,
    first_user_text,
    stream_run,
    text,
)
from tests.support.compat_cli import assistant_rounds as rounds
from tests.support.compat_cli import bash_call as bash
from tests.support.compat_cli import last_message_json as last_text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


class ChildWithShell(DynamicServer):
    """The child starts a background shell, then (``kind``) waits until it wrote its pid and ends (``long``) or
    waits for it to finish through TaskOutput and ends (``failing``). The main agent spawns the child and, once it
    is back, asks whether the shell's process is still alive."""

    def __init__(self, kind: str, pid_file: Path, background: bool) -> None:
        super().__init__({"turns": []})
        self.kind, self.pid_file, self.background = kind, pid_file, background

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        first = first_user_text(body)
        if "Child one" in first:
            return self.child(body)
        if "<task-notification>" in last_text(body):
            return text("noted")
        step = rounds(body)
        if step == 0:
            return [agent_call("toolu_a", "Child one", subagent_type="general-purpose",
                               run_in_background=self.background)]
        if step == 1 and not self.background:
            return [bash("toolu_check", f"kill -0 $(cat {self.pid_file}) 2>/dev/null && echo alive || echo gone",
                         "Check the shell")]
        return text("parent done")

    def child(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        step = rounds(body)
        if step == 0:
            command = f"echo $$ > {self.pid_file}; exec sleep 60" if self.kind == "long" else "exit 3"
            return [bash("toolu_bg", command, "Long job", run_in_background=True)]
        if step == 1 and self.kind == "long":
            return [bash("toolu_wait", f"while [ ! -s {self.pid_file} ]; do sleep 0.05; done", "Wait for the pid")]
        if step == 1:
            shell = SHELL_ID.search(last_text(body))
            assert shell is not None, last_text(body)
            return [{"type": "tool_use", "id": "toolu_out", "name": "TaskOutput",
                     "input": {"task_id": shell.group(1), "block": True}}]
        if step == 2 and self.kind == "failing":
            return [bash("toolu_next", "true", "One more")]
        return text("child done")


def run(tmp_path: Path, repo: Path, kind: str, *, background: bool = False,
        **extra: str) -> list[dict[str, Any]]:
    return run_with_requests(tmp_path, repo, kind, background=background, **extra)[0]


def run_with_requests(tmp_path: Path, repo: Path, kind: str, *, background: bool = False,
                      **extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with ChildWithShell(kind, tmp_path / "shell.pid", background) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    return lines, bodies


def child_launch_text(lines: list[dict[str, Any]]) -> str:
    """The text of the child's Bash result that started its background shell."""
    line = lines[child_line_index(lines, "toolu_bg")]
    block = next(b for b in line["message"]["content"] if isinstance(b, dict) and b.get("tool_use_id") == "toolu_bg")
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def system(lines: list[dict[str, Any]], subtype: str) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "system" and line.get("subtype") == subtype]


def child_id(lines: list[dict[str, Any]]) -> str:
    started, = [e for e in system(lines, "task_started") if e.get("tool_use_id") == "toolu_a"]
    return str(started["task_id"])


def shell_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if (line.get("type") == "system" and line.get("tool_use_id") == "toolu_bg")
            or (line.get("subtype") == "task_updated" and str(line.get("task_id")).startswith("bash_"))]


def check_result(lines: list[dict[str, Any]]) -> str:
    for line in lines:
        if line.get("type") == "user" and line.get("parent_tool_use_id") is None:
            for block in line["message"]["content"]:
                if isinstance(block, dict) and block.get("tool_use_id") == "toolu_check":
                    content = block["content"]
                    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    raise AssertionError("no result of the main agent's check")


def child_line_index(lines: list[dict[str, Any]], tool_use_id: str) -> int:
    return next(i for i, line in enumerate(lines) if line.get("type") == "user" and any(
        isinstance(b, dict) and b.get("tool_use_id") == tool_use_id for b in line["message"]["content"]))


@pytest.mark.parametrize("background", [False, True], ids=["foreground child", "background child"])
def test_a_childs_running_shell_is_announced_and_stopped_when_the_child_ends(tmp_path: Path, repo: Path,
                                                                             background: bool) -> None:
    lines = run(tmp_path, repo, "long", background=background, **CURRENT)
    parent = child_id(lines)
    started, = [e for e in system(lines, "task_started") if e.get("task_type") == "local_bash"]
    shell = started["task_id"]
    assert list(started)[2:10] == ["task_id", "run_id", "owned_by_subagent", "tool_use_id", "description",
                                   "is_backgrounded", "parent_task_id", "task_type"]
    assert (started["owned_by_subagent"], started["is_backgrounded"], started["parent_task_id"],
            started["tool_use_id"], started["description"]) == (True, True, parent, "toolu_bg", "Long job")
    listed = [e for e in system(lines, "background_tasks_changed") if any(t["task_id"] == shell for t in e["tasks"])]
    entry = next(t for t in listed[0]["tasks"] if t["task_id"] == shell)
    assert entry == {"task_id": shell, "run_id": started["run_id"], "task_type": "local_bash",
                     "description": "Long job", "parent_task_id": parent}
    # Announced before the child's tool result; the set first, then the start (as observed).
    assert lines.index(listed[0]) < lines.index(started) < child_line_index(lines, "toolu_bg")
    # Stopped when the child ended: killed / stopped, the description as summary, before the child's own end.
    updated, note = [e for e in shell_events(lines) if e["subtype"] in ("task_updated", "task_notification")]
    assert updated["patch"]["status"] == "killed" and updated["run_id"] == started["run_id"]
    assert (note["status"], note["summary"], note["owned_by_subagent"]) == ("stopped", "Long job", True)
    assert "usage" not in note and note["output_file"].endswith(f"{shell}.output")
    child_end = next(e for e in system(lines, "task_updated") if e["task_id"] == parent
                     and e["patch"]["status"] == "completed")
    emptied = next(e for e in system(lines, "background_tasks_changed")
                   if lines.index(e) > lines.index(note) and all(t["task_id"] != shell for t in e["tasks"]))
    assert lines.index(updated) < lines.index(note) < lines.index(emptied) < lines.index(child_end)
    if not background:
        assert check_result(lines).strip() == "gone"


def test_a_childs_shell_that_ends_on_its_own(tmp_path: Path, repo: Path) -> None:
    lines, bodies = run_with_requests(tmp_path, repo, "failing", **CURRENT)
    updated, note = [e for e in shell_events(lines) if e["subtype"] in ("task_updated", "task_notification")]
    assert updated["patch"]["status"] == "failed" and "error" not in updated["patch"]
    assert note["status"] == "failed" and note["summary"] == 'Background command "Long job" failed with exit code 3'
    # It ended while the child was still working: the child is told at its next tool round, once (its launch
    # text promised it), in a tool-result message; the main agent is not.
    child = [b for b in bodies if "Child one" in first_user_text(b)][-1]
    told = [m for m in child["messages"] if m["role"] == "user" and "<task-notification>" in json.dumps(m)]
    assert len(told) == 1 and any(b.get("type") == "tool_result" for b in told[0]["content"])
    text_told = json.dumps(told[0])
    assert f"<task-id>{note['task_id']}</task-id>" in text_told and "<status>failed</status>" in text_told
    assert "<tool-use-id>toolu_bg</tool-use-id>" in text_told
    parent = [b for b in bodies if "Child one" not in first_user_text(b)]
    assert not any(f"<task-id>{note['task_id']}" in json.dumps(b["messages"]) for b in parent)


def test_a_childs_launch_text_says_its_shell_ends_with_it(tmp_path: Path, repo: Path) -> None:
    lines = run(tmp_path, repo, "long", **CURRENT)
    shell, = [e["task_id"] for e in system(lines, "task_started") if e.get("task_type") == "local_bash"]
    output_file = next(e["output_file"] for e in system(lines, "task_notification") if e["task_id"] == shell)
    assert child_launch_text(lines) == (
        f"Command running in background with ID: {shell}. Output is being written to: {output_file}. If it exits "
        "while you are still working you will be notified, but it is terminated when you give your final response "
        "and no notification can follow that \u2014 so do not end your turn to wait for it; if you need its result, "
        "wait for it before giving your final response. To check interim output, use Read on that file path.")


def test_the_old_profile_sends_no_shell_events_and_leaves_the_shell_running(tmp_path: Path, repo: Path) -> None:
    lines = run(tmp_path, repo, "long")
    assert not [line for line in lines if "owned_by_subagent" in line or line.get("task_type") == "local_bash"]
    assert child_launch_text(lines).startswith("Command running in the background with ID: bash_")
    assert check_result(lines).strip() == "alive"
