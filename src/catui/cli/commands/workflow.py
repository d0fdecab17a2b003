"""``catui workflow run | resume | list | show | logs``: workflows from the command line (catui.workflows).

``run`` and ``resume`` print the run id (``wf_…``) at once on standard output, then the result as JSON
when the run finishes; a failed run prints its message on standard error and exits 1.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from catui.app import RunOptions
from catui.errors import CatuiError

EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def _options(model: str | None, permission_mode: str | None, executor: str | None) -> RunOptions:
    return RunOptions(cwd=Path.cwd(), model=model, permission_mode=permission_mode, executor=executor)


def _announce(run_id: str) -> None:
    click.echo(run_id)
    sys.stdout.flush()


def _finish(outcome: Any) -> None:
    if outcome.status == "completed":
        click.echo(_json_text(outcome.result))
        return
    click.echo(f"workflow {outcome.run_id} failed: {outcome.error}", err=True)
    sys.exit(EXIT_FAILED)


def _run(coro: Any, run_id_hint: str | None = None) -> Any:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        hint = f"`catui workflow resume {run_id_hint}`" if run_id_hint else "`catui workflow resume RUN_ID`"
        click.echo(f"workflow interrupted: finished agents are journaled; {hint} continues it", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None


_model = click.option("--model", help="Model of the workflow's agents (unless a call names one).")
_permission = click.option("--permission-mode", type=click.Choice(["default", "acceptEdits", "bypassPermissions",
                                                                   "plan", "dontAsk"]),
                           help="Permission mode of the agents (nobody is there to approve a tool call).")
_executor = click.option("--executor", type=click.Choice(["in-process", "ray"]),
                         help="Where the agents run (default: CATUI_EXECUTOR, the `executor` setting, else in-process).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def group() -> None:
    """Workflows: a JavaScript (Claude Code Workflow) or Python program that runs many agents."""


@group.command("run")
@click.argument("file", metavar="FILE.js|FILE.py", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--args", "args_json", metavar="JSON", help="The workflow's `args` (any JSON).")
@click.option("--budget", type=click.FloatRange(min=0), help="Dollars the workflow's agents may spend; then no new agent starts.")
@_model
@_permission
@_executor
def run_command(file: Path, args_json: str | None, budget: float | None, model: str | None,
                permission_mode: str | None, executor: str | None) -> None:
    """Run a workflow file; prints the run id, then the result JSON."""
    from catui.workflows.service import run_file

    args: Any = None
    if args_json is not None:
        try:
            args = json.loads(args_json)
        except json.JSONDecodeError as exc:
            raise click.ClickException(f"--args is not JSON ({exc.msg} at column {exc.colno}); "
                                       "pass e.g. --args '{\"topic\": \"x\"}'") from None
    outcome = _run(run_file(file, args=args, options=_options(model, permission_mode, executor), budget=budget,
                            on_start=_announce))
    _finish(outcome)


@group.command("resume")
@click.argument("run_id", metavar="RUN_ID")
@_model
@_permission
@_executor
def resume_command(run_id: str, model: str | None, permission_mode: str | None, executor: str | None) -> None:
    """Resume a run: journaled agents are not run again; prints the result JSON."""
    from catui.workflows.service import resume

    outcome = _run(resume(run_id, options=_options(model, permission_mode, executor), on_start=_announce), run_id)
    _finish(outcome)


@group.command("list")
def list_command() -> None:
    """The project's runs (``catui workflow`` runs and the Workflow tool's in any session), newest first."""
    from catui.paths import sessions_dir
    from catui.workflows.runner import WorkflowFiles

    root = WorkflowFiles.for_project(Path.cwd(), "x").root
    records = []
    paths = [*root.glob("wf_*.json"), *sessions_dir(Path.cwd()).glob("*/workflows/wf_*.json")]
    for path in paths:
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue
    if not records:
        click.echo("no workflow runs in this project")
        return
    for record in sorted(records, key=lambda r: str(r.get("timestamp")), reverse=True):
        click.echo(f"{record.get('runId')}  {record.get('status'):<9}  {record.get('workflowName')}  "
                   f"agents {record.get('agentCount', 0)}  {record.get('timestamp')}")


@group.command("show")
@click.argument("run_id", metavar="RUN_ID")
def show_command(run_id: str) -> None:
    """A run's status, counts and, when finished, its result JSON."""
    from catui.workflows.runner import read_record

    try:
        record = read_record(Path.cwd(), run_id)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{record.get('runId')}  {record.get('status')}  {record.get('workflowName')}")
    counts = record.get("counts") or {}
    click.echo("  ".join(f"{k} {v}" for k, v in counts.items()))
    if record.get("error"):
        click.echo(f"error: {record['error']}")
    if record.get("status") == "completed":
        click.echo(_json_text(record.get("result")))


@group.command("logs")
@click.argument("run_id", metavar="RUN_ID")
def logs_command(run_id: str) -> None:
    """A run's log lines and its journal (agents started and finished)."""
    from catui.workflows.journal import Journal
    from catui.workflows.runner import WorkflowFiles, locate_run, read_record

    try:
        record = read_record(Path.cwd(), run_id)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None
    for line in record.get("logs") or []:
        click.echo(f"log: {line}")
    files = locate_run(Path.cwd(), run_id) or WorkflowFiles.for_project(Path.cwd(), run_id)
    for entry in Journal(files.journal).entries():
        kind = entry.get("type")
        if kind == "started":
            click.echo(f"started: {entry.get('label')}")
        elif kind == "result":
            click.echo(f"result: {entry.get('agentId')} {_json_text(entry.get('result'))[:200]}")
        elif kind == "error":
            click.echo(f"error: {entry.get('label')}: {entry.get('error')}")


def _json_text(value: Any) -> str:
    """``value`` as JSON for the terminal; a lone surrogate (a script's string) as its JSON escape."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")
