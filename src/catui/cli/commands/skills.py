"""``catui skills [list|show NAME]``: the SKILL.md skills a session in this folder would offer."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from catui.cli.commands.agents_sources import settings_plugin_dirs
from catui.skills.model import SkillDefinition
from catui.skills.registry import SkillRegistry, load_skill_registry

SOURCE_LABELS = {"plugin": "plugin", "userSettings": "user", "projectSettings": "project", "built-in": "built-in"}

_plugin_option = click.option(
    "--plugin-dir", "plugin_dirs", multiple=True, help="Also load this plugin folder's skills."
)


def _load(plugin_dirs: Sequence[str]) -> tuple[SkillRegistry, list[str]]:
    cwd = Path.cwd()
    settings_plugins, notes = settings_plugin_dirs(cwd)
    return load_skill_registry(cwd, plugin_dirs=[*plugin_dirs, *settings_plugins]), notes


@click.group(name="skills", invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--json", "as_json", is_flag=True, help="With no subcommand: list as JSON.")
@_plugin_option
@click.pass_context
def command(ctx: click.Context, as_json: bool = False, plugin_dirs: Sequence[str] = ()) -> None:
    """List and show skills (plugin, user and project SKILL.md files) and custom commands (commands/*.md)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command, as_json=as_json, plugin_dirs=plugin_dirs)


@command.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print {skills, failed_files, warnings} as JSON.")
@_plugin_option
def list_command(as_json: bool = False, plugin_dirs: Sequence[str] = ()) -> None:
    """Every skill by name with its source and description, then files that failed to load."""
    registry, notes = _load(plugin_dirs)
    if as_json:
        payload = {
            "skills": [_summary(s) for _, s in sorted(registry.skills.items())],
            "failed_files": [f.to_dict() for f in registry.failed_files],
            "warnings": [w.to_dict() for w in registry.warnings],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    click.echo(format_skill_listing(registry, notes))


@command.command(name="show")
@click.argument("name")
@_plugin_option
def show_command(name: str, plugin_dirs: Sequence[str] = ()) -> None:
    """Skill NAME's fields, its file, and the instructions the model receives."""
    registry, _ = _load(plugin_dirs)
    skill = registry.get(name)
    if skill is None:
        available = ", ".join(registry.names()) or "none"
        click.echo(f"catui: no skill named '{name}'. Available skills: {available}", err=True)
        sys.exit(1)
    click.echo(format_skill(skill))


def _summary(skill: SkillDefinition) -> dict[str, object]:
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source,
        "path": skill.path,
        "allowed_tools": list(skill.allowed_tools),
        "disable_model_invocation": skill.disable_model_invocation,
        "kind": skill.kind,
    }


def format_skill_listing(registry: SkillRegistry, notes: Sequence[str] = ()) -> str:
    """One line per skill (``name  [source]  description``), then failed files and warnings."""
    lines: list[str] = []
    if not registry.skills:
        lines.append("No skills found. Add one as .claude/skills/<name>/SKILL.md (or .catui/skills/).")
    width = max((len(n) for n in registry.skills), default=0)
    for name, skill in sorted(registry.skills.items()):
        hidden = " (not offered to the model)" if skill.disable_model_invocation else ""
        kind = " (command)" if skill.kind == "command" else ""
        lines.append(f"{name.ljust(width)}  [{SOURCE_LABELS[skill.source]}]  {skill.description}{kind}{hidden}")
    if registry.failed_files:
        lines += ["", "Failed to load:"]
        lines += [f"  {f.path}: {f.error}" for f in registry.failed_files]
    if registry.warnings or notes:
        lines += ["", "Warnings:"]
        lines += [f"  {w}" for w in registry.warnings]
        lines += [f"  {n}" for n in notes]
    return "\n".join(lines)


def format_skill(skill: SkillDefinition) -> str:
    """The fields of one skill, then the text the Skill tool sends (``$ARGUMENTS`` left as written)."""
    rows = [
        ("Name", skill.name),
        ("Description", skill.description),
        ("Source", SOURCE_LABELS[skill.source]),
        ("File", skill.path),
        ("Allowed tools", ", ".join(skill.allowed_tools) or None),
        ("Argument hint", skill.argument_hint),
        ("Model", skill.model),
        ("Model may invoke", "no" if skill.disable_model_invocation else "yes"),
    ]
    lines = [f"{label}: {value}" for label, value in rows if value]
    if skill.kind == "command":  # a command's body is expanded per call (docs/commands.md): shown as written
        return "\n".join([*lines, "Kind: custom command (/" + skill.name + " args)", "", skill.body.rstrip("\n")])
    lines += ["", f"Base directory for this skill: {skill.base_dir}", "", skill.body]
    return "\n".join(lines)
