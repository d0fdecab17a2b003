"""``catui agents``: list, show and validate agent definitions.

    catui agents [list] [--json]     N active agents, grouped by source; failed files and reasons
    catui agents show NAME           every resolved field, the source file, the final tool list
    catui agents validate [PATH...]  check files or folders (default: everything catui loads); exit 1 on failure

The registry and what ``list`` needs are imported at the top; the Markdown, JSON and plugin
loaders (``validate``) and the tool registry (``show``) only when those commands run.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.agents.known_tools import CLAUDE_CODE_MAIN_TOOL_NAMES, unknown_tool_names
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.registry import FLAG_ORIGIN, SDK_ORIGIN, AgentRegistry, load_agent_registry
from catui.agents.scan import scan_markdown_files
from catui.agents.tool_lists import tool_base_name
from catui.config.settings import load_settings
from catui.errors import CatuiError
from catui.models.resolve import resolve_model
from catui.skills.model import SKILL_FILE
from catui.subagents.models import SUBAGENT_MODEL_ENV

# Group headings, highest precedence first (the order `catui agents` prints them).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Flag agents", ("flagSettings", "sdk")),
    ("Project agents", ("projectSettings",)),
    ("User agents", ("userSettings",)),
    ("Plugin agents", ("plugin",)),
    ("Built-in agents", ("built-in",)),
)
SOURCE_LABELS = {
    "flagSettings": "--agents",
    "sdk": "SDK",
    "projectSettings": "project",
    "userSettings": "user",
    "plugin": "plugin",
    "built-in": "built-in",
}
# Observed: no sub-agent receives these (sub-agents cannot nest, ask the user, or manage tasks).
NEVER_GIVEN_TO_CHILDREN = frozenset(
    {"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop"}
)


def _source_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options that add sources the way a session would (``--plugin-dir``, ``--agents``)."""
    func = click.option("--agents", "agents_json", help="Extra agents as JSON, as `catui --agents` takes.")(
        func
    )
    func = click.option("--plugin-dir", "plugin_dirs", multiple=True, help="Also load this plugin folder.")(
        func
    )
    return func


