"""Where ``catui agents`` finds agents: the sources a session would load, plus ``--plugin-dir``/``--agents``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from catui.agents.plugins import plugin_paths
from catui.agents.registry import AgentRegistry, load_agent_registry
from catui.config.settings import load_settings


def source_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options that add sources the way a session would (``--plugin-dir``, ``--agents``)."""
    func = click.option("--agents", "agents_json", help="Extra agents as JSON, as `catui --agents` takes.")(
        func
    )
    func = click.option("--plugin-dir", "plugin_dirs", multiple=True, help="Also load this plugin folder.")(
        func
    )
    return func


def parse_agents_json(agents_json: str | None) -> dict[str, Any] | None:
    """The ``--agents`` JSON object, or None when the option is absent (a usage error when malformed)."""
    if not agents_json:
        return None
    try:
        value = json.loads(agents_json)
    except json.JSONDecodeError as exc:
        raise click.UsageError(f"--agents is not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(value, dict):
        raise click.UsageError(
            '--agents must be a JSON object: {"name": {"description": ..., "prompt": ...}}'
        )
    return value


def settings_plugin_dirs(cwd: Path) -> tuple[list[str], list[str]]:
    """Plugin folders named in settings (``plugins`` entries with a ``path``), and any settings problem."""
    try:
        settings = load_settings(cwd)
    except Exception as exc:  # a broken settings file must not hide the agents
        return [], [f"settings not read: {exc}"]
    return plugin_paths(settings.merged), []


def load_registry(
    plugin_dirs: Sequence[str], agents_json: str | None, *, current_contract: bool = False
) -> tuple[AgentRegistry, list[str]]:
    """The registry a session in the current folder would load, with these extra sources; and settings notes.

    ``current_contract``: the session follows the current Claude Code contract (catui.config.compat).
    """
    cwd = Path.cwd()
    settings_plugins, notes = settings_plugin_dirs(cwd)
    registry = load_agent_registry(
        cwd,
        plugin_dirs=[*plugin_dirs, *settings_plugins],
        flag_agents=parse_agents_json(agents_json),
        interactive=True,  # list what an interactive session offers (catui-guide included)
        current_contract=current_contract,
    )
    return registry, notes
