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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.agents.builtin import builtin_agents, guide_enabled
from catui.agents.definition import AgentDefinition
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.scan import Fingerprint
from catui.agents.source_loaders import (
    FileCacheKey,
    LoadState,
    load_folders,
    load_mapping,
    load_plugins,
    report_duplicates,
    report_unknown_tools,
    resolved,
)
from catui.paths import project_config_dirs, user_config_dirs

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
    current_contract: bool = False
    """The current Claude Code contract (catui.config.compat): the ``claude`` type, Explore on the parent's model,
    and the active list sorted by name case-insensitively."""
    # Called at every (re)load for the settings' plugin folders, so a settings change is picked up.
    settings_plugin_dirs: Callable[[], Sequence[str]] | None = None
    # Extra files (settings files) whose change makes reload_if_changed() reload.
    watch_files: tuple[str, ...] = ()


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
        self._file_cache: dict[str, tuple[FileCacheKey, Any]] = {}
        self._load()

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
        state = LoadState(previous_files=self._file_cache)
        include_guide = guide_enabled(interactive=opts.interactive)
        state.agents.extend(builtin_agents(include_guide=include_guide, search_tools=opts.search_tools,
                                           current=opts.current_contract))
        for watched in opts.watch_files:
            state.fingerprint.record(watched)
        plugin_dirs = list(opts.plugin_dirs)
        if opts.settings_plugin_dirs is not None:
            try:
                plugin_dirs.extend(opts.settings_plugin_dirs())
            except Exception as exc:  # a broken settings file must not hide every other agent
                state.warnings.append(AgentWarning(None, f"plugin folders from settings not read: {exc}"))
        load_plugins(plugin_dirs, opts.cwd, state)
        user_dirs = user_agent_dirs(opts.home) if opts.include_user else []
        if opts.include_user:
            load_folders(user_dirs, "userSettings", state)
        if opts.include_project:
            user_resolved = {resolved(d) for d in user_dirs}
            project_dirs = [d for d in project_agent_dirs(opts.cwd) if resolved(d) not in user_resolved]
            load_folders(project_dirs, "projectSettings", state)
        if opts.flag_agents:
            load_mapping(opts.flag_agents, "flagSettings", FLAG_ORIGIN, state)
        if opts.sdk_agents:
            load_mapping(opts.sdk_agents, "sdk", SDK_ORIGIN, state)
        report_duplicates(state)
        report_unknown_tools(state)

        by_name: dict[str, AgentDefinition] = {}
        for agent in state.agents:  # already in precedence order: last definition wins
            by_name[agent.agent_type] = agent
        active = list(by_name.values())
        if opts.current_contract:  # 2.1.332 lists types by name, built-ins and custom mixed
            active.sort(key=lambda a: a.agent_type.lower())
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
    current_contract: bool = False,
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
        current_contract=current_contract,
    )
    return AgentRegistry(options)
