"""The main agent's own background Bash in the current profile (observed-cc-now.md §9, as 2.1.332 did against
the loopback server), through the real CLI: the shell is announced (``background_tasks_changed``, then
``task_started`` with ``task_type: "local_bash"``) before its tool result, whose text says the agent will be
notified; print mode waits for the shell; its end is reported (``task_updated``, ``task_notification``, an
emptied ``background_tasks_changed``) and notified to the agent as a new turn, opened by an init event, whose
result carries ``origin`` with the shell's ``run_id`` — or, when the agent is still working, at its next tool
round. The 2.1.92 profile keeps catui's own text, sends none of these events and does not wait for the shell."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import (
    CURRENT,
    SHELL_ID,
    DynamicServer,
    result_text,
    stream_run,
    text,
    tool_results,
)
from tests.support.compat_cli import assistant_rounds as rounds
from tests.support.compat_cli import bash_call as bash
from tests.support.compat_cli import last_message_json as last_text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


class MainWithShell(DynamicServer):
    """The main agent starts a background shell running ``command``; then (``wait``) it waits for the shell
    through TaskOutput and runs one more command before it answers, or it answers at once. A notification
    turn is answered ``noted``."""

    def __init__(self, command: str, *, wait: bool) -> None:
        super().__init__({"turns": []})
        self.command, self.wait = command, wait

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if "<task-notification>" in last_text(body) and not self.wait:
            return text("noted")
        step = rounds(body)
        if step == 0:
            return [bash("toolu_bg", self.command, "Sleepy job", run_in_background=True)]
        if step == 1 and self.wait:
            shell = SHELL_ID.search(last_text(body))
            assert shell is not None, last_text(body)
            return [{"type": "tool_use", "id": "toolu_out", "name": "TaskOutput",
                     "input": {"task_id": shell.group(1), "block": True}}]
        if step == 2 and self.wait:
            return [bash("toolu_next", "true", "One more")]
        return text("waiting")


def run(tmp_path: Path, repo: Path, command: str, *, wait: bool = False,
        **extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with MainWithShell(command, wait=wait) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    return lines, bodies


def system(lines: list[dict[str, Any]], subtype: str) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "system" and line.get("subtype") == subtype]


def launch_result(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    block, _ = next((b, d) for b, d in tool_results(lines) if b["tool_use_id"] == "toolu_bg")
    return block, result_text(block)


def test_the_main_agents_shell_is_announced_waited_for_and_notified_as_a_new_turn(tmp_path: Path,
                                                                                 repo: Path) -> None:
    lines, bodies = run(tmp_path, repo, "sleep 1; echo done-bg", **CURRENT)
    started, = [e for e in system(lines, "task_started") if e.get("task_type") == "local_bash"]
    shell, run_id = started["task_id"], started["run_id"]
    assert list(started)[2:8] == ["task_id", "run_id", "tool_use_id", "description", "is_backgrounded", "task_type"]
    assert (started["tool_use_id"], started["description"], started["is_backgrounded"]) == (
        "toolu_bg", "Sleepy job", True)
    assert re.fullmatch(r"[0-9a-z]{9}-[0-9a-f]{8}", run_id)
    changed = system(lines, "background_tasks_changed")
    assert changed[0]["tasks"] == [{"task_id": shell, "run_id": run_id, "task_type": "local_bash",
                                    "description": "Sleepy job"}]
    block, said = launch_result(lines)
    output_file = str(repo / ".catui" / "tasks" / f"{shell}.output")
    assert said == (f"Command running in background with ID: {shell}. Output is being written to: {output_file}. "
                    "You will be notified when it completes. To check interim output, use Read on that file path.")
    # Announced before the tool result: the set first, then the start (as observed).
    result_line = next(i for i, line in enumerate(lines) if line.get("type") == "user"
                       and block in line["message"]["content"])
    assert lines.index(changed[0]) < lines.index(started) < result_line
    # Print mode waited: the end is reported after the first turn's result, then a notification turn.
    first, second = [line for line in lines if line.get("type") == "result"]
    updated, = [e for e in system(lines, "task_updated") if e["task_id"] == shell]
    note, = [e for e in system(lines, "task_notification") if e["task_id"] == shell]
    assert updated["run_id"] == note["run_id"] == run_id
    assert updated["patch"]["status"] == "completed" and isinstance(updated["patch"]["end_time"], int)
    assert {k: v for k, v in note.items() if k not in ("type", "subtype", "uuid", "session_id")} == {
        "task_id": shell, "run_id": run_id, "tool_use_id": "toolu_bg", "status": "completed",
        "output_file": output_file, "summary": 'Background command "Sleepy job" completed (exit code 0)'}
    emptied = changed[-1]
    assert emptied["tasks"] == []
    inits = system(lines, "init")
    assert len(inits) == 2
    assert (lines.index(first) < lines.index(updated) < lines.index(note) < lines.index(emptied)
            < lines.index(inits[1]) < lines.index(second))
    assert (first["result"], first["result_index"], "origin" in first, first["num_turns"]) == ("waiting", 0, False, 2)
    # num_turns counts the turn's own requests (2.1.332: 1 for the notification turn), not the session's 3.
    assert (second["result"], second["result_index"], second["num_turns"]) == ("noted", 1, 1)
    assert second["origin"] == {"kind": "task-notification", "producer": "session-task", "runId": run_id}
    # The notification turn's message: the task-notification inside a system reminder, without note or result.
    told = json.dumps(bodies[-1]["messages"][-1]["content"])
    assert "<system-reminder>" in told and "<task-id>" + shell in told and "<note>" not in told
    assert "<tool-use-id>toolu_bg</tool-use-id>" in told and "<status>completed</status>" in told
    assert 'Background command \\"Sleepy job\\" completed (exit code 0)' in told
    assert (repo / ".catui" / "tasks" / f"{shell}.output").read_text().strip() == "done-bg"


def test_a_failing_shell_is_reported_failed(tmp_path: Path, repo: Path) -> None:
    lines, bodies = run(tmp_path, repo, "exit 3", **CURRENT)
    updated, = [e for e in system(lines, "task_updated") if str(e["task_id"]).startswith("bash_")]
    note, = [e for e in system(lines, "task_notification") if str(e["task_id"]).startswith("bash_")]
    assert updated["patch"]["status"] == "failed" and "error" not in updated["patch"]
    assert note["status"] == "failed" and note["summary"] == 'Background command "Sleepy job" failed with exit code 3'
    assert "<status>failed</status>" in json.dumps(bodies[-1]["messages"][-1]["content"])
    assert [line["result"] for line in lines if line.get("type") == "result"] == ["waiting", "noted"]


def test_a_shell_that_ends_while_the_agent_works_is_notified_at_its_next_tool_round(tmp_path: Path,
                                                                                    repo: Path) -> None:
    lines, bodies = run(tmp_path, repo, "echo quick", wait=True, **CURRENT)
    # No notification turn: the notification joined a tool-result message of the running turn, once.
    assert [line["result"] for line in lines if line.get("type") == "result"] == ["waiting"]
    assert len(system(lines, "init")) == 1
    told = [m for m in bodies[-1]["messages"] if m["role"] == "user" and "<task-notification>" in json.dumps(m)]
    assert len(told) == 1 and '\\"Sleepy job\\" completed (exit code 0)' in json.dumps(told[0])
    assert any(isinstance(b, dict) and b.get("type") == "tool_result" for b in told[0]["content"])
    note, = [e for e in system(lines, "task_notification") if str(e["task_id"]).startswith("bash_")]
    assert note["status"] == "completed"


def test_the_old_profile_keeps_its_text_sends_no_shell_events_and_does_not_wait(tmp_path: Path,
                                                                              repo: Path) -> None:
    lines, bodies = run(tmp_path, repo, "sleep 1; echo done-bg")
    assert [line["num_turns"] for line in lines if line.get("type") == "result"] == [2]
    assert not [line for line in lines if line.get("task_type") == "local_bash"
                or line.get("subtype") == "background_tasks_changed"]
    _, said = launch_result(lines)
    assert said.startswith("Command running in the background with ID: bash_") and "TaskStop" in said
    assert [line["result"] for line in lines if line.get("type") == "result"] == ["waiting"]
    assert len(system(lines, "init")) == 1
    assert not any("<task-notification>" in json.dumps(b["messages"]) for b in bodies)


class LongForeground(DynamicServer):
    """The main agent (``child=False``) or its foreground child runs one foreground command, then answers."""

    def __init__(self, command: str, *, child: bool, **extra: Any) -> None:
        super().__init__({"turns": []})
        self.command, self.child, self.extra = command, child, extra

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        sent = json.dumps(body["messages"])
        if self.child and "Child one" not in json.dumps(body["messages"][0]):
            if "toolu_a" not in sent:
                return [{"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {
                    "description": "job a", "prompt": "Child one", "subagent_type": "general-purpose",
                    "run_in_background": False}}]
            return text("parent done")
        if "toolu_fg" not in sent:
            return [bash("toolu_fg", self.command, "Slow job", **self.extra)]
        return text("done")


def run_foreground(tmp_path: Path, repo: Path, command: str, *, child: bool = False, extra: dict[str, str],
                   **call: Any) -> list[dict[str, Any]]:
    with LongForeground(command, child=child, **call) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions")
    assert done.returncode == 0, done.stderr
    return lines


def foreground_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "system" and line.get("tool_use_id") == "toolu_fg"]


def command_result_index(lines: list[dict[str, Any]]) -> int:
    return next(i for i, line in enumerate(lines) if line.get("type") == "user" and any(
        isinstance(b, dict) and b.get("tool_use_id") == "toolu_fg" for b in line["message"]["content"]))


def stripped(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in ("type", "uuid", "session_id")}


def test_a_long_foreground_command_is_announced_and_its_end_reported(tmp_path: Path, repo: Path) -> None:
    """2.1.332 announced a foreground command that ran 3.3 s (not one of 2.8 s); catui does so after 3 s."""
    lines = run_foreground(tmp_path, repo, "sleep 4; echo slept", extra=CURRENT)
    started, note = foreground_events(lines)
    task_id, run_id = started["task_id"], started["run_id"]
    assert stripped(started) == {"subtype": "task_started", "task_id": task_id, "run_id": run_id,
                                 "tool_use_id": "toolu_fg", "description": "Slow job", "is_backgrounded": False,
                                 "task_type": "local_bash"}
    assert list(stripped(started)) == ["subtype", "task_id", "run_id", "tool_use_id", "description",
                                       "is_backgrounded", "task_type"]
    assert stripped(note) == {"subtype": "task_notification", "task_id": task_id, "run_id": run_id,
                              "tool_use_id": "toolu_fg", "status": "completed", "output_file": "",
                              "summary": "Slow job"}
    assert lines.index(started) < lines.index(note) < command_result_index(lines)
    # Nothing of a background task's: no task_updated, no change of the background set.
    assert not [line for line in lines if line.get("subtype") in ("task_updated", "background_tasks_changed")]


def test_a_timed_out_foreground_command_is_reported_failed(tmp_path: Path, repo: Path) -> None:
    lines = run_foreground(tmp_path, repo, "sleep 30", extra=CURRENT, timeout=4000)
    started, note = foreground_events(lines)
    assert note["status"] == "failed" and note["task_id"] == started["task_id"]


def test_a_childs_long_foreground_command_is_announced_as_its_own(tmp_path: Path, repo: Path) -> None:
    lines = run_foreground(tmp_path, repo, "sleep 4", child=True, extra=CURRENT)
    parent = next(e["task_id"] for e in system(lines, "task_started") if e.get("tool_use_id") == "toolu_a")
    started, note = foreground_events(lines)
    assert list(stripped(started)) == ["subtype", "task_id", "run_id", "owned_by_subagent", "tool_use_id",
                                       "description", "is_backgrounded", "parent_task_id", "task_type"]
    assert (started["owned_by_subagent"], started["parent_task_id"], started["is_backgrounded"]) == (
        True, parent, False)
    assert stripped(note) == {"subtype": "task_notification", "task_id": started["task_id"],
                              "run_id": started["run_id"], "owned_by_subagent": True, "tool_use_id": "toolu_fg",
                              "status": "completed", "output_file": "", "summary": "Slow job"}
    assert lines.index(started) < lines.index(note) < command_result_index(lines)


def test_the_old_profile_announces_no_foreground_command(tmp_path: Path, repo: Path) -> None:
    lines = run_foreground(tmp_path, repo, "sleep 4", extra={})
    assert foreground_events(lines) == []
