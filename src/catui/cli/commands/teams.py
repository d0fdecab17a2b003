"""``catui teams [list | show NAME | rm NAME]``: the agent teams under the catui home."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from catui.paths import catui_home
from catui.subagents.teams.files import TeamFileError, TeamFiles, list_teams, team_name_problem


def teams_root() -> Path:
    return catui_home() / "teams"


def _open(name: str) -> TeamFiles:
    problem = team_name_problem(name)
    files = TeamFiles(teams_root(), name)
    if problem is not None or not files.exists():
        known = ", ".join(list_teams(teams_root())) or "none"
        click.echo(f"catui teams: no team called {name!r} under {teams_root()} (teams: {known})", err=True)
        sys.exit(1)
    return files


def _when(ms: Any) -> str:
    try:
        return datetime.fromtimestamp(int(ms) / 1000).strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError, OSError):
        return "?"


def format_team(config: dict[str, Any], files: TeamFiles) -> str:
    """A team's config and inboxes as ``catui teams show`` prints them."""
    lines = [f"team:         {config.get('name')}"]
    if config.get("description"):
        lines.append(f"description:  {config['description']}")
    lines.append(f"created:      {_when(config.get('createdAt'))}")
    lines.append(f"lead:         {config.get('leadAgentId')} (session {config.get('leadSessionId')})")
    lines.append(f"config:       {files.config_path}")
    lines.append("members:")
    for member in config.get("members", []):
        extra = f" {member['color']}" if member.get("color") else ""
        plan = " plan-approval" if member.get("planModeRequired") else ""
        lines.append(f"  {member.get('name')}  {member.get('agentType', '')}  {member.get('model', '')}{extra}{plan}")
    shutdown = config.get("shutdown")
    if isinstance(shutdown, dict):
        lines.append(f"ended by catui: {shutdown.get('reason')}")
    inbox_dir = files.folder / "inboxes"
    names = sorted(p.stem for p in inbox_dir.glob("*.json")) if inbox_dir.is_dir() else []
    if names:
        lines.append("inboxes:")
    for name in names:
        entries = files.read_inbox(name)
        unread = sum(1 for e in entries if not e.get("read"))
        lines.append(f"  {name}: {len(entries)} message(s), {unread} unread")
        if entries:
            last = entries[-1]
            preview = " ".join(str(last.get("summary") or last.get("text", "")).split())[:80]
            lines.append(f"    last from {last.get('from')}: {preview}")
    return "\n".join(lines)


@click.group(name="teams", invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def command(ctx: click.Context) -> None:
    """List agent teams; show one (members, inboxes); remove one."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command)


@command.command(name="list")
def list_command() -> None:
    """One line per team: name, members, creation time."""
    names = list_teams(teams_root())
    if not names:
        click.echo(f"No teams under {teams_root()}.")
        return
    for name in names:
        try:
            config = TeamFiles(teams_root(), name).read_config()
        except TeamFileError as exc:
            click.echo(f"{name}  (unreadable: {exc})")
            continue
        members = [m.get("name") for m in config.get("members", []) if m.get("name") != "team-lead"]
        click.echo(f"{name}  {len(members)} teammate(s){': ' + ', '.join(members) if members else ''}  "
                   f"created {_when(config.get('createdAt'))}")


@command.command(name="show")
@click.argument("name")
def show_command(name: str) -> None:
    """A team's config, members and inboxes."""
    files = _open(name)
    try:
        click.echo(format_team(files.read_config(), files))
    except TeamFileError as exc:
        click.echo(f"catui teams: {exc}", err=True)
        sys.exit(1)


@command.command(name="rm")
@click.argument("name")
def rm_command(name: str) -> None:
    """Remove a team's folder (config and inboxes). A running lead keeps its teammates in memory."""
    files = _open(name)
    files.remove()
    click.echo(f"Removed team {name} ({files.folder}).")
