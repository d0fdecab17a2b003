"""``catui agents``: list, show and validate agent definitions (the click commands).

    catui agents [list] [--json]     N active agents, grouped by source; failed files and reasons
    catui agents show NAME           every resolved field, the source file, the final tool list
    catui agents validate [PATH...]  check files or folders (default: everything catui loads); exit 1 on failure

The work lives beside this module: agents_sources.py (the registry a session would load),
agents_listing.py (``list``), agents_show.py (``show``), agents_validate.py (``validate``).
The registry and what ``list`` needs load at start-up; the Markdown, JSON and plugin
loaders (``validate``) and the tool registry (``show``) only when those commands run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from catui.cli.commands.agents_listing import format_listing
from catui.cli.commands.agents_show import (
    final_tool_list,
    format_agent,
    main_tool_names,
    show_settings_and_env,
)
from catui.cli.commands.agents_sources import load_registry, source_options
from catui.cli.commands.agents_validate import registry_report, validate_paths
from catui.config.compat import CompatProfile, resolve_compat
from catui.errors import ConfigurationError


@click.group(
    name="agents",
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--json", "as_json", is_flag=True, help="With no subcommand: list as JSON.")
@source_options
@click.pass_context
def command(
    ctx: click.Context, as_json: bool = False, plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """List, show and validate agent definitions (built-in, plugin, user, project, --agents)."""
    if ctx.invoked_subcommand is None:
        # `catui agents --json` is `catui agents list --json`, as people type it.
        ctx.invoke(list_command, as_json=as_json, plugin_dirs=plugin_dirs, agents_json=agents_json)


def _profile(settings: Mapping[str, Any], env: Mapping[str, str]) -> CompatProfile:
    """The compatibility profile a session here would follow (its built-in agents differ); exits on a bad one."""
    try:
        return resolve_compat(settings, env)
    except ConfigurationError as exc:
        click.echo(f"catui: {exc}", err=True)
        sys.exit(1)


@command.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print {active, all, failed_files, warnings} as JSON.")
@source_options
def list_command(
    as_json: bool = False, plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """Active agents grouped by source, shadowed definitions, and files that failed to load."""
    profile = _profile(*show_settings_and_env(Path.cwd()))
    registry, notes = load_registry(plugin_dirs, agents_json, current_contract=profile.current)
    if as_json:
        listing = registry.to_json()
        available = main_tool_names()
        for key, agents in (("active", registry.active), ("all", registry.all)):
            # what each agent ends up with as a sub-agent (a memory agent's Read/Write/Edit included)
            for summary, agent in zip(listing[key], agents, strict=True):
                summary["finalTools"] = final_tool_list(agent, available)[0]
        click.echo(json.dumps(listing, indent=2, ensure_ascii=False))
        return
    click.echo(format_listing(registry, notes))


@command.command(name="show")
@click.argument("name")
@source_options
def show_command(name: str, plugin_dirs: Sequence[str] = (), agents_json: str | None = None) -> None:
    """Every resolved field of agent NAME, its source file and its final tool list."""
    settings, env = show_settings_and_env(Path.cwd())
    profile = _profile(settings, env)
    registry, _ = load_registry(plugin_dirs, agents_json, current_contract=profile.current)
    agent = registry.get(name)
    if agent is None:
        shadowed = [a for a in registry.all if a.agent_type == name]
        available = ", ".join(registry.names())
        click.echo(f"catui: no active agent named '{name}'. Available agents: {available}", err=True)
        if not shadowed:
            failed = [f for f in registry.failed_files if Path(f.path).stem == name]
            for item in failed:
                click.echo(f"  {item.path} failed to load: {item.error}", err=True)
        sys.exit(1)
    click.echo(f"Compat profile: {profile.describe()}")
    click.echo(format_agent(agent, registry, settings, env))


@command.command(name="validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@source_options
def validate_command(
    paths: tuple[Path, ...], plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """Check agent files or folders (plugin folders too); with no PATH, everything catui loads.

    Prints each agent that loads, each file that fails with its reason, and warnings.
    Exits with status 1 when any file fails.
    """
    if paths:
        report = validate_paths(paths)
    else:
        registry, notes = load_registry(plugin_dirs, agents_json)
        report = registry_report(registry, notes)
    click.echo(report.render())
    sys.exit(1 if report.failed else 0)
