"""The agent registry: every definition catui knows, which ones win, and what failed to load.

Sources, lowest precedence first (a later definition of the same name wins):

1. built-in agents (``agents/builtin.py``)
2. plugins (``plugin_dirs``: ``--plugin-dir`` and the settings' ``plugins`` paths)
3. user: ``~/.claude/agents/`` then ``~/.catui/agents/`` (``$CATUI_HOME/agents``)
4. project: for each folder from the project root down to the working directory,
   ``.claude/agents/`` then ``.catui/agents/`` (so catui's folder and the nearer folder win)
5. ``--agents`` JSON (flagSettings), then SDK ``agents=`` (treated like flagSettings)

``active`` follows Claude Code's map semantics: a name keeps the position where
it first appeared (built-ins first, in their order; then custom agents in load
order) and takes the value of its last definition. Folders are scanned
recursively; ``.md`` files are loaded in sorted path order.

The registry remembers the modification time of every folder and file it
looked at. ``reload_if_changed()`` compares them with the disk (one ``stat``
each) and reloads only when something changed; ``version`` then increases, so
the Agent tool knows to rebuild its description.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.agents.builtin import builtin_agents, guide_enabled
from catui.agents.definition import AgentDefinition
from catui.agents.field_values import AgentSource
from catui.agents.known_tools import known_tool_names, unknown_tool_names
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.scan import Fingerprint, scan_markdown_files
from catui.paths import project_config_dirs, user_config_dirs

# Precedence order of sources (index = rank); also the order groups are listed in, reversed.
SOURCE_ORDER: tuple[AgentSource, ...] = (
    "built-in",
    "plugin",
    "userSettings",
    "projectSettings",
    "flagSettings",
    "sdk",
)
FLAG_ORIGIN = "--agents"
SDK_ORIGIN = "agents= (SDK options)"


@dataclass(frozen=True)
class RegistryOptions:
    """Where a registry loads from; kept so that a reload reads the same places."""

    cwd: Path
    home: Path | None = None
    plugin_dirs: tuple[str, ...] = ()
    flag_agents: Mapping[str, Any] | None = None
    sdk_agents: Mapping[str, Any] | None = None
    include_user: bool = True
    include_project: bool = True
    interactive: bool = False
    search_tools: bool = True
    # Called at every (re)load for the settings' plugin folders, so a settings change is picked up.
    settings_plugin_dirs: Callable[[], Sequence[str]] | None = None
    # Extra files (settings files) whose change makes reload_if_changed() reload.
    watch_files: tuple[str, ...] = ()


# What parsing one file produced, keyed by path and valid while (source, mtime_ns, size) match.
_FileCacheKey = tuple[str, int, int]


@dataclass
class _LoadState:
    # Parsed results of the previous load, reused for files that did not change.
    previous_files: dict[str, tuple[_FileCacheKey, Any]] = field(default_factory=dict)
    files: dict[str, tuple[_FileCacheKey, Any]] = field(default_factory=dict)
    agents: list[AgentDefinition] = field(default_factory=list)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)
    fingerprint: Fingerprint = field(default_factory=Fingerprint)
    # Where each custom agent came from (its file, or the option/manifest that defined it).
    origins: dict[int, str] = field(default_factory=dict)


def user_agent_dirs(home: Path | None) -> list[Path]:
    """``~/.claude/agents`` (or ``$CLAUDE_CONFIG_DIR/agents``) then the catui home's ``agents``.

    ``home`` replaces ``~`` for both (tests); see :func:`catui.paths.user_config_dirs`.
    """
    claude_dir, catui_dir = user_config_dirs(home)
    return [claude_dir / "agents", catui_dir / "agents"]


def project_agent_dirs(cwd: Path) -> list[Path]:
    """``.claude/agents`` and ``.catui/agents`` of every folder from the project root down to ``cwd``."""
    return project_config_dirs(cwd, "agents")


class AgentRegistry:
    """Loaded agent definitions: ``active`` (the winners), ``all``, ``failed_files``, ``warnings``."""

    def __init__(self, options: RegistryOptions) -> None:
        self.options = options
        self.version = 0
        self.active: list[AgentDefinition] = []
        self.all: list[AgentDefinition] = []
        self.failed_files: list[FailedFile] = []
        self.warnings: list[AgentWarning] = []
        self._origins: dict[int, str] = {}
        self._by_name: dict[str, AgentDefinition] = {}
        self._fingerprint = Fingerprint()
        self._file_cache: dict[str, tuple[_FileCacheKey, Any]] = {}
        self._load()

    # -- Claude Code's names for the three lists -------------------------------------------------
    @property
    def active_agents(self) -> list[AgentDefinition]:
        return self.active

    @property
    def all_agents(self) -> list[AgentDefinition]:
        return self.all

    # -- lookup ------------------------------------------------------------------------------------
    def get(self, name: str) -> AgentDefinition | None:
        """The active agent called ``name`` (or one of its aliases, e.g. ``claude-code-guide``)."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """Active agent types in order (the "Available agents" list)."""
        return [agent.agent_type for agent in self.active]

    def origin(self, agent: AgentDefinition) -> str:
        """The file (or option, or manifest) that defined ``agent``; ``built-in`` for built-ins."""
        return self._origins.get(id(agent), agent.base_dir or agent.source)

    def is_active(self, agent: AgentDefinition) -> bool:
        return self._by_name.get(agent.agent_type) is agent

    def shadowed_by(self, agent: AgentDefinition) -> AgentDefinition | None:
        """The active definition that overrides ``agent``, or None when ``agent`` is itself active."""
        winner = self._by_name.get(agent.agent_type)
        return None if winner is agent else winner

    # -- reload ------------------------------------------------------------------------------------
    def reload_if_changed(self) -> bool:
        """Reload when a scanned folder, definition file or plugin manifest changed; True if it did."""
        if not self._fingerprint.changed():
            return False
        self.reload()
        return True

    def reload(self) -> None:
        """Load everything again now and bump ``version``."""
        self._load()
        self.version += 1

    # -- output ------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A stable machine-readable shape: ``{active, all, failed_files, warnings}``."""
        return {
            "active": [agent_summary(a, self) for a in self.active],
            "all": [agent_summary(a, self) for a in self.all],
            "failed_files": [f.to_dict() for f in self.failed_files],
            "warnings": [w.to_dict() for w in self.warnings],
        }

    # -- loading -----------------------------------------------------------------------------------
    def _load(self) -> None:
        # A load allocates thousands of objects that all survive (definitions, their dicts and lists),
        # so the cyclic collector's passes during it find nothing and cost ~5% of a cold load. Pause it;
        # it is re-enabled only if it was on (an application that disabled it keeps it off).
        collector_was_on = gc.isenabled()
        gc.disable()
        try:
            self._load_sources()
        finally:
            if collector_was_on:
                gc.enable()

    def _load_sources(self) -> None:
        opts = self.options
        state = _LoadState(previous_files=self._file_cache)
        include_guide = guide_enabled(interactive=opts.interactive)
        state.agents.extend(builtin_agents(include_guide=include_guide, search_tools=opts.search_tools))
        for watched in opts.watch_files:
            state.fingerprint.record(watched)
        plugin_dirs = list(opts.plugin_dirs)
        if opts.settings_plugin_dirs is not None:
            try:
                plugin_dirs.extend(opts.settings_plugin_dirs())
            except Exception as exc:  # a broken settings file must not hide every other agent
                state.warnings.append(AgentWarning(None, f"plugin folders from settings not read: {exc}"))
        _load_plugins(plugin_dirs, opts.cwd, state)
        user_dirs = user_agent_dirs(opts.home) if opts.include_user else []
        if opts.include_user:
            _load_folders(user_dirs, "userSettings", state)
        if opts.include_project:
            user_resolved = {_resolve(d) for d in user_dirs}
            project_dirs = [d for d in project_agent_dirs(opts.cwd) if _resolve(d) not in user_resolved]
            _load_folders(project_dirs, "projectSettings", state)
        if opts.flag_agents:
            _load_mapping(opts.flag_agents, "flagSettings", FLAG_ORIGIN, state)
        if opts.sdk_agents:
            _load_mapping(opts.sdk_agents, "sdk", SDK_ORIGIN, state)
        _report_duplicates(state)
        _report_unknown_tools(state)

        by_name: dict[str, AgentDefinition] = {}
        for agent in state.agents:  # already in precedence order: last definition wins
            by_name[agent.agent_type] = agent
        active = list(by_name.values())
        lookup = dict(by_name)
        for agent in active:
            for alias in agent.aliases:
                lookup.setdefault(alias, agent)
        self.all = state.agents
        self.active = active
        self.failed_files = state.failed_files
        self.warnings = state.warnings
        self._origins = state.origins
        self._by_name = lookup
        self._fingerprint = state.fingerprint
        self._file_cache = state.files


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _load_plugins(plugin_dirs: Sequence[str], cwd: Path, state: _LoadState) -> None:
    if not plugin_dirs:
        return  # the usual case: skip importing the plugin loader (and YAML) at start-up
    from catui.agents.plugins import load_plugin

    seen: set[Path] = set()
    for raw in plugin_dirs:
        folder = Path(raw).expanduser()
        if not folder.is_absolute():
            folder = cwd / folder
        key = _resolve(folder)
        if key in seen:
            continue
        seen.add(key)
        result = load_plugin(folder, state.fingerprint)
        for agent in result.agents:
            state.agents.append(agent)
            state.origins[id(agent)] = result.origins.get(id(agent), str(result.root))
        state.failed_files.extend(result.failed_files)
        state.warnings.extend(result.warnings)


