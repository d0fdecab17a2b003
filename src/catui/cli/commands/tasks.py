"""``catui tasks``: the project's background tasks, from ``.catui/state.db``.

``catui tasks`` lists them (status, age, tokens, tool count), ``catui tasks
show ID`` prints one with its result, ``catui tasks stop ID`` stops a running
one. Tasks belong to the catui process that started them: ``stop`` records a
stop request in state.db, which that process polls (every half second) and
answers by stopping the task and recording it as ``stopped``; this command
waits for that. A task whose process has died (killed, crashed) is shown as
``interrupted``: every command here marks such tasks first, and ``catui tasks
resume ID`` resumes one here, running it to completion (``tasks_resume.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import click

from catui.cli.commands.project_state import format_age, open_state, project_option, project_root
from catui.errors import CatuiError
from catui.state.db import StateDB
from catui.tasks.store import request_stop

STOP_WAIT_S = 10.0


def _tokens(value: Any) -> str:
    count = int(value or 0)
    return f"{count / 1000:.1f}k" if count >= 10_000 else str(count)


def _rows(state: StateDB) -> list[dict[str, Any]]:
    state.mark_interrupted()
    return state.list_tasks()


def _match(rows: list[dict[str, Any]], ident: str) -> dict[str, Any]:
    ident = ident.strip()
    exact = [r for r in rows if r["id"] == ident]
    candidates = exact or [r for r in rows if len(ident) >= 4 and str(r["id"]).startswith(ident)]
    if not candidates:
        known = ", ".join(str(r["id"]) for r in rows[-20:]) or "none"
        raise click.ClickException(f"no task matches {ident!r}; known task ids: {known}")
    if len(candidates) > 1:
        raise click.ClickException(
            f"{ident!r} matches several tasks ({', '.join(str(r['id']) for r in candidates)}); give more of the id"
        )
    return candidates[0]


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the tasks as a JSON array.")
@click.pass_context
def command(ctx: click.Context, project: str | None, as_json: bool) -> None:
    """List background tasks: status, age, tokens and tool count."""
    ctx.ensure_object(dict)
    ctx.obj["project"] = project
    if ctx.invoked_subcommand is not None:
        return

    state = open_state(project_root(project))
    try:
        rows = _rows(state) if state is not None else []
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if state is not None:
            state.close()
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo("No background tasks.")
        return
    now = time.time()
    header = ("ID", "TYPE", "STATUS", "WHERE", "AGE", "TOKENS", "TOOLS", "DESCRIPTION")
    table = [header] + [
        (
            str(r["id"]),
            str(r.get("agent_type") or r.get("type") or ""),
            str(r.get("status") or ""),
            runs_on(r),
            format_age(r.get("created_at"), now),
            _tokens(r.get("total_tokens")),
            str(int(r.get("tool_uses") or 0)),
            _description(r),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        click.echo("  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])), row[-1]]).rstrip())


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    meta = row.get("meta")
    return meta if isinstance(meta, dict) else {}


def runs_on(row: dict[str, Any]) -> str:
    """Where a task's agent runs: ``local`` (this machine's catui process) or ``ray:<node id, 8>``."""
    meta = _meta(row)
    if meta.get("placement_executor") == "ray":
        return f"ray:{str(meta.get('placement_node') or '?')[:8]}"
    return "local"


def _placement_detail(row: dict[str, Any]) -> str | None:
    """``ray node <id> (host <name>, pid <n>, attempt <k>)`` for a remote agent; None for a local one."""
    meta = _meta(row)
    if meta.get("placement_executor") != "ray":
        return None
    return (f"ray node {meta.get('placement_node')} (host {meta.get('placement_host')}, "
            f"pid {meta.get('placement_pid')}, attempt {meta.get('placement_attempt')})")


def _description(row: dict[str, Any]) -> str:
    """The description, followed for a running agent by its latest progress summary."""
    text = str(row.get("description") or "")
    summary = _running_summary(row)
    return f"{text} — {summary}" if summary else text


def _running_summary(row: dict[str, Any]) -> str | None:
    meta = row.get("meta") or {}
    summary = meta.get("progress_summary") if isinstance(meta, dict) else None
    return str(summary) if summary and row.get("status") == "running" else None


@command.command("show")
@click.argument("ident", metavar="ID")
@click.pass_context
def show_command(ctx: click.Context, ident: str) -> None:
    """Print one task (ID or a prefix of at least 4 characters), with its result."""
    state = open_state(project_root(ctx.obj.get("project")))
    if state is None:
        raise click.ClickException(f"no task matches {ident!r}: this project has no background tasks")
    try:
        row = _match(_rows(state), ident)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        state.close()
    now = time.time()
    fields = [
        ("id", row["id"]),
        ("type", row.get("type")),
        ("agent type", row.get("agent_type")),
        ("status", row.get("status")),
        ("description", row.get("description")),
        ("age", format_age(row.get("created_at"), now)),
        (
            "duration",
            f"{row['ended_at'] - row['created_at']:.1f}s"
            if row.get("ended_at") and row.get("created_at")
            else None,
        ),
        ("tokens", row.get("total_tokens")),
        ("tool uses", row.get("tool_uses")),
        ("last tool", row.get("last_tool")),
        ("summary", _running_summary(row)),
        ("tool_use id", row.get("tool_use_id")),
        ("process", row.get("pid")),
        ("runs on", _placement_detail(row)),
        ("output file", row.get("output_file")),
        ("worktree", row.get("worktree_path")),
        ("error", row.get("error")),
    ]
    for label, value in fields:
        if value not in (None, ""):
            click.echo(f"{label + ':':<13} {value}")
    result = row.get("result")
    click.echo("")
    click.echo("result:" if result else "result: (none yet)")
    if result:
        click.echo(str(result))


@command.command("stop")
@click.argument("ident", metavar="ID")
@click.option(
    "--no-wait", is_flag=True, help="Only record the stop request; do not wait for the task to stop."
)
@click.pass_context
def stop_command(ctx: click.Context, ident: str, no_wait: bool) -> None:
    """Stop a running task, in whichever catui process runs it."""
    state = open_state(project_root(ctx.obj.get("project")))
    if state is None:
        raise click.ClickException(f"no task matches {ident!r}: this project has no background tasks")
    try:
        row = _match(_rows(state), ident)
        if row.get("status") not in ("running", "queued", "pending"):
            click.echo(f"Task {row['id']} is not running (status: {row.get('status')}); nothing to stop.")
            return
        request_stop(state, str(row["id"]))
        if no_wait:
            click.echo(f"Asked catui process {row.get('pid')} to stop task {row['id']}.")
            return
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(0.1)
            state.mark_interrupted()
            current = state.get_task(str(row["id"])) or {}
            if current.get("status") not in ("running", "queued", "pending"):
                click.echo(f"Task {row['id']} {current.get('status')}.")
                return
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        state.close()
    raise click.ClickException(
        f"asked catui process {row.get('pid')} to stop task {row['id']}, but it is still running after "
        f"{STOP_WAIT_S:.0f} s; that process stops it at its next check, or end the process itself"
    )


@command.command("resume")
@click.argument("ident", metavar="ID")
@click.pass_context
def resume_command(ctx: click.Context, ident: str) -> None:
    """Resume an interrupted background agent here: run it to completion and print its result."""
    root = project_root(ctx.obj.get("project"))
    state = open_state(root)
    if state is None:
        raise click.ClickException(f"no task matches {ident!r}: this project has no background tasks")
    try:
        row = _match(_rows(state), ident)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        state.close()
    if row.get("status") != "interrupted":
        raise click.ClickException(
            f"task {row['id']} is {row.get('status')}, not interrupted; only an agent whose catui process died "
            "can be resumed here (message a finished one with SendMessage)"
        )
    # lazy: building an app (model client, tools, agents) is needed only here
    from catui.cli.commands.tasks_resume import resume_to_completion

    try:
        code = asyncio.run(resume_to_completion(root, str(row["id"])))
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from exc
    ctx.exit(code)
