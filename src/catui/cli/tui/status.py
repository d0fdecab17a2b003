"""The status line under the input: the ``statusLine`` setting's command, or model, cwd and tokens.

The setting has Claude Code's shape, ``{"type": "command", "command": "..."}``.
The command runs through the shell with a JSON object on stdin (session_id,
cwd, model {id, display_name}, workspace {current_dir, project_dir},
transcript_path, version, cost {total_cost_usd}) and its first line of
output is shown. A failing or slow command falls back to the default line
with a note, so a broken script never blocks the prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui import __version__
from catui.cli.tui.format import format_tokens

if TYPE_CHECKING:
    from catui.app.services import AgentApp

STATUS_COMMAND_TIMEOUT_S = 3.0


def status_command(settings: Mapping[str, Any]) -> str | None:
    """The shell command of the ``statusLine`` setting, or None when none (or a malformed one) is set."""
    entry = settings.get("statusLine")
    if isinstance(entry, Mapping) and entry.get("type", "command") == "command":
        command = entry.get("command")
        if isinstance(command, str) and command.strip():
            return command
    return None


def status_input(app: AgentApp) -> dict[str, Any]:
    """The JSON object a statusLine command receives on stdin."""

    session = app.session
    resolved = app.resolved_model
    return {
        "hook_event_name": "Status",
        "session_id": session.session_id,
        "cwd": str(session.ctx.cwd),
        "model": {"id": session.config.model, "display_name": getattr(resolved, "display", app.model_display)},
        "workspace": {"current_dir": str(session.ctx.cwd), "project_dir": str(app.project_root)},
        "transcript_path": str(app.transcript_path) if app.transcript_path else None,
        "version": __version__,
        "cost": {"total_cost_usd": round(session.config.usage_tracker.total_cost_usd, 6)},
    }


def default_status(app: AgentApp, context_tokens: int | None = None) -> str:
    """``sonnet · ~/src/project · 12.3k tokens``: the tokens of the conversation's latest request.

    That is how full the context is (input, cache and output of the last
    model call); without a call yet it is 0.
    """
    cwd = str(app.session.ctx.cwd)
    home = str(Path.home())
    if cwd == home or cwd.startswith(home + os.sep):
        cwd = "~" + cwd[len(home) :]
    tokens = context_tokens or 0
    return f"{app.model_display} · {cwd} · {format_tokens(tokens)} tokens"


async def run_status_command(command: str, payload: Mapping[str, Any], cwd: Path) -> str:
    """The first line the command prints; raises OSError / TimeoutError / RuntimeError when it fails."""
    proc = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=str(cwd),
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(payload).encode()), STATUS_COMMAND_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}")
    lines = out.decode("utf-8", "replace").splitlines()
    return lines[0] if lines else ""


async def status_line(app: AgentApp, context_tokens: int | None = None) -> str:
    """The status line to show now."""
    settings = app.settings.merged
    command = status_command(settings)
    if command is None:
        return default_status(app, context_tokens)
    try:
        return await run_status_command(command, status_input(app), app.session.ctx.cwd)
    except (OSError, TimeoutError, RuntimeError) as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
        return f"{default_status(app, context_tokens)} · statusLine command failed: {reason}"
