"""Bash: run a shell command in the agent's current directory, in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shlex
import signal
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tasks.model import Task, new_task_id
from catui.tools import process_groups
from catui.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from catui.sandbox.policy import LaunchPlan
    from catui.tools.bash_input import BashInput

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
KILL_GRACE_S = 1.0
MAX_BACKGROUND_OUTPUT_BYTES = 64 * 1024 * 1024
"""A background command is stopped when its output file would grow past this (a runaway `yes` must not fill
the disk)."""

DESCRIPTION = """\
Run a command with bash and return its output (stdout and stderr together).

- The working directory persists between calls: a `cd` carries over to the next command. If a command \
leaves the project's working directories, the next command starts again from the project root. Prefer \
absolute paths over `cd`.
- Quote paths that contain spaces: `cd "/path/with spaces"`.
- timeout is in milliseconds: 120000 (2 minutes) by default, at most 600000 (10 minutes). The command and \
everything it started are killed when it runs out.
- Output longer than 30000 characters is cut in the middle, with a note.
- A non-zero exit status is reported as an error with its exit code.
- run_in_background starts the command and returns at once with a task id and the file its output goes \
to; read it with TaskOutput (or Read on the file), stop it with TaskStop. Use it for servers and long \
builds; do not append `&` yourself.
- Prefer the dedicated tools over shell equivalents: Glob instead of find, Grep instead of grep or rg, Read \
instead of cat/head/tail, Edit instead of sed/awk, Write instead of echo redirection.
- Chain dependent commands with `&&`; issue independent commands as separate calls in one message.
- There is no terminal: interactive programs (editors, `git rebase -i`, pagers) will hang until the timeout."""


class BashTool(Tool):
    name = "Bash"
    input_model_ref: ClassVar[str] = "catui.tools.bash_input:BashInput"

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(
            tool_name=self.name,
            tool_input=args.model_dump(by_alias=True, exclude_none=True),
            read_only=False,
            subject=args.command,
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.bash_input import BashInput
        assert isinstance(args, BashInput)
        notes: list[str] = []
        if not ctx.cwd.is_dir():
            notes.append(
                f"The working directory {ctx.cwd} no longer exists; the command ran in {ctx.project_root}."
            )
            ctx.cwd = ctx.project_root
        if args.run_in_background:
            return await self._start_background(args, ctx)
        timeout_ms = min(args.timeout or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        reports = ctx.services.shell_reports
        report = reports.foreground(ctx, args.description or args.command) if reports is not None else None
        status = "stopped"
        try:
            result = await self._run(args.command, timeout_ms, ctx, notes)
            status = "stopped" if ctx.abort.is_set() else "failed" if result.is_error else "completed"
            return result
        finally:
            if report is not None:
                report.ended(status)

    async def _run(self, command: str, timeout_ms: int, ctx: ToolContext, notes: list[str]) -> ToolResult:
        with tempfile.TemporaryDirectory(prefix="catui-bash-") as scratch:
            launch = _launch_plan(command, ctx, [Path(scratch)])
            if launch.refusal is not None:
                return ToolResult(launch.refusal, is_error=True)
            if launch.notice:
                notes.append(launch.notice)
            cwd_file = Path(scratch) / "cwd"
            out_file = Path(scratch) / "out"
            # The trailer records the final directory and keeps the command's exit status; a command that
            # calls `exit` skips it, and the directory then stays as it was.
            script = (
                f"{command}\n__catui_status=$?\n"
                f"pwd -P > {shlex.quote(str(cwd_file))} 2>/dev/null\nexit $__catui_status\n"
            )
            try:
                proc = await _start_bash(script, ctx, out_file, launch)
                interrupted = await _wait(proc, timeout_ms / 1000, ctx.abort)
            finally:
                cleaned = launch.finish()  # the command's processes are gone: placeholders and strays
            if cleaned:
                notes.append(cleaned)
            output, unread = _read_output(out_file)
            new_cwd = _read_cwd(cwd_file)

        exit_code = proc.returncode
        if new_cwd and not interrupted:
            note = _move_cwd(ctx, Path(new_cwd))
            if note:
                notes.append(note)
        body = _truncate(output.rstrip("\n"), unread)
        data: dict[str, Any] = {
            "exit_code": exit_code,
            "sandboxed": launch.sandboxed,
            "interrupted": interrupted is not None,
            "cwd": str(ctx.cwd),
            # stderr goes to the same file as stdout (the model reads them interleaved), so stdout holds both,
            # as in Claude Code's tool result
            "stdout": body,
            "stderr": "",
        }
        if interrupted == "timeout":
            parts = [body, f"Command timed out after {timeout_ms} ms and was killed."]
            return ToolResult(_join(parts, notes), is_error=True, data=data)
        if interrupted == "abort":
            return ToolResult(
                _join([body, "Command was interrupted and killed."], notes), is_error=True, data=data
            )
        if exit_code != 0:
            if launch.layout is not None and ctx.services.sandbox is not None:
                denial = ctx.services.sandbox.denial_note(output, launch.layout)
                if denial:
                    notes.append(denial)
            return ToolResult(_join([body, f"Exit code {exit_code}"], notes), is_error=True, data=data)
        return ToolResult(_join([body or "(no output)"], notes), data=data)

    async def _start_background(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        registry = ctx.services.tasks
        if registry is None:
            return ToolResult(
                "Background commands are not available here (no task registry). Run the command without "
                "run_in_background.",
                is_error=True,
            )
        launch = _launch_plan(args.command, ctx, [])
        if launch.refusal is not None:
            return ToolResult(launch.refusal, is_error=True)
        task_id = new_task_id("local_bash")
        output_file: Path = registry.output_path(task_id)
        try:
            proc = await _start_bash(args.command, ctx, output_file, launch, pipe=True)
        except BaseException:
            launch.finish()
            raise
        copier = asyncio.ensure_future(_copy_capped(proc, output_file, MAX_BACKGROUND_OUTPUT_BYTES))
        task = Task(
            id=task_id,
            type="local_bash",
            description=args.description or args.command,
            output_file=output_file,
            metadata={"command": args.command, "pid": proc.pid, "cwd": str(ctx.cwd), "sandboxed": launch.sandboxed},
        )

        stopping = asyncio.Event()

        async def watch() -> None:
            code = await proc.wait()
            # What the shell wrote before it ended is in the pipe: copied before the task counts as done. A
            # process it left in the background may keep the pipe open; its later output is still copied.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(copier), KILL_GRACE_S)
            cleaned = launch.finish()
            if cleaned:
                with contextlib.suppress(OSError), output_file.open("a", encoding="utf-8") as out:
                    out.write(f"\n{cleaned}\n")
            if copier.done() and not copier.cancelled() and copier.result():
                task.finish("failed", f"Output passed {MAX_BACKGROUND_OUTPUT_BYTES} bytes; the command was stopped",
                            exit_code=code)
            elif stopping.is_set():
                task.finish("killed", "Killed by request.", exit_code=code)
            else:
                task.finish("completed" if code == 0 else "failed", f"Exit code {code}", exit_code=code)

        async def stop() -> None:
            stopping.set()  # so that the watcher records "killed", not the signal's exit status
            await _kill_group(proc)
            task.finish("killed", "Killed by request.", exit_code=proc.returncode)

        task.runner = asyncio.create_task(watch())
        task.stop_callback = stop
        registry.add(task)
        notice = f"\n{launch.notice}" if launch.notice else ""
        reports = ctx.services.shell_reports
        text = (reports.launched(task, ctx) if reports is not None else
                f"Command running in the background with ID: {task_id}. Its output is being written to "
                f"{output_file}. Read it with TaskOutput (or Read the file); stop it with TaskStop.")
        return ToolResult(text + notice, data={"background_task_id": task_id, "output_file": str(output_file)})


def _launch_plan(command: str, ctx: ToolContext, scratch: list[Path]) -> LaunchPlan:
    """How the sandbox (when the ``sandbox`` setting is on) wants this command started."""
    from catui.sandbox.policy import AgentFolders, LaunchPlan  # lazy (catui.lazy): the sandbox

    sandbox = ctx.services.sandbox
    if sandbox is None:
        return LaunchPlan()
    folders = AgentFolders(ctx.cwd, ctx.project_root, ctx.permissions.working_directories)
    return sandbox.plan(command, folders, scratch)


async def _start_bash(
    script: str, ctx: ToolContext, output_file: Path, launch: LaunchPlan, *, pipe: bool = False
) -> asyncio.subprocess.Process:
    """Start ``bash -c script`` in ``ctx.cwd`` (inside bwrap when sandboxed), output going to ``output_file``.

    The child gets a session (process group) of its own, so that a timeout, an interrupt or TaskStop
    can kill everything it started, and no stdin, so that a command waiting for input ends instead of hanging.
    ``pipe``: the output comes on ``proc.stdout`` (for :func:`_copy_capped`); ``output_file`` is created empty.
    """
    env = _child_env(ctx)
    env.update(launch.env())  # sandboxed: the private /tmp, and the allow-list proxy's address
    with output_file.open("wb") as out, launch.command_line(["bash", "-c", script], ctx.cwd) as (argv, fds):
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(ctx.cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if pipe else out,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
            pass_fds=fds,
        )
    process_groups.remember(proc.pid)  # what it forks into the background ends with catui
    return proc


async def _copy_capped(proc: asyncio.subprocess.Process, output_file: Path, cap: int) -> bool:
    """Copy a background command's output into its file as it comes, up to ``cap`` bytes.

    Past the cap the command's process group is killed and a last line says why; returns whether that
    happened. The file is flushed per chunk, so TaskOutput and Read see the output as it grows.
    """
    assert proc.stdout is not None
    written = 0
    with output_file.open("ab") as out:
        while chunk := await proc.stdout.read(64 * 1024):
            room = cap - written
            out.write(chunk[:room])
            out.flush()
            written += min(len(chunk), room)
            if len(chunk) > room:
                out.write(f"\n[catui: the output passed {cap} bytes; the command was stopped. Send large "
                          "output to a file of your own and read parts of it.]\n".encode())
                out.flush()
                await _kill_group(proc)
                return True
    return False


def _child_env(ctx: ToolContext) -> dict[str, str]:
    """The process environment, plus the session's own (settings ``env``, SDK ``env`` option)."""
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in ctx.services.env.items()})
    # No pager or editor can work without a terminal; make git and friends print and return.
    env.setdefault("GIT_PAGER", "cat")
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_EDITOR", "true")
    return env


