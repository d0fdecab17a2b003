"""What the sub-agent runtime takes from the application, and what it remembers across spawns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.config.compat import CompatProfile
from catui.config.context import environment_block, git_status_snapshot, load_project_memory
from catui.models.base import ModelProvider
from catui.models.resolve import ResolvedModel, create_provider
from catui.skills.registry import SkillRegistry
from catui.telemetry.events import Telemetry
from catui.tools.base import AgentCatalogue

if TYPE_CHECKING:
    from catui.hooks.runner import HookRunner
    from catui.mcp.manager import McpManager


@dataclass
class RuntimeDeps:
    """The application's parts a spawn needs (built by :func:`catui.subagents.install.install_subagents`).

    ``parent_resolved`` is the main agent's model; it changes when the SDK switches models
    (``CatuiClient.set_model``), and children with ``model: inherit`` follow it.
    """

    registry: AgentCatalogue
    settings: Mapping[str, Any]
    env: Mapping[str, str]
    project_root: Path
    sessions_dir: Path | None
    parent_resolved: ResolvedModel | None = None
    telemetry: Telemetry | None = None
    load_project_memory: bool = True
    max_spawn_depth: int = 1
    """Children at a depth below this may keep the Agent tool (see :mod:`catui.subagents.nesting`)."""
    compat: CompatProfile = field(default_factory=CompatProfile)
    """The Claude Code contract the session follows (catui.config.compat)."""
    """False when the SDK left out the user and project setting sources: no CLAUDE.md / CATUI.md is read."""
    skills: SkillRegistry | None = None
    """The session's skills: a definition's ``skills:`` are preloaded from here."""
    hooks: HookRunner | None = None
    """The main session's settings hooks; each sub-agent's own runner is derived from it."""
    mcp: McpManager | None = None
    """The session's MCP servers (None when none is configured); children's tools and requirements use it."""


class SpawnCaches:
    """Per-conversation memos of what every spawn would otherwise recompute.

    The environment block, the git snapshot (one per folder per conversation, as the main agent's,
    and described as such), the project memory files, and one provider per model configuration.
    """

    def __init__(self, deps: RuntimeDeps) -> None:
        self._deps = deps
        self._env_blocks: dict[tuple[str, str], str] = {}
        self._git_status: dict[str, str | None] = {}
        self._project_memory: dict[tuple[str, str], str | None] = {}
        self._providers: dict[ResolvedModel, ModelProvider] = {}

    def provider(self, resolved: ResolvedModel) -> ModelProvider:
        """The provider for ``resolved`` (create_provider shares one per configuration; this spares the lookup)."""
        provider = self._providers.get(resolved)
        if provider is None:
            provider = self._providers[resolved] = create_provider(resolved, self._deps.settings, self._deps.env)
        return provider

    def environment(self, cwd: Path, model_id: str) -> str:
        key = (str(cwd), model_id)
        block = self._env_blocks.get(key)
        if block is None:
            block = self._env_blocks[key] = environment_block(cwd, model_id)
        return block

    def git_snapshot(self, cwd: Path) -> str | None:
        key = str(cwd)
        if key not in self._git_status:
            self._git_status[key] = git_status_snapshot(cwd)
        return self._git_status[key]

    def project_memory(self, cwd: Path, project_root: Path) -> str | None:
        key = (str(cwd), str(project_root))
        if key not in self._project_memory:
            self._project_memory[key] = load_project_memory(cwd, project_root)
        return self._project_memory[key]
