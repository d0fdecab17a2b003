"""Loading each kind of agent source into one LoadState: plugins, folders of ``.md`` files, mappings.

The registry (registry.py) calls these in precedence order and then picks the
winners; the checks across sources (duplicate names, unknown tools) run last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition
from catui.agents.field_values import AgentSource
from catui.agents.known_tools import known_tool_names, unknown_tool_names
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.scan import Fingerprint, scan_markdown_files

# What parsing one file produced, keyed by path and valid while (source, mtime_ns, size) match.
FileCacheKey = tuple[str, int, int]


@dataclass
class LoadState:
    """What one (re)load gathers, source by source, before the registry takes it over."""

    # Parsed results of the previous load, reused for files that did not change.
    previous_files: dict[str, tuple[FileCacheKey, Any]] = field(default_factory=dict)
    files: dict[str, tuple[FileCacheKey, Any]] = field(default_factory=dict)
    agents: list[AgentDefinition] = field(default_factory=list)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)
    fingerprint: Fingerprint = field(default_factory=Fingerprint)
    # Where each custom agent came from (its file, or the option/manifest that defined it).
    origins: dict[int, str] = field(default_factory=dict)


def resolved(path: Path) -> Path:
    """``path`` with symbolic links resolved, or as given when that fails (to compare folders)."""
    try:
        return path.resolve()
    except OSError:
        return path


def load_plugins(plugin_dirs: Sequence[str], cwd: Path, state: LoadState) -> None:
    """The agents of each plugin folder (relative to ``cwd``; a folder named twice loads once)."""
    if not plugin_dirs:
        return  # the usual case: skip importing the plugin loader (and YAML) at start-up
    from catui.agents.plugins import load_plugin

    seen: set[Path] = set()
    for raw in plugin_dirs:
        folder = Path(raw).expanduser()
        if not folder.is_absolute():
            folder = cwd / folder
        key = resolved(folder)
        if key in seen:
            continue
        seen.add(key)
        result = load_plugin(folder, state.fingerprint)
        for agent in result.agents:
            state.agents.append(agent)
            state.origins[id(agent)] = result.origins.get(id(agent), str(result.root))
        state.failed_files.extend(result.failed_files)
        state.warnings.extend(result.warnings)


def _confine_project_cwd(definition: AgentDefinition, folder: Path, path: str, state: LoadState) -> AgentDefinition:
    """A project agent whose ``cwd`` leaves the project loses that field, with a warning naming the file."""
    from catui.agents.project_limits import cwd_refusal, outside_project, project_of_agent_folder

    project = project_of_agent_folder(folder)
    assert definition.cwd is not None
    if not outside_project(definition.cwd, project):
        return definition
    state.warnings.append(AgentWarning(None, cwd_refusal(definition.cwd, project, path), at_start=True))
    return definition.model_copy(update={"cwd": None})


def load_folders(folders: Iterable[Path], source: AgentSource, state: LoadState) -> None:
    """The ``.md`` agent files under each folder, reusing the previous load's result for unchanged files."""
    fingerprint = state.fingerprint
    for folder in folders:
        scan = scan_markdown_files(folder, fingerprint, stat_files=False)
        state.warnings.extend(scan.warnings)
        if not scan.files:
            continue
        # Imported here, not above: with no agent files, start-up never loads the parser (and YAML).
        from catui.agents.agent_file_io import AgentFileError, stat_and_read_agent_file
        from catui.agents.markdown import load_markdown_agent_batch

        previous = state.previous_files.get
        files, origins, add_agent = state.files, state.origins, state.agents.append
        # Files unchanged since the last load keep their result; the others are read first and then
        # parsed as one batch (load_markdown_agent_batch works stage by stage, which is faster).
        keyed: list[tuple[str, FileCacheKey | None, Any]] = []
        to_parse: list[tuple[str, bytes]] = []
        for scanned in scan.files:
            path = scanned.path
            cached = previous(path)
            try:
                mtime_ns, size, data = stat_and_read_agent_file(
                    path, cached[0][1:] if cached is not None and cached[0][0] == source else None
                )
            except AgentFileError as exc:  # unreadable or too large
                fingerprint.record(path)
                keyed.append((path, None, exc))
                continue
            fingerprint.entries[path] = (mtime_ns, size)
            key: FileCacheKey = (source, mtime_ns, size)
            if data is None:  # unchanged since the last load: no need to read or parse it again
                keyed.append((path, key, cached[1]))  # type: ignore[index]  # data is None only with a cache hit
                continue
            to_parse.append((path, data))
            keyed.append((path, key, None))
        parsed = iter(load_markdown_agent_batch(to_parse, source=source, base_dir=str(folder)))
        del to_parse  # the files' bytes: most of the memory a load needs
        for path, file_key, result in keyed:
            if file_key is None:  # the file could not be read; result is the AgentFileError saying why
                state.failed_files.append(FailedFile(path, str(result)))
                continue
            if result is None:
                result = next(parsed)
            files[path] = (file_key, result)
            if result.warnings:
                state.warnings.extend(result.warnings)
            definition = result.definition
            if definition is not None:
                if source == "projectSettings" and definition.cwd is not None:
                    definition = _confine_project_cwd(definition, folder, path, state)
                add_agent(definition)
                origins[id(definition)] = path
            elif result.error is not None:
                state.failed_files.append(FailedFile(path, result.error))