async def _wait(proc: asyncio.subprocess.Process, timeout_s: float, abort: asyncio.Event) -> str | None:
    """Wait for the command; kill its process group on timeout or abort. Returns why it was stopped."""
    waiter = asyncio.ensure_future(proc.wait())
    aborter = asyncio.ensure_future(abort.wait())
    try:
        done, _ = await asyncio.wait(
            {waiter, aborter}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    except BaseException:
        await _kill_group(proc)
        raise
    finally:
        aborter.cancel()
    if waiter in done:
        return None
    await _kill_group(proc)
    return "abort" if aborter in done else "timeout"


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group, then SIGKILL whatever is left after a short grace."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
    except TimeoutError:
        pass
    # Children that ignore SIGTERM, or outlive the shell, still belong to the group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        await proc.wait()


def _move_cwd(ctx: ToolContext, new_cwd: Path) -> str | None:
    """Follow a ``cd`` when it stays inside the allowed folders; otherwise go back to the project root."""
    allowed = ctx.permissions.working_directories or (ctx.project_root,)
    real = Path(os.path.realpath(new_cwd))
    for root in allowed:
        if real.is_relative_to(Path(os.path.realpath(root))):
            ctx.cwd = real
            return None
    ctx.cwd = ctx.project_root
    return (
        f"Shell cwd was reset to {ctx.project_root}: the command moved to {real}, outside the allowed "
        "working directories."
    )


# The scratch folder is the command's to write (sandboxed too): it can replace the files catui reads back
# afterwards with a FIFO (a read that never returns, deaf to signals), a link to /dev/zero (endless), or
# anything else. They are opened without following links or blocking, and read only if regular, with a bound.
_CWD_MAX_BYTES = 64 * 1024


def _open_scratch_file(path: Path) -> tuple[int, int] | str:
    """``path`` opened for reading (descriptor, size) if it is still a regular file; else why it is not read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return "it was removed"
    except OSError as exc:
        return "it was replaced by a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return "it was replaced by something that is not a regular file"
    os.set_blocking(fd, True)
    return fd, info.st_size


def _read_cwd(path: Path) -> str:
    """The directory the command ended in, as its trailer recorded it ("" when it did not)."""
    opened = _open_scratch_file(path)
    if isinstance(opened, str):
        return ""
    fd, _size = opened
    try:
        return os.read(fd, _CWD_MAX_BYTES).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def _read_output(path: Path) -> tuple[str, int]:
    """The command's output and how many bytes in its middle were not read.

    Very large outputs are cut in the middle anyway, so only their head and tail are read.
    """
    opened = _open_scratch_file(path)
    if isinstance(opened, str):
        return f"(catui did not read this command's output file: {opened} while the command ran.)", 0
    fd, size = opened
    limit = MAX_OUTPUT_CHARS * 4  # bytes; generous for multi-byte text
    try:
        if size <= 2 * limit:
            return os.pread(fd, 2 * limit, 0).decode("utf-8", "replace"), 0
        head = os.pread(fd, limit, 0)
        tail = os.pread(fd, limit, size - limit)
    finally:
        os.close(fd)
    return head.decode("utf-8", "replace") + tail.decode("utf-8", "replace"), size - 2 * limit


def _truncate(text: str, unread: int = 0) -> str:
    if len(text) <= MAX_OUTPUT_CHARS and not unread:
        return text
    half = MAX_OUTPUT_CHARS // 2
    omitted = len(text) - 2 * half + unread
    return (
        f"{text[:half]}\n\n... [{omitted} characters cut from the middle of the output] ...\n\n{text[-half:]}"
    )


def _join(parts: list[str], notes: list[str]) -> str:
    return "\n".join(p for p in [*parts, *notes] if p)
