"""What a caller (CLI flags or SDK options) says about a run: :class:`RunOptions`, and the run's environment."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catui.hooks.config import HooksConfig
    from catui.mcp.config import SdkTransport
    from catui.models.reasoning import Effort
    from catui.session.config import PermissionHook
    from catui.session.events import Event
    from catui.tasks.schedule import ScheduleClock
    from catui.tools.base import Tool


@dataclass
class RunOptions:
    """What a caller (CLI flags or SDK options) says about a run."""

    cwd: Path = field(default_factory=Path.cwd)
    model: str | None = None
    fallback_model: str | None = None
    max_turns: int | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    settings_arg: str | None = None
    setting_sources: tuple[str, ...] = ("user", "project", "local")
    flag_agents: Mapping[str, Any] | None = None
    sdk_agents: Mapping[str, Any] | None = None
    plugin_dirs: list[str] = field(default_factory=list)
    add_dirs: list[str] = field(default_factory=list)
    interactive: bool = False
    include_partial_messages: bool = False
    extra_tools: list[Tool] = field(default_factory=list)
    can_use_tool: PermissionHook | None = None
    idle_events: Callable[[Event], None] | None = None
    """Where the main session's events between runs go (the SDK client's caller); None drops them."""
    env: Mapping[str, str] | None = None
    sandbox: Mapping[str, Any] | None = None
    """The SDK's ``sandbox`` option: laid over the settings' ``sandbox`` value (docs/sandbox.md)."""
    session_id: str | None = None
    write_transcript: bool = True
    resume: str | None = None
    """A session id whose conversation this run continues (``--resume``)."""
    continue_conversation: bool = False
    """Continue the project's latest session (``--continue``)."""
    resume_session_at: str | None = None
    """With resume: keep the old conversation only up to and including the line with this uuid
    (``--resume-session-at``; the run forks)."""
    transcript_mirror: Callable[[dict[str, Any]], None] | None = None
    """Called with each line of the main transcript as it is written (``--session-mirror``)."""
    resume_drops_turn: str | None = None
    """With ``resume_session_at``: the uuid of the prompt whose turn the cut drops; the resume is refused when
    the cut drops anything else (``--resume-drops-turn``)."""
    fork_session: bool = False
    """With resume/continue: run under a new id, starting from a copy of the old conversation."""
    effort: Effort | None = None
    """Checked by ``catui.models.reasoning.parse_effort``; None falls back to the agent, then settings."""
    thinking: dict[str, Any] | None = None
    """An extended-thinking config (``catui.models.reasoning``); None falls back to ``MAX_THINKING_TOKENS``."""
    agent: str | None = None
    """Run the main session as this agent definition (``--agent``; catui.app.main_agent)."""
    agent_origin: str = "--agent"
    """How errors name the option that gave ``agent``."""
    executor: str | None = None
    """Where sub-agents run: ``in-process`` or ``ray`` (docs/ray.md); None leaves it to
    ``CATUI_EXECUTOR`` and the ``executor`` setting."""
    remote_foreground: bool = False
    """With the ray executor, run foreground children there too (``catui batch``), not only background ones."""
    clock: ScheduleClock | None = None
    """The time source of scheduled prompts (CronCreate); None is the real local clock."""
    callback_hooks: HooksConfig | None = None
    """Hooks that are Python callables (the SDK's ``hooks=``, the control protocol's); after the settings' hooks."""
    include_hook_events: bool = False
    """Report every hook run as ``system/hook_started`` and ``system/hook_response`` events
    (``--include-hook-events``, the SDK's ``include_hook_events``)."""
    mcp_servers: Mapping[str, Any] | None = None
    """More MCP servers, ``{name: config}`` (``--mcp-config``); they win over the configuration files."""
    strict_mcp_config: bool = False
    """Use only ``mcp_servers`` (``--strict-mcp-config``)."""
    sdk_mcp_transport: SdkTransport | None = None
    """Reaches MCP servers of type ``sdk`` (in-process servers of the program driving catui)."""
    max_budget_usd: float | None = None
    """The session-wide spending limit over the main agent and every sub-agent (catui.session.budget)."""
    memory_by_sources: bool = False
    """claude-agent-sdk's rule for CLAUDE.md / CATUI.md: read with the user or project setting source, whatever the
    system prompt (False: catui's own rule, read for catui's own system prompt only)."""
    compat: str | None = None
    """The Claude Code contract to follow (``"2.1.92"``, ``"2.1.332"``); None leaves it to ``CATUI_COMPAT`` and the
    ``compat`` setting (catui.config.compat)."""


def effective_env(options: RunOptions, settings_env: Mapping[str, str]) -> dict[str, str]:
    """The run's environment: os.environ, then the settings' ``env`` block, then the caller's ``env`` option."""
    env = dict(os.environ)
    env.update(settings_env)
    if options.env:
        env.update(options.env)
    return env
