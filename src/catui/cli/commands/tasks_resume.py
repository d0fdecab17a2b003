"""``catui tasks resume ID``: an interrupted background agent, resumed and run to completion in this process.

It runs with the project's settings as a print-mode run would (no parent turn
follows: the agent's notification is taken here, once, and its result printed
instead of being given to a model). Exit status 0 when the agent completed,
1 when it failed, was stopped or could not be resumed.
"""

from __future__ import annotations

from pathlib import Path

import click

from catui.app.build import RunOptions, build_app, start_app
from catui.errors import CatuiError


async def resume_to_completion(root: Path, agent_id: str) -> int:
    """Resume ``agent_id`` in an app built for ``root``, wait for its end, print its result; the exit status."""
    app = build_app(RunOptions(cwd=root, interactive=False))
    await start_app(app)
    try:
        system = app.services.subagents
        interrupted = system.interrupted if system is not None else None
        tasks = app.tasks
        if interrupted is None or tasks is None:
            raise CatuiError("background agents are disabled here (CATUI_DISABLE_BACKGROUND_TASKS); "
                             "unset it to resume an agent")
        why_not = await interrupted.resume(agent_id)
        if why_not is not None:
            raise CatuiError(why_not)
        click.echo(f"Resumed interrupted agent {agent_id}; waiting for it to finish.", err=True)
        while await tasks.next_notification() is not None:
            task = tasks.get(agent_id)
            if task is not None and not task.is_live:
                break
        task = tasks.get(agent_id)
        if task is None:
            raise CatuiError(f"agent {agent_id} resumed but its task vanished")
        if task.status != "completed":
            click.echo(f"catui: agent {agent_id} {task.status}: {task.error or task.result or 'no result'}", err=True)
            return 1
        click.echo(task.result or "")
        return 0
    finally:
        await app.aclose()
