"""WorktreeCreate / WorktreeRemove hooks: user commands that replace git for isolation.

Settings use Claude Code's hook format::

    {"hooks": {"WorktreeCreate": [{"hooks": [{"type": "command", "command": "…", "timeout": 60}]}],
               "WorktreeRemove": [{"hooks": [{"type": "command", "command": "…"}]}]}}

Each command runs through the shell with a JSON object on stdin
(``session_id``, ``cwd``, ``hook_event_name``, ``name``, ``agent_id``, and for
removal ``worktree_path``). A WorktreeCreate command prints the absolute path
of the folder it made (the last non-empty stdout line is taken); any non-zero
exit fails the creation. This is how a project outside git gets isolation.

This module is self-contained on purpose: worktree creation must not depend on
the general hook dispatcher (the event needs the printed path back, which no
other hook event has).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catui.worktree.model import HookCommand, WorktreeError

CREATE_EVENT = "WorktreeCreate"
REMOVE_EVENT = "WorktreeRemove"
DEFAULT_TIMEOUT_S = 60.0


def configured_hooks(settings: Mapping[str, Any], event: str) -> list[HookCommand]:
    """The command hooks configured for ``event``; a :class:`WorktreeError` if their shape is wrong."""
    hooks = settings.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, Mapping):
        raise WorktreeError(f"settings: `hooks` must be an object of event names, not {type(hooks).__name__}")
    groups = hooks.get(event)
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise WorktreeError(
            f'settings: `hooks.{event}` must be a list like [{{"hooks": [{{"type": "command", ...}}]}}]'
        )
    found: list[HookCommand] = []
    for group_index, group in enumerate(groups):
        entries = group.get("hooks") if isinstance(group, Mapping) else None
        if not isinstance(entries, list):
            raise WorktreeError(f"settings: `hooks.{event}[{group_index}]` needs a `hooks` list of commands")
        for hook_index, entry in enumerate(entries):
            where = f"hooks.{event}[{group_index}].hooks[{hook_index}]"
            if not isinstance(entry, Mapping):
                raise WorktreeError(f"settings: `{where}` must be an object with `type` and `command`")
            if entry.get("type", "command") != "command":
                continue  # other hook types (prompt, http) cannot produce a worktree path here
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                raise WorktreeError(f"settings: `{where}.command` must be a non-empty string")
            timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
            if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
                raise WorktreeError(f"settings: `{where}.timeout` must be a positive number of seconds")
            found.append(HookCommand(command=command, timeout=float(timeout), where=where))
    return found


async def run_hook(hook: HookCommand, payload: Mapping[str, Any], *, cwd: Path, event: str) -> str:
    """Run one hook command with ``payload`` as JSON on stdin; returns its stdout.

    A non-zero exit, a timeout or a command that cannot start raises
    :class:`WorktreeError` with the tail of the command's stderr.
    """
    env = dict(os.environ)
    env.setdefault("CATUI_PROJECT_DIR", str(cwd))
    env.setdefault("CLAUDE_PROJECT_DIR", str(cwd))
    try:
        proc = await asyncio.create_subprocess_shell(
            hook.command,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise WorktreeError(f"{event} hook `{hook.command}` ({hook.where}) could not start: {exc}") from exc
    data = json.dumps(dict(payload)).encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout=hook.timeout)
    except TimeoutError as exc:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: the shell and what it started
        except ProcessLookupError:
            pass
        await proc.wait()
        raise WorktreeError(
            f"{event} hook `{hook.command}` ({hook.where}) did not finish within {hook.timeout:g}s; "
            "make it faster or raise its `timeout`"
        ) from exc
    if proc.returncode != 0:
        tail = " / ".join(line.strip() for line in err.decode("utf-8", "replace").strip().splitlines()[-3:])
        raise WorktreeError(
            f"{event} hook `{hook.command}` ({hook.where}) failed with exit status {proc.returncode}"
            + (f": {tail}" if tail else "")
        )
    return out.decode("utf-8", "replace")


def printed_path(stdout: str) -> str | None:
    """The path a WorktreeCreate hook printed: its last non-empty stdout line."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    return lines[-1] if lines else None
