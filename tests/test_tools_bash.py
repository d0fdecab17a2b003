"""Bash (cwd persistence, timeouts, abort, truncation), background shells, TaskOutput, TaskStop, TaskRegistry."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from catui.messages import result_text
from catui.permissions.context import PermissionContext
from catui.tasks.registry import Task, TaskRegistry
from catui.tools.base import ToolContext, ToolResult, ToolServices, schema_from_model
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput
from catui.tools.task_output import TaskOutputTool
from catui.tools.task_output_input import TaskOutputInput
from catui.tools.task_stop import TaskStopTool
from catui.tools.task_stop_input import TaskStopInput


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub" / "deeper").mkdir(parents=True)
    return root.resolve()


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(cwd=project, project_root=project, services=ToolServices(tasks=TaskRegistry(project)))


async def bash(ctx: ToolContext, command: str, **kw: object) -> ToolResult:
    return await BashTool().call(BashInput.model_validate({"command": command, **kw}), ctx)


def text(result: ToolResult) -> str:
    return result_text(result.content)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); treat it as dead.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def test_bash_schema() -> None:
    schema = schema_from_model(BashInput)
    assert schema["required"] == ["command"]
    assert schema["properties"]["timeout"]["type"] in ("integer", "number")
    assert "600000" in schema["properties"]["timeout"]["description"]
    assert set(schema["properties"]) == {"command", "timeout", "description", "run_in_background"}


async def test_bash_output_and_exit_code(ctx: ToolContext) -> None:
    ok = await bash(ctx, "echo out; echo err >&2")
    assert not ok.is_error and text(ok) == "out\nerr"
    failed = await bash(ctx, "echo partial; exit 3")
    assert failed.is_error and "partial" in text(failed) and "Exit code 3" in text(failed)
    assert failed.data["exit_code"] == 3
    silent = await bash(ctx, "true")
    assert text(silent) == "(no output)"


async def test_bash_status_of_last_command_is_kept(ctx: ToolContext) -> None:
    result = await bash(ctx, "cd sub && false")
    assert result.is_error and "Exit code 1" in text(result)
    assert ctx.cwd == ctx.project_root / "sub"


async def test_bash_cwd_persists_and_resets_outside_project(
    ctx: ToolContext, project: Path, tmp_path: Path
) -> None:
    await bash(ctx, "cd sub/deeper")
    assert ctx.cwd == project / "sub" / "deeper"
    pwd = await bash(ctx, "pwd")
    assert text(pwd) == str(project / "sub" / "deeper")
    outside = await bash(ctx, f"cd {tmp_path}")
    assert ctx.cwd == project
    assert "reset" in text(outside) and str(project) in text(outside)
    after = await bash(ctx, "pwd")
    assert text(after) == str(project)


async def test_bash_cwd_allowed_by_extra_working_directory(project: Path, tmp_path: Path) -> None:
    other = (tmp_path / "other").resolve()
    other.mkdir()
    perms = PermissionContext(working_directories=(project, other))
    ctx = ToolContext(cwd=project, project_root=project, permissions=perms)
    await bash(ctx, f"cd {other}")
    assert ctx.cwd == other


async def test_bash_timeout_kills_the_process_group(ctx: ToolContext, project: Path) -> None:
    pid_file = project / "child.pid"
    # 3 s, not less: the pid file must be written before the timeout fires, and a loaded machine can take
    # a second to start bash.
    result = await bash(ctx, f"sleep 30 & echo $! > {pid_file}; wait", timeout=3000)
    assert result.is_error and "timed out after 3000 ms" in text(result)
    child = int(pid_file.read_text())
    for _ in range(50):
        if not pid_alive(child):
            break
        await asyncio.sleep(0.02)
    assert not pid_alive(child)


async def test_bash_abort_kills(ctx: ToolContext) -> None:
    async def trip() -> None:
        await asyncio.sleep(0.2)
        ctx.abort.set()

    started = time.monotonic()
    tripper = asyncio.create_task(trip())
    result = await bash(ctx, "sleep 20")
    await tripper
    assert result.is_error and "interrupted" in text(result)
    assert time.monotonic() - started < 10


async def test_bash_truncates_long_output(ctx: ToolContext) -> None:
    result = await bash(ctx, "python3 -c \"print('a' * 20000 + 'MIDDLE' + 'b' * 20000)\"")
    body = text(result)
    assert len(body) < 31000 and "characters cut from the middle" in body
    assert body.startswith("aaaa") and body.endswith("bbbb") and "MIDDLE" not in body


async def test_bash_permission_request_subject_is_command(ctx: ToolContext) -> None:
    request = BashTool().permission_request(BashInput(command="git status"), ctx)
    assert request.subject == "git status" and request.tool_name == "Bash"


# ------------------------------------------------------------------ background + TaskOutput / TaskStop


async def task_output(ctx: ToolContext, task_id: str, **kw: object) -> ToolResult:
    return await TaskOutputTool().call(TaskOutputInput.model_validate({"task_id": task_id, **kw}), ctx)


async def test_background_bash_and_task_output(ctx: ToolContext, project: Path) -> None:
    started = await bash(
        ctx, "echo first; sleep 0.3; echo second", run_in_background=True, description="two echoes"
    )
    assert not started.is_error
    task_id = started.data["background_task_id"]
    assert task_id.startswith("bash_") and len(task_id) == len("bash_") + 12
    output_file = Path(started.data["output_file"])
    assert output_file == project / ".catui" / "tasks" / f"{task_id}.output"

    early = await task_output(ctx, task_id, block=False)
    assert "<retrieval_status>not_ready</retrieval_status>" in text(early)
    assert "<status>running</status>" in text(early)

    done = await task_output(ctx, task_id, timeout=10000)
    body = text(done)
    assert "<retrieval_status>success</retrieval_status>" in body and "<status>completed</status>" in body
    assert "first\nsecond" in body and "<exit_code>0</exit_code>" in body
    assert output_file.read_text() == "first\nsecond\n"


async def test_background_output_streams_and_blocking_times_out(ctx: ToolContext) -> None:
    started = await bash(ctx, "echo early; sleep 30", run_in_background=True)
    task_id = started.data["background_task_id"]
    waited = await task_output(ctx, task_id, block=True, timeout=400)
    assert "<retrieval_status>timeout</retrieval_status>" in text(waited)
    assert "early" in text(waited)

    stopped = await TaskStopTool().call(TaskStopInput(task_id=task_id), ctx)
    assert not stopped.is_error and "killed" in text(stopped)
    task = ctx.services.tasks.get(task_id)
    assert task.status == "killed" and task.done.is_set()
    pid = task.metadata["pid"]
    assert not pid_alive(pid)

    again = await TaskStopTool().call(TaskStopInput(shell_id=task_id), ctx)
    assert "not running" in text(again)


async def test_background_failure_status(ctx: ToolContext) -> None:
    started = await bash(ctx, "exit 4", run_in_background=True)
    result = await task_output(ctx, started.data["background_task_id"], timeout=5000)
    assert "<status>failed</status>" in text(result) and "<exit_code>4</exit_code>" in text(result)


async def test_task_tools_unknown_ids_and_missing_registry(ctx: ToolContext, project: Path) -> None:
    unknown = await task_output(ctx, "bash_nope")
    assert unknown.is_error and "No task found" in text(unknown)
    stop_unknown = await TaskStopTool().call(TaskStopInput(task_id="bash_nope"), ctx)
    assert stop_unknown.is_error
    no_id = await TaskStopTool().call(TaskStopInput(), ctx)
    assert no_id.is_error and "task_id" in text(no_id)
    bare = ToolContext(cwd=project, project_root=project)
    assert (await bash(bare, "echo", run_in_background=True)).is_error
    assert (await task_output(bare, "x")).is_error


def test_task_output_schema() -> None:
    schema = schema_from_model(TaskOutputInput)
    props = schema["properties"]
    assert schema["required"] == ["task_id"]
    assert props["block"]["default"] is True and props["timeout"]["default"] == 30000
    assert props["timeout"]["minimum"] == 0 and props["timeout"]["maximum"] == 600000
    with pytest.raises(Exception, match="600000"):
        TaskOutputInput.model_validate({"task_id": "x", "timeout": 700000})


# ------------------------------------------------------------------ registry with an agent-like task


async def test_registry_generic_task_wait_and_stop(project: Path) -> None:
    registry = TaskRegistry(project)
    out = registry.output_path("a0123456789abcdef")
    assert out.parent == project / ".catui" / "tasks" and (project / ".catui" / ".gitignore").exists()

    async def work() -> None:
        await asyncio.sleep(30)

    task = Task(id="a0123456789abcdef", type="local_agent", description="agent", output_file=out)
    task.runner = asyncio.create_task(work())
    registry.add(task)
    with pytest.raises(ValueError):
        registry.add(task)
    same = await registry.wait(task.id, 0.05)
    assert same.status == "running"
    stopped = await registry.stop(task.id)
    assert stopped.status == "stopped" and stopped.ended_at is not None and task.runner.cancelled()

    finished = Task(id="a1", type="local_agent", description="done", output_file=out)
    registry.add(finished)
    finished.finish("completed", "all good")
    finished.finish("failed", "ignored")
    assert (await registry.wait("a1", 1)).status == "completed" and finished.result == "all good"
    assert [t.id for t in registry.list()] == [task.id, "a1"]
    with pytest.raises(KeyError):
        await registry.wait("missing", 0)


async def test_bash_huge_output_reads_head_and_tail(ctx: ToolContext) -> None:
    result = await bash(ctx, "python3 -c \"print('h' * 10); print('x' * 500000); print('tail-end')\"")
    body = text(result)
    assert body.startswith("hhhhhhhhhh\n") and body.endswith("tail-end")
    assert len(body) < 31000
    cut = int(body.split("... [")[1].split(" characters")[0])
    assert cut > 400000


async def test_bash_cwd_deleted_falls_back_to_project(ctx: ToolContext, project: Path) -> None:
    await bash(ctx, "cd sub/deeper")
    (project / "sub" / "deeper").rmdir()
    result = await bash(ctx, "pwd")
    assert text(result).startswith(str(project)) and "no longer exists" in text(result)


async def test_registry_stop_all_kills_background_shells(ctx: ToolContext) -> None:
    first = await bash(ctx, "sleep 30", run_in_background=True)
    second = await bash(ctx, "sleep 30", run_in_background=True)
    registry: TaskRegistry = ctx.services.tasks
    stopped = await registry.stop_all()
    assert {t.id for t in stopped} == {first.data["background_task_id"], second.data["background_task_id"]}
    assert all(t.status == "killed" and not pid_alive(t.metadata["pid"]) for t in stopped)
    assert await registry.stop_all() == []


async def test_a_runaway_background_command_is_stopped_at_the_output_cap(ctx: ToolContext) -> None:
    from catui.tools.bash import MAX_BACKGROUND_OUTPUT_BYTES

    started = await bash(ctx, "yes catui", run_in_background=True, description="runaway")
    task_id = started.data["background_task_id"]
    output_file = Path(started.data["output_file"])
    done = await task_output(ctx, task_id, timeout=120_000)
    assert "<status>failed</status>" in text(done)
    size = output_file.stat().st_size
    assert MAX_BACKGROUND_OUTPUT_BYTES <= size < MAX_BACKGROUND_OUTPUT_BYTES + 4096  # the cap and one note
    with output_file.open("rb") as out:
        out.seek(-300, os.SEEK_END)
        assert b"the output passed 67108864 bytes; the command was stopped" in out.read()
