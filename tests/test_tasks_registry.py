"""The task registry's own parts: notification text and box, persistence in state.db, stop requests."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from catui.state.db import StateDB
from catui.tasks.notifications import (
    NotificationBox,
    TaskNotification,
    format_task_notification,
    notification_summary,
)
from catui.tasks.registry import Task, TaskRegistry
from catui.tasks.store import request_stop, stop_requested_ids

GUARD_S = 10


def test_notification_text_is_the_observed_shape() -> None:
    text = format_task_notification(
        task_id="a0123456789abcdef", tool_use_id="toolu_1", output_file="/p/.catui/tasks/a0123456789abcdef.output",
        status="completed", summary=notification_summary("Find bugs", "completed"), result="Two bugs.",
        usage={"total_tokens": 120, "tool_uses": 3, "duration_ms": 4567},
    )
    assert text == (
        "<task-notification>\n<task-id>a0123456789abcdef</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n"
        "<output-file>/p/.catui/tasks/a0123456789abcdef.output</output-file>\n<status>completed</status>\n"
        '<summary>Agent "Find bugs" completed</summary>\n<result>Two bugs.</result>\n'
        "<usage><total_tokens>120</total_tokens><tool_uses>3</tool_uses><duration_ms>4567</duration_ms></usage>\n"
        "</task-notification>"
    )
    assert notification_summary("X", "failed", "boom") == 'Agent "X" failed: boom'
    assert notification_summary("X", "stopped") == 'Agent "X" was stopped'
    failed = format_task_notification(task_id="a1", tool_use_id=None, output_file="f", status="failed",
                                      summary="s", result=None, usage=None, worktree_path="/w", worktree_branch="b")
    assert "<result>" not in failed and "<tool-use-id>" not in failed
    assert "<worktree><worktreePath>/w</worktreePath><worktreeBranch>b</worktreeBranch></worktree>" in failed


async def test_box_hands_each_notification_out_once_and_survives_cancellation() -> None:
    busy = [True]
    box = NotificationBox(lambda: busy[0])
    waiter = asyncio.ensure_future(box.next())
    await asyncio.sleep(0)
    waiter.cancel()  # a front end that stopped waiting (the user typed) must not lose anything
    with pytest.raises(asyncio.CancelledError):
        await waiter
    box.post(TaskNotification("a1", "first"))
    box.post(TaskNotification("a2", "second"))
    first = await asyncio.wait_for(box.next(), GUARD_S)
    assert first is not None and first.task_id == "a1"
    assert [n.task_id for n in box.drain()] == ["a2"] and box.drain() == []
    later = asyncio.ensure_future(box.next())
    await asyncio.sleep(0)
    assert not later.done()
    busy[0] = False
    box.wake()
    assert await asyncio.wait_for(later, GUARD_S) is None
    assert box.delivered == ["a1", "a2"]


async def test_registry_persists_tasks_and_answers_stop_requests(tmp_path: Path) -> None:
    registry = TaskRegistry(tmp_path, session_id="s-1")
    gate = asyncio.Event()
    stopped: list[str] = []

    async def work() -> None:
        await gate.wait()

    task = Task(id="a0123456789abcdef", type="local_agent", description="agent job",
                output_file=registry.output_path("a0123456789abcdef"), agent_type="worker", tool_use_id="toolu_9")
    task.runner = asyncio.create_task(work())

    async def stop() -> None:
        stopped.append(task.id)
        task.runner.cancel()  # type: ignore[union-attr]

    task.stop_callback = stop
    registry.add(task)
    state = StateDB(tmp_path)
    row = state.get_task(task.id)
    assert row is not None and row["status"] == "running" and row["pid"] == os.getpid()
    assert (row["parent_session_id"], row["agent_type"], row["tool_use_id"]) == ("s-1", "worker", "toolu_9")
    assert registry.has_running_agents()

    task.tool_uses, task.total_tokens, task.last_tool = 2, 345, "Grep"
    task.changed()
    row = state.get_task(task.id)
    assert row is not None and (row["tool_uses"], row["total_tokens"], row["last_tool"]) == (2, 345, "Grep")

    # Another process asks for a stop; the registry's poller stops the task and records it.
    request_stop(state, task.id)
    assert stop_requested_ids(state) == [task.id]
    await asyncio.wait_for(task.done.wait(), GUARD_S)
    assert stopped == [task.id] and task.status == "stopped"
    row = state.get_task(task.id)
    assert row is not None and row["status"] == "stopped" and row["ended_at"] is not None
    assert not registry.has_running_agents()
    assert await registry.next_notification() is None
    with pytest.raises(ValueError):
        registry.add(task)
    resumed = Task(id=task.id, type="local_agent", description="again", output_file=task.output_file)
    registry.replace(resumed)
    with pytest.raises(ValueError, match="still running"):
        registry.replace(Task(id=task.id, type="local_agent", description="x", output_file=task.output_file))
    resumed.finish("completed", "ok")
    assert state.get_task(task.id)["status"] == "completed"  # type: ignore[index]
    await registry.shutdown()


async def test_a_broken_state_db_never_breaks_the_tasks(tmp_path: Path) -> None:
    (tmp_path / ".catui").mkdir()
    (tmp_path / ".catui" / "state.db").write_bytes(b"this is not a database" * 100)
    registry = TaskRegistry(tmp_path)
    task = Task(id="bash_1", type="local_bash", description="x", output_file=registry.output_path("bash_1"))
    registry.add(task)
    task.finish("completed", "done")
    assert registry.persist_error is not None and "state" in registry.persist_error
    assert registry.get("bash_1") is task and task.status == "completed"
    await registry.shutdown()


async def test_memory_only_registry_and_shutdown_stop_running_tasks(tmp_path: Path) -> None:
    registry = TaskRegistry(tmp_path, persist=False)

    async def forever() -> None:
        await asyncio.sleep(3600)

    task = Task(id="a1111111111111111", type="local_agent", description="x", output_file=registry.output_path("a1"))
    task.runner = asyncio.create_task(forever())
    registry.add(task)
    waiter = asyncio.ensure_future(registry.next_notification())
    stopped = await registry.shutdown()
    assert stopped == [task] and task.status == "stopped"
    assert await asyncio.wait_for(waiter, GUARD_S) is None
    assert not (tmp_path / ".catui" / "state.db").exists()
