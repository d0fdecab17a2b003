"""Application wiring: builds the main agent's session from options and settings.

The CLI and the SDK both describe a run with :class:`RunOptions` and get an
:class:`AgentApp` back: the main :class:`~catui.session.session.Session` plus
the registries it shares with its sub-agents (agent definitions, background
tasks, usage). Everything heavy is imported here, not at ``import catui``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.agents.registry import load_agent_registry
from catui.config.concurrency import tool_use_concurrency
from catui.config.context import environment_block, git_branch, git_status_snapshot, load_project_memory
from catui.config.settings import load_settings, settings_env, settings_files
from catui.errors import ConfigurationError
from catui.hooks.config import HooksConfig
from catui.hooks.install import close_hooks, install_hooks
from catui.hooks.runner import HookRunner
from catui.main_agent import (
    agent_model,
    check_tools_left,
    find_main_agent,
    inline_mcp_servers,
    keep_agent_tools,
    main_agent_hooks,
    main_agent_system_prompt,
    restrict_tools,
    with_agent_memory,
    with_initial_prompt,
)
from catui.mcp.config import SdkTransport
from catui.mcp.install import install_mcp
from catui.models.reasoning import Effort, effort_level, parse_effort, thinking_from_budget, thinking_is_on
from catui.models.resolve import ResolvedModel, create_provider, default_max_tokens, resolve_model
from catui.paths import find_project_root, sessions_dir
from catui.permissions.from_settings import permission_context_from_settings
from catui.permissions.rules import denies_tool_outright
from catui.sandbox.config import merge_sandbox_values, sandbox_settings_from
from catui.sandbox.policy import BashSandbox
from catui.session.budget import SessionBudget
from catui.session.context_window import context_policy
from catui.session.prompt import context_block, main_system_prompt
from catui.session.resume import ResumeRequest, carry_history, plan_resume
from catui.session.session import CanUseTool, Session, SessionConfig, new_session_id
from catui.session.transcript import TranscriptWriter
from catui.session.usage import UsageTracker
from catui.skills.registry import SkillRegistry, load_skill_registry
from catui.skills.tool import SkillTool
from catui.subagents.install import install_subagents
from catui.tasks.history import restore_session_tasks
from catui.tasks.registry import TaskRegistry
from catui.tasks.schedule import SCHEDULE_FILE, CronSchedule, ScheduleClock
from catui.tools.base import Tool, ToolContext
from catui.tools.registry import builtin_tools
from catui.tools.services import ToolServices
from catui.tools.web_search import SearchBackend, WebSearchTool
from catui.tools.web_search_backends import (
    NO_BACKEND_REASON,
    AnthropicServerSearch,
    SearxngSearch,
    searxng_url,
)
from catui.tools.worktree_merge import WorktreeMergeTool, worktree_merge_allowed
from catui.worktree.cleanup import sweep_at_startup

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager
    from catui.subagents.install import SubagentSystem


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
    can_use_tool: CanUseTool | None = None
    env: Mapping[str, str] | None = None
    sandbox: Mapping[str, Any] | None = None
    """The SDK's ``sandbox`` option: laid over the settings' ``sandbox`` value (docs/sandbox.md)."""
    session_id: str | None = None
    write_transcript: bool = True
    resume: str | None = None
    """A session id whose conversation this run continues (``--resume``)."""
    continue_conversation: bool = False
    """Continue the project's latest session (``--continue``)."""
    fork_session: bool = False
    """With resume/continue: run under a new id, starting from a copy of the old conversation."""
    effort: Effort | None = None
    """Checked by ``catui.models.reasoning.parse_effort``; None falls back to the agent, then settings."""
    thinking: dict[str, Any] | None = None
    """An extended-thinking config (``catui.models.reasoning``); None falls back to ``MAX_THINKING_TOKENS``."""
    agent: str | None = None
    """Run the main session as this agent definition (``--agent``; catui.main_agent)."""
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
    mcp_servers: Mapping[str, Any] | None = None
    """More MCP servers, ``{name: config}`` (``--mcp-config``); they win over the configuration files."""
    strict_mcp_config: bool = False
    """Use only ``mcp_servers`` (``--strict-mcp-config``)."""
    sdk_mcp_transport: SdkTransport | None = None
    """Reaches MCP servers of type ``sdk`` (in-process servers of the program driving catui)."""
    max_budget_usd: float | None = None
    """The session-wide spending limit over the main agent and every sub-agent (catui.session.budget)."""


