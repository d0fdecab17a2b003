"""Running one command hook: ``bash -c`` in the agent's folder, the event's JSON on stdin.

The command gets its own process group so that a timeout (or the user
interrupting the agent) stops everything it started, not only the shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.hooks.config import CommandHook

# Enough of a hook's output for any decision or message; a hook that floods stdout is not stored whole.
MAX_OUTPUT_CHARS = 100_000


@dataclass(frozen=True)
class HookExecution:
    """What one command did. ``exit_code`` is None when it could not start or ran out of time."""

    hook: CommandHook
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    start_error: str | None = None


def hook_environment(base: Mapping[str, str] | None, project_dir: Path) -> dict[str, str]:
    """The environment a hook runs with: the agent's, plus the project folder under both products' names."""
    env = dict(base if base is not None else os.environ)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    env["CATUI_PROJECT_DIR"] = str(project_dir)
    return env


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


async def run_command_hook(
    hook: CommandHook, payload: Mapping[str, Any], *, cwd: Path, env: Mapping[str, str]
) -> HookExecution:
    """Run ``hook`` with ``payload`` as JSON on stdin; never raises for the command's failures.

    A cancelled caller (an interrupted agent) kills the command's process
    group before the cancellation goes on.
    """
    folder = cwd if cwd.is_dir() else Path.cwd()
    try:
        proc = await asyncio.create_subprocess_exec(
            _shell(),
            "-c",
            hook.command,
            cwd=str(folder),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        return HookExecution(hook, None, start_error=f"could not start: {exc.strerror or exc}")
    data = json.dumps(dict(payload), ensure_ascii=False, default=str).encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout=hook.timeout)
    except TimeoutError:
        await _kill(proc)
        return HookExecution(hook, None, timed_out=True)
    except asyncio.CancelledError:
        await _kill(proc)
        raise
    return HookExecution(
        hook,
        proc.returncode,
        out.decode("utf-8", "replace")[:MAX_OUTPUT_CHARS],
        err.decode("utf-8", "replace")[:MAX_OUTPUT_CHARS],
    )


async def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and whatever it started
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=5)