def _load_folders(folders: Iterable[Path], source: AgentSource, state: _LoadState) -> None:
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
        keyed: list[tuple[str, _FileCacheKey | None, Any]] = []
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
            key: _FileCacheKey = (source, mtime_ns, size)
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
                add_agent(definition)
                origins[id(definition)] = path
            elif result.error is not None:
                state.failed_files.append(FailedFile(path, result.error))


def _load_mapping(mapping: Mapping[str, Any], source: AgentSource, origin: str, state: _LoadState) -> None:
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


def _report_duplicates(state: _LoadState) -> None:
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


def _report_unknown_tools(state: _LoadState) -> None:
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


def agent_summary(agent: AgentDefinition, registry: AgentRegistry | None = None) -> dict[str, Any]:
    """The JSON shape of one agent in ``catui agents --json``."""
    summary: dict[str, Any] = {
        "name": agent.agent_type,
        "source": agent.source,
        "model": agent.model_display,
        "tools": agent.tools,
        "disallowedTools": agent.disallowed_tools,
        "description": agent.description,
        "path": registry.origin(agent) if registry else (agent.base_dir or agent.source),
    }
    if registry is not None:
        winner = registry.shadowed_by(agent)
        summary["active"] = winner is None
        summary["shadowedBy"] = registry.origin(winner) if winner is not None else None
    return summary