@dataclass
class AppServices:
    """What the application's parts share, set as they are installed (build_app, hooks, MCP, sub-agents)."""

    env: dict[str, str] = field(default_factory=dict)
    """The merged environment: os.environ, then the settings' ``env`` block, then the SDK's ``env`` option."""
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


def effective_env(options: RunOptions, settings_env: Mapping[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(settings_env)
    if options.env:
        env.update(options.env)
    return env


def _bash_sandbox(settings: Any, from_sdk: Mapping[str, Any] | None, cwd: Path) -> BashSandbox | None:
    """The app's Bash sandbox when ``sandbox.enabled`` is on (settings, then the SDK option), else None."""
    try:
        config = sandbox_settings_from(merge_sandbox_values(settings.get("sandbox"), from_sdk), cwd)
    except ConfigurationError as exc:
        files = [f for f in settings.files if "sandbox" in f.data]
        where = "CatuiOptions.sandbox" if from_sdk else (
            str(files[-1].path) if files and files[-1].path is not None else "--settings")
        raise ConfigurationError(f"{where}: {exc}") from None
    return BashSandbox(config) if config.enabled else None


def build_app(options: RunOptions) -> AgentApp:
    """Load settings, resolve the model, and assemble the main session. Raises ConfigurationError."""

    cwd = options.cwd.resolve()
    if not cwd.is_dir():
        raise ConfigurationError(f"working directory {cwd} does not exist")
    project_root = find_project_root(cwd)
    settings = load_settings(cwd, sources=options.setting_sources, extra=options.settings_arg)
    env = effective_env(options, settings_env(settings))

    permissions = permission_context_from_settings(
        settings,
        cwd=cwd,
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
        mode=options.permission_mode,
        add_dirs=options.add_dirs,
    )

    def settings_plugin_dirs() -> list[str]:
        # Re-read at every registry reload, so a plugin added to settings appears before the next turn.
        fresh = load_settings(cwd, sources=options.setting_sources, extra=options.settings_arg)
        return _plugin_paths(fresh.merged)

    registry = load_agent_registry(
        cwd,
        plugin_dirs=list(options.plugin_dirs),
        settings_plugin_dirs=settings_plugin_dirs,
        watch_files=[path for path, _source, _base in settings_files(cwd, sources=options.setting_sources)],
        flag_agents=options.flag_agents,
        sdk_agents=options.sdk_agents,
        include_user=("user" in options.setting_sources),
        include_project=("project" in options.setting_sources),
        interactive=options.interactive,  # catui-guide is active in interactive sessions only
        # The guide's tool set depends on whether the session offers the dedicated search tools.
        search_tools=_offers_search_tools(permissions),
    )
    main_agent = find_main_agent(registry, options.agent, options.agent_origin) if options.agent else None
    if main_agent is not None and main_agent.permission_mode and options.permission_mode is None:
        permissions = permission_context_from_settings(
            settings,
            cwd=cwd,
            allowed_tools=options.allowed_tools,
            disallowed_tools=options.disallowed_tools,
            mode=main_agent.permission_mode,
            add_dirs=options.add_dirs,
        )

    model_spec = options.model or (agent_model(main_agent) if main_agent is not None else None)
    try:
        resolved = resolve_model(model_spec, settings.merged, env)
    except ConfigurationError as exc:
        origin = (
            f"--agent {main_agent.agent_type}: its model: "
            if main_agent is not None and not options.model and model_spec
            else _model_origin(options.model, settings, env)
        )
        raise ConfigurationError(f"{origin}{exc}") from None
    provider = create_provider(resolved, settings.merged, env)
    effort = _session_effort(options, main_agent, settings, env)
    thinking = options.thinking
    if thinking is None:
        thinking = thinking_from_budget(env.get("MAX_THINKING_TOKENS"), "MAX_THINKING_TOKENS")

    tasks = TaskRegistry(project_root)
    resume_request = ResumeRequest(resume=options.resume, continue_conversation=options.continue_conversation,
                                   fork_session=options.fork_session, session_id=options.session_id)
    resumed = plan_resume(resume_request, cwd, new_id=options.session_id or new_session_id())
    session_id = resumed.session_id

    transcript_path: Path | None = None
    transcript: TranscriptWriter | None = None
    if options.write_transcript:
        transcript_path = sessions_dir(cwd) / f"{session_id}.jsonl"
        transcript = TranscriptWriter([transcript_path], session_id=session_id, cwd=cwd, git_branch=git_branch(cwd))
        carry_history(transcript, resumed)

    sandbox = _bash_sandbox(settings, options.sandbox, cwd)
    if sandbox is not None and sandbox.settings.auto_allow_bash_if_sandboxed and sandbox.availability.usable:
        permissions = permissions.with_sandboxed_bash(sandbox.settings.excluded_commands)
    # Shell commands see the variables of settings' `env` and the SDK's `env` option, not only os.environ.
    schedule = CronSchedule(project_root / SCHEDULE_FILE, clock=options.clock)
    if options.interactive:  # durable prompts come back in the next interactive session (docs/scheduled-prompts.md)
        schedule.restore()
    services = ToolServices(
        env={**settings_env(settings), **(options.env or {})}, tasks=tasks, sandbox=sandbox, schedule=schedule
    )
    ctx = ToolContext(
        cwd=cwd, project_root=project_root, permissions=permissions, interactive=options.interactive,
        services=services,
    )
    usage_tracker = UsageTracker()
    budget = SessionBudget(options.max_budget_usd) if options.max_budget_usd is not None else None
    if budget is not None:
        usage_tracker.listeners.append(budget.observe)

    tools = builtin_tools(interactive=options.interactive)
    tools = [t for t in tools if t.is_enabled()]
    search_backend = _web_search_backend(provider, resolved.model_id, settings.merged, usage_tracker)
    if search_backend is not None:
        tools = sorted([*tools, WebSearchTool(search_backend)], key=lambda tool: tool.name)  # builtin_tools' order
    skills = load_skill_registry(
        cwd,
        plugin_dirs=[*options.plugin_dirs, *_plugin_paths(settings.merged)],
        include_user=("user" in options.setting_sources),
        include_project=("project" in options.setting_sources),
    )
    if skills.skills:  # offered only when there is a skill to load
        tools = sorted([*tools, SkillTool(skills)], key=lambda tool: tool.name)  # builtin_tools' order
    if worktree_merge_allowed(settings.merged):  # catui's own, off unless the user opts in (docs/beyond.md)
        tools = sorted([*tools, WorktreeMergeTool()], key=lambda tool: tool.name)
    tools.extend(options.extra_tools)

    if main_agent is not None:
        tools, ctx.permissions, memory = with_agent_memory(
            main_agent, restrict_tools(main_agent, tools), tools, ctx.permissions, project_root)
        system = main_agent_system_prompt(
            main_agent,
            main_system_prompt(
                environment_block(cwd, resolved.model_id, additional_dirs=tuple(Path(d) for d in options.add_dirs)),
                git_status_snapshot(cwd),
            ),
            cli_append=options.append_system_prompt,
            active_agents=list(registry.active),
            tool_names=[t.name for t in tools],
            memory=memory,
        )
    elif options.system_prompt is not None:
        # An empty replacement (claude-agent-sdk's default, `--system-prompt ""`) sends no system text at all.
        system = [{"type": "text", "text": options.system_prompt}] if options.system_prompt else []
        if options.append_system_prompt:
            system.append({"type": "text", "text": options.append_system_prompt})
    else:
        system = main_system_prompt(
            environment_block(cwd, resolved.model_id, additional_dirs=tuple(Path(d) for d in options.add_dirs)),
            git_status_snapshot(cwd),
            options.append_system_prompt,
        )

    window = tool_use_concurrency(env, settings.merged)
    config = SessionConfig(
        provider=provider,
        model=resolved.model_id,
        tools=tools,
        tool_context=ctx,
        system_prompt=system,
        session_id=session_id,
        # --max-turns wins; else the --agent definition's maxTurns
        max_turns=options.max_turns if options.max_turns is not None or main_agent is None else main_agent.max_turns,
        max_tokens=default_max_tokens(resolved.model_id),
        transcript=transcript,
        can_use_tool=options.can_use_tool,
        include_partial_messages=options.include_partial_messages,
        usage_tracker=usage_tracker,
        history=list(resumed.messages),
        effort=effort_level(effort) if effort is not None else None,
        thinking=thinking if thinking_is_on(thinking) else None,
        max_tool_use_concurrency=window.value,
        context_policy=context_policy(env, settings.merged),
        budget=budget,
    )
    if options.fallback_model:
        fallback = resolve_model(options.fallback_model, settings.merged, env, within=resolved)
        config.fallback = (create_provider(fallback, settings.merged, env), fallback.model_id)
    session = Session(config)
    app = AgentApp(
        session=session,
        options=options,
        settings=settings,
        registry=registry,
        tasks=tasks,
        project_root=project_root,
        transcript_path=transcript_path,
        model_display=resolved.display,
    )
    # A resumed conversation carries its context reminder in its first message already.
    app.services.context_block = None if resumed.messages else context_block(
        None if options.system_prompt is not None else load_project_memory(cwd, project_root)
    )
    app.services.startup_warnings.extend(resumed.warnings)
    app.services.startup_warnings.extend(schedule.restore_warnings)
    app.services.env = env
    app.services.skills = skills
    if search_backend is None:
        app.services.unavailable_tools["WebSearch"] = NO_BACKEND_REASON
    if window.warning is not None:
        app.services.startup_warnings.append(window.warning)
    app.services.resolved_model = resolved
    app.services.main_agent = main_agent
    if budget is not None:
        app.services.budget = budget
        budget.on_exceeded.append(lambda: _stop_for_budget(app))
    # An agent's initialPrompt opens a conversation; a resumed one was opened already.
    app.services.initial_prompt = (
        main_agent.initial_prompt if main_agent is not None and not resumed.messages else None
    )
    install_subagents(app)
    if resumed.source is not None:  # the old session's finished background tasks come back as history
        restore_session_tasks(tasks, resumed.source.stem, session_id)

    install_hooks(app, _extra_hooks(options, main_agent))
    mcp = install_mcp(
        app,
        extra_servers={**(inline_mcp_servers(main_agent) if main_agent is not None else {}),
                       **(options.mcp_servers or {})},
        strict=options.strict_mcp_config,
        sdk_transport=options.sdk_mcp_transport,
    )
    if main_agent is not None:
        _keep_agent_tools(app, main_agent, mcp)
    return app


def _extra_hooks(options: RunOptions, main_agent: AgentDefinition | None) -> HooksConfig | None:
    """Hooks beyond the settings': the ``--agent`` definition's, then the callable ones."""
    parts = [part for part in (main_agent_hooks(main_agent) if main_agent is not None else None,
                               options.callback_hooks) if part is not None]
    if not parts:
        return None
    return parts[0].merged_with(parts[1]) if len(parts) == 2 else parts[0]
def _stop_for_budget(app: AgentApp) -> None:
    """The budget tripped: abort the main session (its foreground children with it) and stop background agents."""
    app.session.abort()
    agents = [t for t in app.tasks.list() if t.type == "local_agent" and t.is_live]
    if agents:
        # Called from inside a usage update (synchronous); the stops need the loop, so they run as a task.
        stopping = asyncio.ensure_future(asyncio.gather(*(app.tasks.stop(t.id) for t in agents)))
        app.services.background_stops.add(stopping)
        stopping.add_done_callback(app.services.background_stops.discard)


def _keep_agent_tools(app: AgentApp, definition: AgentDefinition, mcp: McpManager | None) -> None:
    """Hold the main session to the ``--agent`` definition's tools, now and when MCP tools join."""
    session = app.session
    check_tools_left(definition, session.tools)  # the Agent tool is among them by now
    session.set_tools(keep_agent_tools(definition, session.tools))
    if mcp is not None:
        mcp.on_ready(lambda _ready: session.set_tools(keep_agent_tools(definition, session.tools)))


def _session_effort(
    options: RunOptions, main_agent: AgentDefinition | None, settings: Any, env: Mapping[str, str]
) -> Effort | None:
    """The main session's effort: the option, else the ``--agent`` definition's, else ``CLAUDE_CODE_EFFORT_LEVEL``,
    else the ``effortLevel`` setting (a bad setting is a warning and is ignored, as other settings problems are)."""
    if options.effort is not None:
        return options.effort
    if main_agent is not None and main_agent.effort is not None:
        return main_agent.effort
    from_env = parse_effort(env.get("CLAUDE_CODE_EFFORT_LEVEL"), "CLAUDE_CODE_EFFORT_LEVEL")
    if from_env is not None:
        return from_env
    files = [f for f in settings.files if "effortLevel" in f.data]
    where = str(files[-1].path) if files and files[-1].path is not None else "--settings"
    try:
        return parse_effort(settings.merged.get("effortLevel"), f"{where}: effortLevel")
    except ConfigurationError as exc:
        settings.warnings.append(f"{exc}; the setting is ignored")
        return None


def _model_origin(cli_model: str | None, settings: Any, env: Mapping[str, str]) -> str:
    """Where a model that failed to resolve was configured (a prefix for the error), when not on the command line."""
    if cli_model:
        return ""
    configured = settings.merged.get("model")
    if isinstance(configured, str) and configured.strip() and configured.strip().lower() != "default":
        files = [f for f in settings.files if "model" in f.data]
        where = str(files[-1].path) if files and files[-1].path is not None else "--settings"
        return f"{where}: the `model` setting: "
    for name in ("CATUI_MODEL", "ANTHROPIC_MODEL"):
        if env.get(name):
            return f"{name}: "
    return ""


def _web_search_backend(
    provider: Any, model_id: str, settings: Mapping[str, Any], usage: UsageTracker
) -> SearchBackend | None:
    """WebSearch's backend: the API's server-side search on Anthropic, else a configured SearXNG endpoint."""
    if getattr(provider, "name", "") == "anthropic":
        return AnthropicServerSearch(provider, model_id, usage.add)
    url = searxng_url(settings)
    return SearxngSearch(url) if url is not None else None


def _offers_search_tools(permissions: Any) -> bool:
    """Whether Glob and Grep survive the deny rules (a whole-tool deny removes a tool from the session)."""

    return not any(denies_tool_outright(rule, name) for rule in permissions.rules for name in ("Glob", "Grep"))


def _plugin_paths(settings: Mapping[str, Any]) -> list[str]:
    entries = settings.get("plugins") or []
    paths: list[str] = []
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, str):
                paths.append(entry)
            elif isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
                paths.append(entry["path"])
    return paths


async def start_app(app: AgentApp) -> None:
    """Start-up work that needs the event loop: sweep stale worktrees, then any hooks others registered.

    Failures here never stop a run; they are reported as warnings on stderr by the CLI.
    """

    try:
        await sweep_at_startup(app.project_root)
    except Exception as exc:  # a broken sweep must not block the user's work
        app.services.startup_warnings.append(f"stale worktree sweep failed: {exc}")
    for starter in list(app.services.startup_hooks):
        await starter(app)


def first_prompt_content(app: AgentApp, prompt: str) -> list[dict[str, Any]]:
    """The first user message: the context reminder, the available-skills reminder, then the prompt (after the
    ``--agent``'s initialPrompt, once)."""
    blocks = [app.services.context_block] if app.services.context_block is not None else []
    skills = app.services.skills
    reminder = skills.reminder_text() if skills is not None else None
    if reminder is not None and any(t.name == SkillTool.name for t in app.session.tools):
        blocks.append({"type": "text", "text": reminder})
    initial, app.services.initial_prompt = app.services.initial_prompt, None
    return [*blocks, {"type": "text", "text": with_initial_prompt(initial, prompt)}]
