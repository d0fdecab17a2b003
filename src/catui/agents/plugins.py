"""Agents shipped by plugins: a folder with ``.claude-plugin/plugin.json``.

The manifest's ``agents`` entry may be absent (the plugin's ``agents/`` folder
is used), a path, a list of paths (folders or ``.md`` files, relative to the
plugin folder), or an object of inline JSON definitions (spec 15.2). The
default ``agents/`` folder is loaded in every case, each file once.

Plugin agents are loaded the way Claude Code loads them, more leniently than
standalone files: the name is the frontmatter ``name`` or the file name, a
missing description becomes ``Agent from <plugin> plugin``, and the agent type
is ``<plugin>:<sub-folders…>:<name>``. ``permissionMode``, ``hooks`` and
``mcpServers`` are ignored: installing a plugin must not widen permissions or
start programs behind the user's back.

One deliberate difference: an empty plugin agent file is reported as failed,
where Claude Code would register an agent with an empty prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.agents.agent_file_io import AgentFileError, read_agent_file
from catui.agents.definition import AgentDefinition
from catui.agents.definition_builder import build_definition
from catui.agents.field_values import agent_name_problem
from catui.agents.frontmatter import BOM, find_frontmatter, parse_markdown
from catui.agents.json_agents import agents_from_json_mapping
from catui.agents.line_warnings import LineNamingWarner
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.scan import Fingerprint, scan_markdown_files
from catui.config.json_input import JsonInputError, loads_bounded, read_text_file

MANIFEST_PATH = Path(".claude-plugin") / "plugin.json"


@dataclass
class PluginLoadResult:
    """Everything one plugin folder contributed."""

    name: str
    root: Path
    agents: list[AgentDefinition] = field(default_factory=list)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)
    # id(agent) -> the file (or the manifest, for inline JSON agents) that defined it.
    origins: dict[int, str] = field(default_factory=dict)


def placeholder_description(plugin_name: str) -> str:
    return f"Agent from {plugin_name} plugin"


def substitute_plugin_variables(text: str, plugin_root: Path) -> str:
    """``${CLAUDE_PLUGIN_ROOT}`` / ``${CATUI_PLUGIN_ROOT}`` in a plugin agent's prompt → the plugin folder."""
    if "${" not in text:
        return text
    root = str(plugin_root)
    return text.replace("${CLAUDE_PLUGIN_ROOT}", root).replace("${CATUI_PLUGIN_ROOT}", root)


def load_plugin_agent_markdown(
    text: str,
    *,
    path: str,
    plugin_name: str,
    namespace: tuple[str, ...] = (),
    plugin_root: Path | None = None,
) -> tuple[AgentDefinition | None, str | None, list[AgentWarning]]:
    """One plugin agent file → (definition, error, warnings), with Claude Code's plugin-loader fallbacks."""
    warnings: list[AgentWarning] = []

    def raw_frontmatter() -> str:
        found = find_frontmatter(text.removeprefix(BOM))
        return found[0] if found else ""

    warn = LineNamingWarner(path, warnings, raw_frontmatter)
    if not text.strip("\ufeff \t\r\n"):
        return None, "the file is empty; a plugin agent needs at least a prompt", warnings
    parsed = parse_markdown(text)
    data = parsed.frontmatter
    if parsed.status == "no_frontmatter":
        warn("no frontmatter: registered under its file name with a placeholder description")
    elif parsed.status == "yaml_error":
        warn(f"the frontmatter is not valid YAML, so its fields are ignored: {parsed.error}")
    warn.report_ambiguous_hashes(data)
    raw_name = data.get("name")
    base_name = raw_name if isinstance(raw_name, str) and raw_name else Path(path).stem
    problem = agent_name_problem(base_name)
    if problem:
        return None, f"field 'name' {problem}", warnings
    agent_type = ":".join((plugin_name, *namespace, base_name))
    description = _coerce_description(data.get("description"))
    if description is None:
        description = placeholder_description(plugin_name)
    prompt = parsed.body.strip().replace("\r\n", "\n")
    if plugin_root is not None:
        prompt = substitute_plugin_variables(prompt, plugin_root)
    errors: list[str] = []
    definition = build_definition(
        data,
        agent_type=agent_type,
        description=description,
        prompt=prompt,
        source="plugin",
        base_dir=str(plugin_root) if plugin_root else "",
        filename=base_name,
        warn=warn,
        on_error=errors.append,
        plugin_name=plugin_name,
    )
    return definition, (errors[0] if errors else None), warnings


