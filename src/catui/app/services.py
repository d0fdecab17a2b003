"""The built application: :class:`AgentApp` (the main session and what it shares) and its :class:`AppServices`.

Front ends (the CLI, the SDK) ask the application rather than reach through its session: ``app.switch_model``,
``app.set_permission_mode``, ``app.stop_task``, ``app.rewind_files``, ``app.context_usage``, ``app.mcp_status`` …
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.agents.registry import AgentRegistry
from catui.app import status
from catui.app.options import RunOptions
from catui.config.compat import CompatProfile
from catui.config.settings import Settings
from catui.errors import ConfigurationError
from catui.hooks.install import close_hooks
from catui.hooks.runner import HookRunner
from catui.models.resolve import ResolvedModel, create_provider, default_max_tokens, resolve_model
from catui.session.budget import SessionBudget
from catui.session.file_history import RewindOutcome
from catui.session.session import Session
from catui.skills.registry import SkillRegistry
from catui.styles.active import SETTING, SessionStyle, reported_style
from catui.styles.model import DEFAULT_STYLE, OutputStyle
from catui.tasks.registry import TaskRegistry
from catui.tasks.schedule import CronSchedule

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager
    from catui.permissions.model import PermissionRule
    from catui.subagents.install import SubagentSystem
    from catui.subagents.runtime import SubagentRuntime
    from catui.subagents.teams.coordinator import TeamCoordinator
    from catui.workflows.live import LiveWorkflows


@dataclass
class AppServices:
    """What the application's parts share, each built once by :func:`catui.app.build.build_app` and passed in
    here; nothing is put on it afterwards (what changes during a session is on :class:`AgentApp`)."""

    env: dict[str, str] = field(default_factory=dict)
    """The merged environment: os.environ, then the settings' ``env`` block, then the SDK's ``env`` option."""
    compat: CompatProfile = field(default_factory=CompatProfile)
    """The Claude Code contract this session follows (catui.config.compat)."""
    context_block: dict[str, Any] | None = None
    """The first user message's context reminder (CLAUDE.md / CATUI.md and the date)."""
    subagents: SubagentSystem | None = None
    skills: SkillRegistry | None = None
    """The session's SKILL.md skills (catui.skills); the Skill tool and sub-agents read them."""
    hooks: HookRunner | None = None
    mcp: McpManager | None = None
    startup_warnings: list[str] = field(default_factory=list)
    main_agent: AgentDefinition | None = None
    """The definition the main session runs as (``--agent``), or None."""
    startup_hooks: list[Callable[[AgentApp], Awaitable[None]]] = field(default_factory=list)
    unavailable_tools: dict[str, str] = field(default_factory=dict)
    """Tools catui has but does not offer in this session, with the reason (stream-json's init lists them)."""
    budget: SessionBudget | None = None
    """The ``--max-budget-usd`` limit, or None."""
    output_style: SessionStyle | None = None
    """The output styles this session knows and the one in use (catui.styles)."""
    restyle: Callable[[OutputStyle | None], list[dict[str, Any]]] | None = None
    """The system prompt with another output style; None when styles do not apply (``--agent``, ``--system-prompt``)."""
    background_stops: set[asyncio.Future[Any]] = field(default_factory=set)
    """Stops of background agents under way (the budget tripped); awaited when the app closes."""
    workflows: LiveWorkflows | None = None
    """The workflow runs the Workflow tool launched in this session (the terminal's /workflows view); None
    when the tool is not offered."""