def load_mapping(mapping: Mapping[str, Any], source: AgentSource, origin: str, state: LoadState) -> None:
    """Agents given as a mapping of name to fields (``--agents`` JSON, the SDK's ``agents=``)."""
    from catui.agents.json_agents import agents_from_json_mapping

    if not isinstance(mapping, Mapping):
        state.failed_files.append(
            FailedFile(origin, 'must be a JSON object: {"name": {"description": ..., "prompt": ...}}')
        )
        return
    agents, failed, warnings = agents_from_json_mapping(mapping, source=source, origin=origin)
    for agent in agents:
        state.agents.append(agent)
        state.origins[id(agent)] = origin
    state.failed_files.extend(failed)
    state.warnings.extend(warnings)


def report_duplicates(state: LoadState) -> None:
    """Warn about a name defined twice within one scope (the later definition wins)."""
    first_seen: dict[tuple[str, str], str] = {}
    origins = state.origins
    for agent in state.agents:
        source = agent.source
        if source == "built-in":
            continue
        # flagSettings and sdk are one scope for precedence; so are they for duplicate reporting.
        key = ("flagSettings" if source == "sdk" else source, agent.agent_type)
        origin = origins.get(id(agent), source)
        previous = first_seen.get(key)
        if previous is not None and previous != origin:
            state.warnings.append(
                AgentWarning(
                    origin,
                    f"defines '{agent.agent_type}' again (also in {previous}); this later definition wins. "
                    "Rename one of them to keep both",
                )
            )
        first_seen[key] = origin


def report_unknown_tools(state: LoadState) -> None:
    """Warn about tool names in custom agents' lists that no known tool has (they are kept)."""
    known = known_tool_names()
    all_known = known.issuperset
    for agent in state.agents:
        tools, disallowed = agent.tools, agent.disallowed_tools
        # The usual case, answered by one set operation each: every entry is a bare, known tool name.
        if (not tools or all_known(tools)) and (not disallowed or all_known(disallowed)):
            continue
        if agent.source == "built-in":
            continue
        for field_name, entries in (("tools", tools), ("disallowedTools", disallowed)):
            unknown = unknown_tool_names(entries, known)
            if unknown:
                state.warnings.append(
                    AgentWarning(
                        state.origins.get(id(agent), agent.source),
                        f"agent '{agent.agent_type}': its {field_name} list names "
                        + (
                            f"a tool catui does not know: {unknown[0]}. It is kept, but matches nothing unless "
                            "an MCP server or plugin provides it."
                            if len(unknown) == 1
                            else f"tools catui does not know: {', '.join(unknown)}. They are kept, but match "
                            "nothing unless an MCP server or plugin provides them."
                        ),
                    )
                )