def _parse_agents_json(agents_json: str | None) -> dict[str, Any] | None:
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
    entries = settings.merged.get("plugins") or []
    paths: list[str] = []
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, str):
                paths.append(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                paths.append(entry["path"])
    return paths, []


def _load_registry(plugin_dirs: Sequence[str], agents_json: str | None) -> tuple[AgentRegistry, list[str]]:
    cwd = Path.cwd()
    settings_plugins, notes = settings_plugin_dirs(cwd)
    registry = load_agent_registry(
        cwd,
        plugin_dirs=[*plugin_dirs, *settings_plugins],
        flag_agents=_parse_agents_json(agents_json),
        interactive=True,  # list what an interactive session offers (catui-guide included)
    )
    return registry, notes


@click.group(
    name="agents",
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--json", "as_json", is_flag=True, help="With no subcommand: list as JSON.")
@_source_options
@click.pass_context
def command(
    ctx: click.Context, as_json: bool = False, plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """List, show and validate agent definitions (built-in, plugin, user, project, --agents)."""
    if ctx.invoked_subcommand is None:
        # `catui agents --json` is `catui agents list --json`, as people type it.
        ctx.invoke(list_command, as_json=as_json, plugin_dirs=plugin_dirs, agents_json=agents_json)


@command.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print {active, all, failed_files, warnings} as JSON.")
@_source_options
def list_command(
    as_json: bool = False, plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """Active agents grouped by source, shadowed definitions, and files that failed to load."""
    registry, notes = _load_registry(plugin_dirs, agents_json)
    if as_json:
        click.echo(json.dumps(registry.to_json(), indent=2, ensure_ascii=False))
        return
    click.echo(format_listing(registry, notes))


def format_listing(registry: AgentRegistry, notes: Sequence[str] = ()) -> str:
    """The text of ``catui agents list``."""
    count = len(registry.active)
    lines = [f"{count} active agent{'s' if count != 1 else ''}"]
    for heading, sources in GROUPS:
        members = [a for a in registry.all if a.source in sources]
        if not members:
            continue
        lines.append("")
        lines.append(f"{heading}:")
        for agent in members:
            line = f"  {agent.agent_type} · {agent.model_display}"
            winner = registry.shadowed_by(agent)
            if winner is not None:
                line += f"  (shadowed by {_describe_origin(winner, registry)})"
            lines.append(line)
    if registry.failed_files:
        lines.append("")
        lines.append(f"Failed to load ({len(registry.failed_files)}):")
        lines.extend(_failed_lines(registry.failed_files))
    if registry.warnings:
        lines.append("")
        noun = "warning" if len(registry.warnings) == 1 else "warnings"
        lines.append(f"{len(registry.warnings)} {noun}; run `catui agents validate` to see them.")
    for note in notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines)


def _describe_origin(agent: AgentDefinition, registry: AgentRegistry) -> str:
    """``project: /path/x.md``, or just ``--agents`` when the label says it all."""
    label = SOURCE_LABELS.get(agent.source, agent.source)
    origin = registry.origin(agent)
    return label if origin in (FLAG_ORIGIN, SDK_ORIGIN, "built-in") else f"{label}: {origin}"


def _failed_lines(failed: Sequence[FailedFile]) -> list[str]:
    lines: list[str] = []
    for item in failed:
        lines.append(f"  {item.path}")
        lines.append(f"    {item.error}")
    return lines


# -- show ------------------------------------------------------------------------------------------


def main_tool_names() -> list[str]:
    """The main agent's tool names: catui's registry when it imports, else Claude Code's observed list."""
    try:
        # lazy: every built-in tool with its pydantic input model (~100 ms); only `show` needs them
        from catui.tools.registry import builtin_tools

        names = sorted({tool.name for tool in builtin_tools(interactive=True)} | {"Agent"})
        if names:
            return names
    except Exception:  # any failure of the optional registry falls back to the static list
        pass
    return list(CLAUDE_CODE_MAIN_TOOL_NAMES)


def final_tool_list(agent: AgentDefinition, available: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tools the agent would get as a sub-agent, entries of its lists that match no available tool).

    Mirrors the run-time filter by name: start from the main agent's tools minus those no
    sub-agent receives, keep the allow-list (``*``/absent = all), then remove the deny-list.
    MCP entries are kept as written; they are matched once servers connect.
    """
    def base(entry: str) -> str:
        name = tool_base_name(entry)
        return "Agent" if name == "Task" else name

    pool = [name for name in available if name not in NEVER_GIVEN_TO_CHILDREN]
    unmatched: list[str] = []
    if agent.allows_all_tools:
        chosen = list(pool)
    else:
        chosen = []
        for entry in agent.tools or []:
            name = base(entry)
            if name.startswith("mcp__"):
                chosen.append(entry)
            elif name in pool:
                if name not in chosen:
                    chosen.append(name)
            else:
                unmatched.append(entry)
    denied = {base(entry) for entry in agent.disallowed_tools or []}
    for entry in agent.disallowed_tools or []:
        name = base(entry)
        if name not in available and not name.startswith("mcp__"):
            unmatched.append(entry)
    return [name for name in chosen if base(name) not in denied], unmatched


@command.command(name="show")
@click.argument("name")
@_source_options
def show_command(name: str, plugin_dirs: Sequence[str] = (), agents_json: str | None = None) -> None:
    """Every resolved field of agent NAME, its source file and its final tool list."""
    registry, _ = _load_registry(plugin_dirs, agents_json)
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
    try:
        settings: Mapping[str, Any] = load_settings(Path.cwd()).merged
    except CatuiError:
        settings = {}  # the provider line then uses the built-in aliases; the agent is shown all the same
    extra = settings.get("env")
    env = {**os.environ, **({str(k): str(v) for k, v in extra.items()} if isinstance(extra, Mapping) else {})}
    click.echo(format_agent(agent, registry, settings, env))


PROVIDER_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL",
    "openai": "OPENAI_API_KEY; OPENAI_BASE_URL",
}


def provider_text(model: str | None, settings: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Which provider serves the agent's model, the concrete id, and the variables that configure it."""
    spec = (model or "").strip()
    if not spec or spec == "inherit":
        return "the parent's (the model is inherited)"
    if any(env.get(name, "").strip() for name in SUBAGENT_MODEL_ENV):
        override = next(name for name in SUBAGENT_MODEL_ENV if env.get(name, "").strip())
        note = f"; {override} is set and overrides it at run time"
    else:
        note = ""
    try:
        resolved = resolve_model(spec, settings, env)
    except CatuiError as exc:
        return f"none: {exc}"
    variables = PROVIDER_VARIABLES.get(resolved.provider)
    where = f"; configured by {variables}" if variables else ""
    return f"{resolved.provider} ({resolved.model_id}{where}){note}"


def format_agent(
    agent: AgentDefinition, registry: AgentRegistry, settings: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The text of ``catui agents show`` (``settings``/``env`` resolve the model's aliases and provider)."""
    rows: list[tuple[str, str]] = [
        ("Name", agent.agent_type),
        ("Source", SOURCE_LABELS.get(agent.source, agent.source) + f" ({agent.source})"),
        ("File", registry.origin(agent)),
    ]
    if agent.aliases:
        rows.append(("Aliases", ", ".join(agent.aliases)))
    if agent.plugin_name:
        rows.append(("Plugin", agent.plugin_name))
    rows.append(("Model", agent.model_display))
    rows.append(("Provider", provider_text(agent.model, settings or {}, env if env is not None else os.environ)))
    declared = "all (*)" if agent.allows_all_tools else (", ".join(agent.tools or []) or "none ([])")
    rows.append(("Tools", declared))
    if agent.disallowed_tools is not None:
        rows.append(("Disallowed tools", ", ".join(agent.disallowed_tools) or "none"))
    final, unmatched = final_tool_list(agent, main_tool_names())
    rows.append(("Final tools", ", ".join(final) if final else "none"))
    if unmatched:
        rows.append(("Unavailable", ", ".join(unmatched) + " (no such tool here; ignored)"))
    optional: list[tuple[str, Any]] = [
        ("Effort", agent.effort),
        ("Permission mode", agent.permission_mode),
        ("Isolation", agent.isolation),
        ("Background", agent.background),
        ("Max turns", agent.max_turns),
        ("Memory", agent.memory),
        ("Skills", ", ".join(agent.skills) if agent.skills else None),
        ("MCP servers", _mcp_names(agent.mcp_servers)),
        (
            "Required MCP servers",
            ", ".join(agent.required_mcp_servers) if agent.required_mcp_servers else None,
        ),
        ("Hooks", ", ".join(agent.hooks) if agent.hooks else None),
        ("Color", agent.color),
        ("Forks parent context", agent.forks_parent_context),
        ("Omit CLAUDE.md", True if agent.omit_claude_md else None),
        ("Append system prompt", agent.append_system_prompt),
        ("Initial prompt", agent.initial_prompt),
        ("Max budget", f"${agent.max_budget_usd:g} (maxBudgetUsd)" if agent.max_budget_usd is not None else None),
        ("Max tokens", agent.max_tokens),
        ("Timeout", f"{agent.timeout:g}s" if agent.timeout is not None else None),
        ("Stall timeout", f"{agent.stall_timeout:g}s" if agent.stall_timeout is not None else None),
        ("Output schema", json.dumps(agent.output_schema) if agent.output_schema is not None else None),
        ("Ignored fields", ", ".join(sorted(agent.extra_fields)) if agent.extra_fields else None),
    ]
    rows.extend((label, str(value)) for label, value in optional if value is not None)
    shadowed = [a for a in registry.all if a.agent_type == agent.agent_type and a is not agent]
    for other in shadowed:
        rows.append(("Shadows", _describe_origin(other, registry)))
    width = max(len(label) for label, _ in rows) + 1
    lines = [f"{(label + ':').ljust(width)} {value}" for label, value in rows]
    lines += ["", "When to use:", _indent(agent.get_when_to_use())]
    context = SystemPromptContext(active_agents=list(registry.active))
    lines += ["", "System prompt:", _indent(agent.get_system_prompt(context) or "(empty)")]
    origin = registry.origin(agent)
    # A file defines one agent; an option or manifest defines several, named in each message.
    related = [
        w
        for w in registry.warnings
        if w.path == origin and (Path(origin).suffix == ".md" or f"'{agent.agent_type}'" in w.message)
    ]
    if related and not agent.is_built_in:
        lines += ["", "Warnings:"] + [f"  {w.message}" for w in related]
    return "\n".join(lines)


def _mcp_names(servers: list[Any] | None) -> str | None:
    if not servers:
        return None
    return ", ".join(s if isinstance(s, str) else ", ".join(map(str, s)) for s in servers)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())


# -- validate --------------------------------------------------------------------------------------


@command.command(name="validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_source_options
def validate_command(
    paths: tuple[Path, ...], plugin_dirs: Sequence[str] = (), agents_json: str | None = None
) -> None:
    """Check agent files or folders (plugin folders too); with no PATH, everything catui loads.

    Prints each agent that loads, each file that fails with its reason, and warnings.
    Exits with status 1 when any file fails.
    """
    if not paths:
        registry, notes = _load_registry(plugin_dirs, agents_json)
        custom = [a for a in registry.all if not a.is_built_in]
        report = ValidationReport()
        for agent in custom:
            report.ok.append((registry.origin(agent), agent.agent_type))
        report.failed.extend(registry.failed_files)
        report.warnings.extend(registry.warnings)
        report.notes.extend(notes)
    else:
        report = validate_paths(paths)
    click.echo(report.render())
    sys.exit(1 if report.failed else 0)


class ValidationReport:
    """What ``validate`` found: loaded agents (origin, name), failures, warnings."""

    def __init__(self) -> None:
        self.ok: list[tuple[str, str]] = []
        self.failed: list[FailedFile] = []
        self.warnings: list[AgentWarning] = []
        self.notes: list[str] = []

    def render(self) -> str:
        lines: list[str] = []
        for origin, name in self.ok:
            lines.append(f"ok      {name}  ({origin})")
        for item in self.failed:
            lines.append(f"FAILED  {item.path}")
            lines.append(f"        {item.error}")
        for warning in self.warnings:
            lines.append(f"warning {warning}")
        for note in self.notes:
            lines.append(f"note    {note}")
        failed = len(self.failed)
        summary = f"{len(self.ok)} agent{'s' if len(self.ok) != 1 else ''} valid, {failed} failed"
        if self.warnings:
            summary += f", {len(self.warnings)} warning{'s' if len(self.warnings) != 1 else ''}"
        lines.append(summary)
        return "\n".join(lines)


def validate_paths(paths: Sequence[Path]) -> ValidationReport:
    """Validate files and folders given on the command line (a folder with a plugin manifest is a plugin)."""
    # lazy: the plugin loader (~16 ms with the Markdown loader) only serves `validate`
    from catui.agents.plugins import MANIFEST_PATH, load_plugin

    report = ValidationReport()
    for path in paths:
        if not path.exists():
            report.failed.append(FailedFile(str(path), "no such file or folder"))
        elif path.is_dir():
            # A folder of several plugins (a marketplace checkout) holds one manifest per plugin: each plugin
            # is validated as a plugin (its name prefix, its field rules), the rest as plain agent files.
            plugin_roots = sorted(m.parent.parent for m in path.rglob(MANIFEST_PATH.as_posix()) if m.is_file())
            for root in plugin_roots:
                plugin = load_plugin(root)
                report.ok.extend((f"{plugin.root} (plugin)", a.agent_type) for a in plugin.agents)
                report.failed.extend(plugin.failed_files)
                report.warnings.extend(plugin.warnings)
            if path in plugin_roots:
                continue
            scan = scan_markdown_files(path)
            report.warnings.extend(scan.warnings)
            for scanned in scan.files:
                file = Path(scanned.path)
                if file.name == SKILL_FILE:
                    continue  # a skill's instructions (catui skills list checks those), not an agent
                if any(file.is_relative_to(root) for root in plugin_roots):
                    continue  # validated with its plugin above
                _validate_file(file, report, explicit=False)
        elif path.suffix == ".json":
            _validate_json_file(path, report)
        else:
            _validate_file(path, report, explicit=True)
    return report


def _validate_file(path: Path, report: ValidationReport, *, explicit: bool) -> None:
    # lazy: the Markdown loader (~15 ms); `catui agents list` loads it only when agent files exist
    from catui.agents.markdown import AgentFileError, load_markdown_agent, read_agent_file

    try:
        text = read_agent_file(path)
    except AgentFileError as exc:
        report.failed.append(FailedFile(str(path), str(exc)))
        return
    result = load_markdown_agent(text, path=str(path), source="projectSettings", base_dir=str(path.parent))
    if result.not_an_agent and explicit:
        report.failed.append(
            FailedFile(
                str(path), "not an agent definition: no '---' frontmatter block at the top of the file"
            )
        )
        return
    report.warnings.extend(result.warnings)
    if result.definition is not None:
        agent = result.definition
        report.ok.append((str(path), agent.agent_type))
        for field_name, entries in (("tools", agent.tools), ("disallowedTools", agent.disallowed_tools)):
            unknown = unknown_tool_names(entries)
            if unknown:
                report.warnings.append(
                    AgentWarning(str(path), f"{field_name} names unknown tools: {', '.join(unknown)} (kept)")
                )
    elif result.error is not None:
        report.failed.append(FailedFile(str(path), result.error))


def _validate_json_file(path: Path, report: ValidationReport) -> None:
    # lazy: only `validate` of a .json file needs the JSON reader (and the Markdown loader under it, ~15 ms)
    from catui.agents.json_agents import agents_from_json_mapping

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        report.failed.append(FailedFile(str(path), f"cannot read the file: {exc}"))
        return
    except json.JSONDecodeError as exc:
        report.failed.append(
            FailedFile(str(path), f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")
        )
        return
    if isinstance(data, dict) and isinstance(data.get("agents"), dict):
        data = data["agents"]
    if not isinstance(data, dict):
        report.failed.append(FailedFile(str(path), 'expected {"name": {"description": ..., "prompt": ...}}'))
        return
    agents, failed, warnings = agents_from_json_mapping(data, source="flagSettings", origin=str(path))
    report.ok.extend((str(path), a.agent_type) for a in agents)
    report.failed.extend(failed)
    report.warnings.extend(warnings)