def _coerce_description(value: Any) -> str | None:
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def read_manifest(root: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The plugin's manifest (None when absent) or an error message."""
    manifest_path = root / MANIFEST_PATH
    try:
        text = read_text_file(manifest_path)
        if text is None:
            return None, None
        data = loads_bounded(text)
    except JsonInputError as exc:
        return None, f"the plugin manifest {manifest_path} {exc}"
    except json.JSONDecodeError as exc:
        return (
            None,
            f"the plugin manifest is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
        )
    if not isinstance(data, dict):
        return None, "the plugin manifest must be a JSON object"
    return data, None


def load_plugin(root: Path, fingerprint: Fingerprint | None = None) -> PluginLoadResult:
    """All agents of the plugin in folder ``root``; problems are reported, never raised."""
    root = root.expanduser()
    manifest_file = root / MANIFEST_PATH
    if fingerprint is not None:
        fingerprint.record(str(manifest_file))
        fingerprint.record(str(root))
    result = PluginLoadResult(name=root.name, root=root)
    if not root.is_dir():
        result.failed_files.append(FailedFile(str(root), "plugin folder not found; check the plugin path"))
        return result
    manifest, error = read_manifest(root)
    if error:
        result.failed_files.append(FailedFile(str(manifest_file), error))
        return result
    manifest = manifest or {}
    name = manifest.get("name")
    if isinstance(name, str) and name.strip() and ":" not in name:
        result.name = name.strip()
    elif name is not None:
        result.warnings.append(
            AgentWarning(
                str(manifest_file), f"plugin name {name!r} is not usable; using the folder name '{root.name}'"
            )
        )

    loaded: set[str] = set()
    _load_agent_path(root / "agents", result, loaded, fingerprint, explicit=False)
    entry = manifest.get("agents")
    if entry is None:
        return result
    if isinstance(entry, Mapping):
        agents, failed, warnings = agents_from_json_mapping(
            entry, source="plugin", origin=str(manifest_file), plugin_name=result.name
        )
        result.agents.extend(agents)
        result.origins.update((id(agent), str(manifest_file)) for agent in agents)
        result.failed_files.extend(failed)
        result.warnings.extend(warnings)
        return result
    paths = [entry] if isinstance(entry, str) else entry
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        result.failed_files.append(
            FailedFile(
                str(manifest_file), "'agents' must be a path, a list of paths, or an object of definitions"
            )
        )
        return result
    resolved_root = root.resolve()
    for relative in paths:
        target = (root / relative).resolve()
        if target != resolved_root and resolved_root not in target.parents:
            result.warnings.append(
                AgentWarning(
                    str(manifest_file), f"agents path '{relative}' points outside the plugin folder; skipped"
                )
            )
            continue
        _load_agent_path(target, result, loaded, fingerprint, explicit=True, label=relative)
    return result


def _load_agent_path(
    target: Path,
    result: PluginLoadResult,
    loaded: set[str],
    fingerprint: Fingerprint | None,
    *,
    explicit: bool,
    label: str = "",
) -> None:
    if target.is_dir():
        scan = scan_markdown_files(target, fingerprint)
        result.warnings.extend(scan.warnings)
        for scanned in scan.files:
            _load_file(Path(scanned.path), scanned.relative_parts, result, loaded, scanned.size)
        return
    if fingerprint is not None:
        fingerprint.record(str(target))
    if target.is_file():
        _load_file(target, (), result, loaded, None)
    elif explicit:
        result.failed_files.append(
            FailedFile(str(target), f"listed in the plugin manifest as '{label}' but does not exist")
        )


def _load_file(
    path: Path, namespace: tuple[str, ...], result: PluginLoadResult, loaded: set[str], size: int | None
) -> None:
    key = str(path.resolve())
    if key in loaded:
        return
    loaded.add(key)
    try:
        text = read_agent_file(path, size_hint=size)
    except AgentFileError as exc:
        result.failed_files.append(FailedFile(str(path), str(exc)))
        return
    definition, error, warnings = load_plugin_agent_markdown(
        text, path=str(path), plugin_name=result.name, namespace=namespace, plugin_root=result.root
    )
    result.warnings.extend(warnings)
    if definition is not None:
        result.agents.append(definition)
        result.origins[id(definition)] = str(path)
    else:
        result.failed_files.append(FailedFile(str(path), error or "not a usable agent definition"))


def plugin_paths(settings: Mapping[str, Any]) -> list[str]:
    """The plugin folders the settings' ``plugins`` list names (a path, or an entry with a ``path``)."""
    entries = settings.get("plugins") or []
    paths: list[str] = []
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, str):
                paths.append(entry)
            elif isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
                paths.append(entry["path"])
    return paths