def load_agent_registry(
    cwd: Path | str,
    *,
    home: Path | str | None = None,
    plugin_dirs: Sequence[str | os.PathLike[str]] = (),
    flag_agents: Mapping[str, Any] | None = None,
    sdk_agents: Mapping[str, Any] | None = None,
    include_user: bool = True,
    include_project: bool = True,
    interactive: bool = False,
    search_tools: bool = True,
    settings_plugin_dirs: Callable[[], Sequence[str]] | None = None,
    watch_files: Sequence[str | os.PathLike[str]] = (),
) -> AgentRegistry:
    """Load every agent source for a session in ``cwd``. Never raises for a user's bad file.

    ``home`` replaces the user's home folder (tests); ``interactive`` activates catui-guide;
    ``search_tools`` False gives the guide its Bash-based tool set (see ``agents/builtin.py``).
    ``settings_plugin_dirs`` is called at every (re)load for the plugin folders named in settings, and
    a change to any of ``watch_files`` (the settings files) triggers a reload, so editing settings
    takes effect before the next model turn.
    """
    options = RegistryOptions(
        cwd=Path(cwd),
        home=Path(home) if home is not None else None,
        plugin_dirs=tuple(str(p) for p in plugin_dirs),
        flag_agents=flag_agents,
        sdk_agents=sdk_agents,
        include_user=include_user,
        include_project=include_project,
        interactive=interactive,
        search_tools=search_tools,
        settings_plugin_dirs=settings_plugin_dirs,
        watch_files=tuple(str(p) for p in watch_files),
    )
    return AgentRegistry(options)