@dataclass
class AgentApp:
    """The main session and what it shares with its sub-agents."""

    session: Session
    options: RunOptions
    settings: Settings
    registry: AgentRegistry
    tasks: TaskRegistry
    project_root: Path
    transcript_path: Path | None
    model_display: str
    resolved_model: ResolvedModel | None = None
    """The main agent's model now (:meth:`switch_model` changes it)."""
    initial_prompt: str | None = None
    """The ``--agent`` definition's initialPrompt, put before the first prompt and then cleared."""
    services: AppServices = field(default_factory=AppServices)
    _session_ended: bool = field(default=False, init=False, repr=False)
    """SessionEnd hooks run once, whoever closes the app first."""
    _added_mcp: McpManager | None = field(default=None, init=False, repr=False)
    """The MCP manager the first ``set_mcp_servers`` made in a session that started without MCP servers."""
    _flag_rules: tuple[PermissionRule, ...] = field(default=(), init=False, repr=False)
    """The permission rules the last ``apply_flag_settings`` with ``permissions`` added (the next one replaces them)."""

    async def aclose(self, reason: str = "other") -> None:
        """Run SessionEnd hooks, stop background work and close providers.

        ``reason`` is what SessionEnd hooks are told: ``prompt_input_exit`` when a person
        left the interactive session, ``other`` otherwise.
        """

        if not self._session_ended:
            self._session_ended = True
            await close_hooks(self.services.hooks, reason)
        system = self.services.subagents
        if system is not None and system.teams is not None:
            await system.teams.aclose()  # teammates first: they may still use the task registry and providers
        if self.services.background_stops:
            await asyncio.gather(*self.services.background_stops, return_exceptions=True)
        if self.tasks is not None:
            await self.tasks.shutdown()
        mcp = self.mcp_manager
        if mcp is not None:
            await mcp.aclose()
        if self.services.subagents is not None:
            await self.services.subagents.aclose()
        if self.session.ctx.services.sandbox is not None:
            self.session.ctx.services.sandbox.close()  # the allow-list proxy's thread and socket
        await self.session.config.provider.aclose()
        if self.session.config.telemetry is not None:  # what the batches still hold, before the process ends
            await asyncio.to_thread(self.session.config.telemetry.flush)

    # -- what front ends ask of a running application ----------------------------------------------

    @property
    def subagent_runtime(self) -> SubagentRuntime | None:
        """The sub-agent runtime, built now if it was not yet (None before :func:`catui.app.build.build_app`
        installed it)."""
        return self.services.subagents.runtime if self.services.subagents is not None else None

    def _built_runtime(self) -> SubagentRuntime | None:
        """The runtime if a sub-agent ever needed it; None before (no sub-agent can be running then)."""
        system = self.services.subagents
        return system.runtime if system is not None and system.built else None

    @property
    def schedule(self) -> CronSchedule | None:
        """The session's scheduled prompts (CronCreate), or None."""
        return self.session.ctx.services.schedule

    def report_budget_warnings(self, say: Callable[[str], None]) -> None:
        """Send the session budget's run-time warnings (a model without a known price) to ``say``."""
        if self.services.budget is not None:
            self.services.budget.on_warning = say

    def answers_questions(self) -> bool:
        """Whether someone answers the main agent's AskUserQuestion calls (an SDK client's or a terminal's)."""
        return self.session.ctx.ask_user is not None

    def set_question_asker(self, asker: Callable[[list[dict[str, Any]]], Awaitable[dict[str, str]]]) -> None:
        """Let ``asker`` answer the main agent's AskUserQuestion calls (the terminal UI, built after the app)."""
        self.session.ctx.ask_user = asker

    def set_permission_mode(self, mode: Any) -> None:
        """Use ``mode`` for the main agent's following tool calls. Raises ConfigurationError for an unknown mode."""
        from catui.app import controls  # lazy (catui.lazy): SDK/terminal controls only

        controls.set_permission_mode(self.session.ctx, mode)

    def switch_model(self, model: Any) -> ResolvedModel:
        """Use ``model`` (an alias, an id or provider:model; None: the default) from the next turn on.

        Sub-agents whose model is ``inherit`` follow. Raises ConfigurationError (a one-line reason) for a
        value that is not a model name or a model that cannot be resolved.
        """
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ConfigurationError(f"the model must be a model name string or null, not {model!r}")
        env = self.services.env
        merged = self.settings.merged
        # Within the current model: a scripted session stays on its script (only the model id changes), as
        # its sub-agents do; for the API providers this changes nothing.
        resolved = resolve_model(model, merged, env, within=self.resolved_model if model else None)
        provider = create_provider(resolved, merged, env)
        config = self.session.config
        config.provider = provider
        config.max_tokens = default_max_tokens(resolved.model_id)
        self.session.set_model(resolved.model_id)
        self.resolved_model = resolved
        self.model_display = resolved.display
        # Sub-agents with model "inherit" follow the main agent's new model.
        system = self.services.subagents
        if system is not None:  # also before the runtime is built: it reads the model then
            system.follow_model(resolved)
        return resolved

    def apply_flag_settings(self, settings: Any) -> None:
        """The SDKs' ``applyFlagSettings``: merge ``settings`` into the flag layer from the next request on.

        ``permissions`` replaces the rules of the previous call (null clears them; ``--settings``' stay),
        ``model`` switches models (null: the default), ``effortLevel`` sets the effort sent (null: none) and
        ``outputStyle`` the style (null: the settings' at start), as Claude Code does; any other key, a wrong
        value or a malformed rule raises ConfigurationError (one line) and nothing of the call applies
        (catui.app.flag_settings).
        """
        from catui.app.flag_settings import check_flag_settings, with_flag_rules  # lazy: SDK drivers only

        styles = self.services.output_style
        call = check_flag_settings(settings, base=self.options.cwd.resolve(), styles=(
            styles.catalog.names() if styles is not None and self.services.restyle is not None else None))
        if "model" in call.keys:  # first: the one change that may still fail (a model that cannot be resolved)
            self.switch_model(call.model)
        if "outputStyle" in call.keys:
            self.set_output_style(call.style or self._start_style(), remember=False)
        if "effortLevel" in call.keys:
            self.session.config.effort = call.effort
        if "permissions" in call.keys:
            ctx = self.session.ctx
            ctx.permissions = with_flag_rules(ctx.permissions, self._flag_rules, call.rules)
            self._flag_rules = call.rules

    def _start_style(self) -> str:
        """The output style the settings chose at start (where ``applyFlagSettings``' ``outputStyle: null`` goes)."""
        styles = self.services.output_style
        chosen = self.settings.merged.get(SETTING)
        known = styles.catalog.names() if styles is not None else []
        return chosen if isinstance(chosen, str) and chosen in known else DEFAULT_STYLE

    def update_settings(self, source: Any, settings: Any) -> None:
        """The SDKs' ``updateSettings``: write an allowed key to a settings file and use it now (``outputStyle``
        of ``localSettings``); ConfigurationError (one line) for anything else (catui.app.flag_settings)."""
        from catui.app.flag_settings import update_settings  # lazy, as above

        update_settings(source, settings, set_output_style=self.set_output_style,
                        setting_sources=tuple(self.options.setting_sources))

    def set_thinking(self, thinking: dict[str, Any] | None) -> None:
        """Use this extended-thinking config (``{"type": "enabled", "budget_tokens": N}``, disabled, or None for
        none) for the main agent's requests from the next one on."""
        self.session.config.thinking = thinking

    def set_output_style(self, name: str, *, remember: bool = True) -> Path | None:
        """Use the output style called ``name`` from the next model request on; with ``remember``, write it to
        the project's ``.catui/settings.local.json`` (returned) so that later sessions start with it.

        Raises ConfigurationError for an unknown name and for a session whose prompt is not catui's own.
        """
        from catui.styles.switch import remember_setting, switch_output_style  # lazy: /output-style only

        self.session.config.system_prompt = switch_output_style(
            self.services.output_style, self.services.restyle, name)
        return remember_setting(self.project_root, name) if remember else None

    async def stop_task(self, task_id: Any) -> None:
        """Stop a background task, or a sub-agent running in the foreground, by id. Raises CatuiError if unknown."""
        from catui.app import controls  # lazy (catui.lazy): SDK/terminal controls only

        await controls.stop_task(self.tasks, self._built_runtime(), task_id)

    def rewind_files(self, user_message_id: Any, *, dry_run: bool = False) -> RewindOutcome:
        """Put the files the agents changed since a prompt (its uuid) back as they were before it
        (``dry_run``: only say what that would change)."""
        from catui.app import controls  # lazy (catui.lazy): SDK/terminal controls only

        return controls.rewind_files(self.session.config.file_history, user_message_id, dry_run=dry_run)

    async def background_foreground_agents(self, tool_use_id: str | None = None) -> list[str]:
        """Move every foreground sub-agent to the background (Ctrl-B; with ``tool_use_id`` only the one that Agent
        call started); the ids moved (none without a runtime)."""
        runtime = self._built_runtime()
        return await runtime.background_all_foreground(tool_use_id) if runtime is not None else []

    @property
    def skills(self) -> SkillRegistry | None:
        """The session's skills and custom commands (None when there are none to load)."""
        return self.services.skills

    @property
    def compat(self) -> CompatProfile:
        """The Claude Code contract this session follows."""
        return self.services.compat

    @property
    def startup_warnings(self) -> list[str]:
        """Start-up problems to report (never fatal); front ends add what their own start-up meets."""
        return self.services.startup_warnings

    def reported_style(self) -> tuple[str, list[str]]:
        """The output style an init message and server info report, and the styles available."""
        return reported_style(self.services.output_style)

    def leading_team(self) -> TeamCoordinator | None:
        """The team coordinator when the main agent leads a team now, else None."""
        system = self.services.subagents
        teams = system.teams if system is not None else None
        return teams if teams is not None and teams.team is not None else None

    def team_members(self) -> list[dict[str, Any]]:
        """The members of the team the main agent leads (empty when it leads none)."""
        teams = self.leading_team()
        return teams.team.snapshot() if teams is not None and teams.team is not None else []

    def mcp_server_statuses(self) -> list[dict[str, str]]:
        """``[{name, status}]`` of the session's MCP servers (the init message's ``mcp_servers``)."""
        return self.mcp_manager.server_statuses() if self.mcp_manager is not None else []

    async def mcp_ready(self) -> None:
        """Wait until the MCP servers connected or gave up (the main agent's tool list is settled then)."""
        if self.services.mcp is not None:
            await self.services.mcp.ready()

    def mcp_status(self) -> dict[str, Any]:
        """claude-agent-sdk's ``get_mcp_status()``: the session's MCP servers, their state and tools."""
        return status.mcp_status(self.mcp_manager, self.options.extra_tools)

    def context_usage(self, last_usage: dict[str, Any] | None) -> dict[str, Any]:
        """claude-agent-sdk's ``get_context_usage()`` for the main agent, from the last request's usage."""
        policy = self.session.config.context_policy
        return status.context_usage(self.session.config.model, last_usage,
                                    auto_compact=policy.auto_enabled if policy is not None else True)

    async def reconnect_mcp_server(self, server_name: Any) -> None:
        """Reconnect a configured MCP server; the main agent is offered its tools again."""
        await status.reconnect_mcp_server(self.mcp_manager, self.session, server_name)

    async def toggle_mcp_server(self, server_name: Any, enabled: Any) -> None:
        """Turn a configured MCP server off or on again for this session."""
        await status.toggle_mcp_server(self.mcp_manager, self.session, server_name, enabled)

    def reload_skills(self) -> list[dict[str, Any]]:
        """The SDKs' ``reloadSkills``: read the skill and command files again; the skills now available (the
        SlashCommand entries). A session that started without skills is offered the Skill tool once it has one."""
        from catui.commands.listing import skill_entries  # lazy: only drivers that reload ask

        skills = self.services.skills
        if skills is None:
            return []
        skills.reload()
        tools = self.session.tools
        if skills.skills and not any(t.name == "Skill" for t in tools):
            from catui.skills.tool import SkillTool  # lazy (catui.lazy): skills

            # among the built-in tools by name, before the MCP servers' (session_tools' order)
            at = next((i for i, t in enumerate(tools) if t.name.startswith("mcp__") or t.name > "Skill"), len(tools))
            self.session.set_tools([*tools[:at], SkillTool(skills), *tools[at:]])
        return skill_entries(skills)

    def reload_output_styles(self) -> list[str]:
        """The SDKs' ``reloadOutputStyles``: read the output-style files again; every style name now available
        (``default``, the built-in ones, then the files'), as ``initialize`` lists them."""
        styles = self.services.output_style
        return styles.reload() if styles is not None else reported_style(None)[1]

    @property
    def mcp_manager(self) -> McpManager | None:
        """The session's MCP servers: those it started with, or the ones ``set_mcp_servers`` added (sub-agents
        see them either way)."""
        return self.services.mcp if self.services.mcp is not None else self._added_mcp

    async def set_mcp_servers(self, servers: Any, *, background: bool = False) -> dict[str, Any]:
        """The SDKs' ``setMcpServers``: replace the session's dynamically added MCP servers; answers
        ``{"added", "removed", "errors"}`` (catui.mcp.set_servers)."""
        manager = self.mcp_manager
        if manager is None:
            # lazy (catui.lazy): MCP only once a driver adds a server to a session that started without one
            from catui.mcp.manager import McpManager

            manager = self._added_mcp = McpManager({}, cwd=self.options.cwd.resolve(), env=self.services.env,
                                                   sdk_transport=self.options.sdk_mcp_transport)
            if self.services.subagents is not None:  # children are offered the new servers as the start's
                self.services.subagents.follow_mcp(manager)
        from catui.mcp.set_servers import set_mcp_servers  # lazy, as above

        return await set_mcp_servers(manager, self.session, servers, env=self.services.env, background=background)
