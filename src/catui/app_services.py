"""The built application: :class:`AgentApp` (the main session and what it shares) and its :class:`AppServices`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.app_options import RunOptions
from catui.config.compat import CompatProfile
from catui.hooks.install import close_hooks
from catui.hooks.runner import HookRunner
from catui.models.resolve import ResolvedModel
from catui.session.budget import SessionBudget
from catui.session.session import Session
from catui.skills.registry import SkillRegistry
from catui.styles.active import SessionStyle
from catui.styles.model import OutputStyle

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager
    from catui.subagents.install import SubagentSystem


@dataclass
class AppServices:
    """What the application's parts share, set as they are installed (build_app, hooks, MCP, sub-agents)."""

    env: dict[str, str] = field(default_factory=dict)
    """The merged environment: os.environ, then the settings' ``env`` block, then the SDK's ``env`` option."""
    compat: CompatProfile = field(default_factory=CompatProfile)
    """The Claude Code contract this session follows (catui.config.compat)."""
    context_block: dict[str, Any] | None = None
    """The first user message's context reminder (CLAUDE.md / CATUI.md and the date)."""
    resolved_model: ResolvedModel | None = None
    subagents: SubagentSystem | None = None
    skills: SkillRegistry | None = None
    """The session's SKILL.md skills (catui.skills); the Skill tool and sub-agents read them."""
    hooks: HookRunner | None = None
    mcp: McpManager | None = None
    startup_warnings: list[str] = field(default_factory=list)
    main_agent: AgentDefinition | None = None
    """The definition the main session runs as (``--agent``), or None."""
    initial_prompt: str | None = None
    """The ``--agent`` definition's initialPrompt, put before the first prompt and then cleared."""
    startup_hooks: list[Callable[[AgentApp], Awaitable[None]]] = field(default_factory=list)
    unavailable_tools: dict[str, str] = field(default_factory=dict)
    """Tools catui has but does not offer in this session, with the reason (stream-json's init lists them)."""
    session_end_done: bool = False
    """SessionEnd hooks run once, whoever closes the app first."""
    budget: SessionBudget | None = None
    """The ``--max-budget-usd`` limit, or None."""
    output_style: SessionStyle | None = None
    """The output styles this session knows and the one in use (catui.styles)."""
    restyle: Callable[[OutputStyle | None], list[dict[str, Any]]] | None = None
    """The system prompt with another output style; None when styles do not apply (``--agent``, ``--system-prompt``)."""
    background_stops: set[asyncio.Future[Any]] = field(default_factory=set)
    """Stops of background agents under way (the budget tripped); awaited when the app closes."""


@dataclass
class AgentApp:
    """The main session and what it shares with its sub-agents."""

    session: Session
    options: RunOptions
    settings: Any
    registry: Any
    tasks: Any
    project_root: Path
    transcript_path: Path | None
    model_display: str
    services: AppServices = field(default_factory=AppServices)

    async def aclose(self, reason: str = "other") -> None:
        """Run SessionEnd hooks, stop background work and close providers.

        ``reason`` is what SessionEnd hooks are told: ``prompt_input_exit`` when a person
        left the interactive session, ``other`` otherwise.
        """

        await close_hooks(self, reason)
        system = self.services.subagents
        if system is not None and system.teams is not None:
            await system.teams.aclose()  # teammates first: they may still use the task registry and providers
        if self.services.background_stops:
            await asyncio.gather(*self.services.background_stops, return_exceptions=True)
        closer = getattr(self.tasks, "shutdown", None)
        if closer is not None:
            await closer()
        mcp = self.services.mcp
        if mcp is not None:
            await mcp.aclose()
        if self.services.subagents is not None:
            await self.services.subagents.aclose()
        if self.session.ctx.services.sandbox is not None:
            self.session.ctx.services.sandbox.close()  # the allow-list proxy's thread and socket
        await self.session.config.provider.aclose()
        if self.session.config.telemetry is not None:  # what the batches still hold, before the process ends
            await asyncio.to_thread(self.session.config.telemetry.flush)
