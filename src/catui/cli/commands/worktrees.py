"""``catui worktrees``: list, remove and prune the worktrees agents left behind.

``catui worktrees`` lists kept worktrees (agent, branch, change summary, age);
``catui worktrees rm ID`` removes one with its branch, changes and all;
``catui worktrees prune`` removes those without changes and those whose
folder is gone; ``diff ID``, ``apply ID`` and ``merge ID --commit`` bring an
agent's work back (``worktree/merge_back.py``). ``cli/main.py`` imports this module only when ``catui
worktrees`` runs, so ``catui --help`` never loads the worktree and state modules.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import click

from catui.cli.commands.project_state import format_age, open_state, project_option, project_root
from catui.errors import CatuiError
from catui.worktree import WorktreeError, WorktreeInfo, change_summary, prune_worktrees, remove_worktree
from catui.worktree.lookup import match_worktree, recorded_worktree
from catui.worktree.merge_back import MergeConflict, apply_worktree, worktree_diff


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@project_option
@click.option("--all", "show_all", is_flag=True, help="Also list worktrees of agents still running.")
@click.pass_context
def command(ctx: click.Context, project: str | None, show_all: bool) -> None:
    """List the worktrees agents kept because they changed something."""
    ctx.ensure_object(dict)
    ctx.obj["project"] = project
    if ctx.invoked_subcommand is not None:
        return

    try:
        rows = asyncio.run(_collect(project_root(project), show_all))
    except CatuiError as exc:
        raise _fail(exc) from exc
    if not rows:
        click.echo("No kept worktrees.")
        return
    header = ("AGENT", "STATUS", "BRANCH", "FILES", "+", "-", "AGE", "PATH")
    table = [header, *rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [str(cell).ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        click.echo("  ".join([*cells, str(row[-1])]))


async def _collect(root: Path, show_all: bool) -> list[tuple[str, ...]]:
    state = open_state(root)
    if state is None:
        return []
    try:
        records = [
            r
            for r in state.list_worktrees()
            if r["status"] == "kept" or (show_all and r["status"] in ("active", "creating"))
        ]
    finally:
        state.close()
    now = time.time()
    rows: list[tuple[str, ...]] = []
    for record in records:
        info = WorktreeInfo.from_row(record)
        files, insertions, deletions = "-", "-", "-"
        if not info.path.is_dir():
            files = "gone"
        elif not info.hook_based:
            try:
                summary = await change_summary(info)
                files, insertions, deletions = (str(n) for n in summary)
            except WorktreeError:
                files = "?"
        rows.append(
            (
                info.agent_id,
                str(record["status"]),
                info.branch or "(hook)",
                str(files),
                str(insertions),
                str(deletions),
                format_age(record.get("created_at"), now),
                str(info.path),
            )
        )
    return rows


def _match(records: list[dict[str, Any]], ident: str) -> dict[str, Any]:
    try:
        return dict(match_worktree(records, ident))
    except WorktreeError as exc:
        raise click.ClickException(str(exc)) from None


@command.command("rm")
@click.argument("ident", metavar="ID")
@click.pass_context
def rm_command(ctx: click.Context, ident: str) -> None:
    """Remove one worktree and its branch, discarding its changes (ID: agent id, its prefix, or agent-XXXXXXXX)."""
    root = project_root(ctx.obj.get("project"))
    state = open_state(root)
    if state is None:
        raise click.ClickException(f"no worktree matches {ident!r}: {root} has no catui state")
    try:
        record = _match([r for r in state.list_worktrees() if r["status"] != "removed"], ident)
        info = WorktreeInfo.from_row(record)
        asyncio.run(remove_worktree(info, state))
    except CatuiError as exc:
        raise _fail(exc) from exc
    finally:
        state.close()
    branch = f" and branch {info.branch}" if info.branch else ""
    click.echo(f"Removed worktree {info.path}{branch}.")


@command.command("prune")
@click.pass_context
def prune_command(ctx: click.Context) -> None:
    """Remove worktrees without changes, and forget those whose folder is gone."""
    root = project_root(ctx.obj.get("project"))
    state = open_state(root)
    if state is None:
        click.echo("0 removed, 0 kept, 0 failed.")
        return
    try:
        result = asyncio.run(prune_worktrees(root, state))
    except CatuiError as exc:
        raise _fail(exc) from exc
    finally:
        state.close()
    for agent_id in result.removed:
        click.echo(f"removed  {agent_id}")
    for agent_id in result.kept:
        click.echo(f"kept     {agent_id} (has changes)")
    for agent_id, reason in result.failed:
        click.echo(f"failed   {agent_id}: {reason}", err=True)
    click.echo(f"{len(result.removed)} removed, {len(result.kept)} kept, {len(result.failed)} failed.")
    if result.failed:
        ctx.exit(1)


@command.command("diff")
@click.argument("ident", metavar="ID")
@click.option("--stat", "stat_only", is_flag=True, help="Only the summary of changed files.")
@click.pass_context
def diff_command(ctx: click.Context, ident: str, stat_only: bool) -> None:
    """Show an agent's work against the commit its worktree started from: the stat, then the full diff."""
    root = project_root(ctx.obj.get("project"))
    try:
        info = recorded_worktree(root, ident)
        diff = asyncio.run(worktree_diff(info))
    except CatuiError as exc:
        raise _fail(exc) from exc
    if not diff.files:
        click.echo(f"Agent {info.agent_id}'s worktree has no changes against {diff.base[:12]}.")
        return
    click.echo(diff.stat, nl=False)
    if not stat_only:
        click.echo()
        click.echo(diff.patch, nl=False)


@command.command("apply")
@click.argument("ident", metavar="ID")
@click.pass_context
def apply_command(ctx: click.Context, ident: str) -> None:
    """Bring an agent's work into this checkout, staged but not committed (nothing changes on a conflict)."""
    _merge(ctx, ident, commit=False, message=None)


@command.command("merge")
@click.argument("ident", metavar="ID")
@click.option("--commit", "commit", is_flag=True, help="Commit the merge (a fast-forward when possible).")
@click.option("-m", "--message", help="The merge commit's message.")
@click.pass_context
def merge_command(ctx: click.Context, ident: str, commit: bool, message: str | None) -> None:
    """Merge an agent's work into this checkout; with --commit, as a commit (else staged, as apply)."""
    if message and not commit:
        raise click.UsageError("--message needs --commit: catui worktrees merge ID --commit -m 'message'")
    _merge(ctx, ident, commit=commit, message=message)


def _merge(ctx: click.Context, ident: str, *, commit: bool, message: str | None) -> None:
    root = project_root(ctx.obj.get("project"))
    try:
        info = recorded_worktree(root, ident)
        result = asyncio.run(apply_worktree(info, root, commit=commit, message=message))
    except MergeConflict as exc:
        click.echo(f"catui: {exc}", err=True)
        for name in exc.files:
            click.echo(f"conflict: {name}", err=True)
        ctx.exit(1)
    except CatuiError as exc:
        raise _fail(exc) from exc
    click.echo(result.describe(info.agent_id))
    if result.kind != "nothing":
        click.echo(f"The worktree is kept; remove it with: catui worktrees rm {info.agent_id}")
