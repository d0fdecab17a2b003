"""Application wiring: builds the main agent's session from options and settings.

The CLI and the SDK both describe a run with :class:`RunOptions` and get an
:class:`AgentApp` back: the main :class:`~catui.session.session.Session` plus
the registries it shares with its sub-agents (agent definitions, background
tasks, usage). Everything heavy is imported here, not at ``import catui``.

The parts: options (``app.options``), the app and its services
(``app.services``), the tool set (``app.tool_set``), the system prompt and first
message (``app.prompt``), effort/thinking/sandbox/model-origin settings
(``app.config``), the compatibility profile's deferred tools (``app.deferred``)
and hook fields (``app.hook_fields``); this module puts them together.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition
from catui.agents.registry import load_agent_registry
from catui.app.config import bash_sandbox, model_origin, session_effort, session_thinking
from catui.app.deferred import install_deferred_tools
from catui.app.main_agent import (
    agent_model,
    find_main_agent,
    inline_mcp_servers,
    main_agent_hooks,
    restrict_tools,
    with_agent_memory,
)
from catui.app.options import RunOptions, effective_env
from catui.app.prompt import first_prompt_content, session_system_prompt, styles_apply
from catui.app.services import AgentApp, AppServices
from catui.app.tool_set import hold_to_agent_tools, offers_search_tools, session_tools, settings_plugin_paths
from catui.config.compat import CompatProfile, resolve_compat
from catui.config.concurrency import tool_use_concurrency
from catui.config.context import git_branch, load_project_memory
from catui.config.settings import load_settings, settings_env, settings_files
from catui.errors import ConfigurationError
from catui.hooks.config import HooksConfig
from catui.hooks.install import install_hooks
from catui.mcp.install import install_mcp
from catui.models.reasoning import effort_level, thinking_is_on
from catui.models.resolve import create_provider, default_max_tokens, resolve_model
from catui.paths import catui_home, find_project_root, sessions_dir, state_db_file
from catui.permissions.from_settings import permission_context_from_settings
from catui.session.budget import SessionBudget
from catui.session.claude_link import transcript_linker
from catui.session.context_window import context_policy
from catui.session.events import SystemEvent
from catui.session.file_history import FileHistory, checkpointing_enabled
from catui.session.prompt import context_block
from catui.session.resume import ResumeRequest, carry_history, plan_resume
from catui.session.session import Session, SessionConfig, new_session_id
from catui.session.transcript import TranscriptWriter
from catui.session.usage import UsageTracker
from catui.styles.active import session_style
from catui.styles.model import OutputStyle
from catui.subagents.install import SubagentHandle, SubagentParts, install_subagents
from catui.tasks.registry import TaskRegistry
from catui.tasks.schedule import SCHEDULE_FILE, CronSchedule
from catui.telemetry.switch import start_telemetry
from catui.tools.base import ShellReports, ToolContext, ToolServices
from catui.tools.web_search_backends import NO_BACKEND_REASON
from catui.workflows.install import install_workflows

__all__ = [
    "AgentApp", "AppServices", "RunOptions", "build_app", "effective_env", "first_prompt_content", "start_app",
]


def build_app(options: RunOptions) -> AgentApp:
    """Load settings, resolve the model, and assemble the main session. Raises ConfigurationError."""

    cwd = options.cwd.resolve()
    if not cwd.is_dir():
        raise ConfigurationError(f"working directory {cwd} does not exist")
    project_root = find_project_root(cwd)
    settings = load_settings(cwd, sources=options.setting_sources, extra=options.settings_arg)
    env = effective_env(options, settings_env(settings))
    compat = resolve_compat(settings.merged, env, options.compat)
    if compat.model_aliases():  # the profile's alias targets; modelAliases in settings still win
        configured = settings.merged.get("modelAliases")
        settings.merged["modelAliases"] = {
            **compat.model_aliases(), **(configured if isinstance(configured, dict) else {})}

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
        return settings_plugin_paths(fresh.merged)

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
        search_tools=offers_search_tools(permissions),
        current_contract=compat.current,
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
            else model_origin(options.model, settings, env)
        )
        raise ConfigurationError(f"{origin}{exc}") from None
    provider = create_provider(resolved, settings.merged, env)
    effort = session_effort(options, main_agent, settings, env)
    thinking = session_thinking(options, env)

    tasks = TaskRegistry(project_root)
    resume_request = ResumeRequest(resume=options.resume, continue_conversation=options.continue_conversation,
                                   fork_session=options.fork_session, session_id=options.session_id,
                                   resume_at=options.resume_session_at, drops_turn=options.resume_drops_turn)
    resumed = plan_resume(resume_request, cwd, new_id=options.session_id or new_session_id())
    session_id = resumed.session_id

    transcript_path: Path | None = None
    transcript: TranscriptWriter | None = None
    if options.write_transcript:
        transcript_path = sessions_dir(cwd) / f"{session_id}.jsonl"
        transcript = TranscriptWriter([transcript_path], session_id=session_id, cwd=cwd, git_branch=git_branch(cwd),
                                      on_created=transcript_linker(cwd, session_id, env),
                                      on_line=options.transcript_mirror)
        carry_history(transcript, resumed)

    sandbox = bash_sandbox(settings, options.sandbox, cwd)
    if sandbox is not None and sandbox.settings.auto_allow_bash_if_sandboxed and sandbox.availability.usable:
        permissions = permissions.with_sandboxed_bash(sandbox.settings.excluded_commands)
    # Shell commands see the variables of settings' `env` and the SDK's `env` option, not only os.environ.
    schedule = CronSchedule(project_root / SCHEDULE_FILE, clock=options.clock)
    if options.interactive:  # durable prompts come back in the next interactive session (docs/scheduled-prompts.md)
        schedule.restore()
    history = FileHistory(catui_home() / "file-history" / session_id) if checkpointing_enabled(env) else None
    # The main context's tools reach the sub-agent system through this handle. The system needs the main session,
    # so it is installed below, once the session exists (``subagents``), and its runtime built on first use.
    subagent_handle = SubagentHandle(lambda: subagents)
    services = ToolServices(
        env={**settings_env(settings), **(options.env or {})}, tasks=tasks, sandbox=sandbox, schedule=schedule,
        subagents=subagent_handle, output_review=subagent_handle, shell_reports=_shell_reports(compat, tasks),
    )
    ctx = ToolContext(
        cwd=cwd, project_root=project_root, permissions=permissions, interactive=options.interactive,
        services=services,
    )
    usage_tracker = UsageTracker()
    budget = SessionBudget(options.max_budget_usd) if options.max_budget_usd is not None else None
    if budget is not None:
        usage_tracker.listeners.append(budget.observe)

    tools, search_backend, skills = session_tools(
        options, cwd, provider, resolved.model_id, settings.merged, usage_tracker)
    memory = None
    if main_agent is not None:
        tools, ctx.permissions, memory = with_agent_memory(
            main_agent, restrict_tools(main_agent, tools), tools, ctx.permissions, project_root)
    styles = session_style(cwd, settings.merged, plugin_dirs=[*options.plugin_dirs, *settings_plugin_paths(settings.merged)],
                           include_user=("user" in options.setting_sources),
                           include_project=("project" in options.setting_sources))
    system = session_system_prompt(options, main_agent, cwd, resolved.model_id,
                                   active_agents=list(registry.active), tools=tools, memory=memory,
                                   style=styles.style)

    window = tool_use_concurrency(env, settings.merged)
    hooks = install_hooks(
        settings, session_id=session_id, transcript_path=transcript_path, cwd=cwd, project_root=project_root,
        env=env, extra=_extra_hooks(options, main_agent),
        # the session's tools of the moment (it is built below, and its tool list changes)
        tool_aliases=lambda name: next((t.aliases for t in session.tools if t.name == name), ()),
        report_runs=hook_run_reporter(lambda: session) if options.include_hook_events else None)
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
        idle_events=options.idle_events,
        include_partial_messages=options.include_partial_messages,
        usage_tracker=usage_tracker,
        history=list(resumed.messages),
        effort=effort_level(effort) if effort is not None else None,
        thinking=thinking if thinking_is_on(thinking) else None,
        max_tool_use_concurrency=window.value,
        context_policy=context_policy(env, settings.merged),
        budget=budget,
        file_history=history,
        telemetry=start_telemetry(env),  # None (and nothing of OpenTelemetry imported) unless turned on
        hooks=None if hooks.config.is_empty else hooks,
    )
    if options.fallback_model:
        fallback = resolve_model(options.fallback_model, settings.merged, env, within=resolved)
        config.fallback = (create_provider(fallback, settings.merged, env), fallback.model_id)
    session = Session(config)
    # A resumed conversation carries its context reminder in its first message already.
    first_context = None if resumed.messages else context_block(_project_memory(options, cwd, project_root))
    warnings = [*resumed.warnings, *(str(w) for w in registry.warnings if w.at_start), *schedule.restore_warnings]
    if styles.warning is not None:
        warnings.append(styles.warning)
    # /output-style and the SDK rebuild the prompt with another style; the environment and git snapshot stay
    restyle = _restyler(options, cwd, resolved.model_id) if styles_apply(options, main_agent) else None
    if window.warning is not None:
        warnings.append(window.warning)
    if compat.current:
        from catui.app.hook_fields import install_current_hook_fields  # lazy (catui.lazy): current profile

        install_current_hook_fields(hooks, session, tasks, schedule)
    mcp = install_mcp(
        session, settings, cwd=options.cwd, project_root=project_root, env=env, sources=options.setting_sources,
        extra_servers={**(inline_mcp_servers(main_agent) if main_agent is not None else {}),
                       **(options.mcp_servers or {})},
        strict=options.strict_mcp_config,
        sdk_transport=options.sdk_mcp_transport,
    )
    subagents = install_subagents(SubagentParts(
        session=session, registry=registry, settings=settings.merged, env=env, project_root=project_root, cwd=cwd,
        tasks=tasks, load_project_memory=bool(set(options.setting_sources) & {"user", "project"}),
        resolved_model=resolved, skills=skills, hooks=hooks, mcp=mcp, executor=options.executor,
        remote_foreground=options.remote_foreground, warnings=warnings, compat=compat,
    ))
    workflows = install_workflows(session, options, settings.merged, {**os.environ, **env}, compat, subagents, tasks,
                                  skills)
    app = AgentApp(
        session=session,
        options=options,
        settings=settings,
        registry=registry,
        tasks=tasks,
        project_root=project_root,
        transcript_path=transcript_path,
        model_display=resolved.display,
        resolved_model=resolved,
        # An agent's initialPrompt opens a conversation; a resumed one was opened already.
        initial_prompt=main_agent.initial_prompt if main_agent is not None and not resumed.messages else None,
        services=AppServices(
            env=env, compat=compat, context_block=first_context, subagents=subagents, skills=skills, hooks=hooks,
            mcp=mcp, startup_warnings=warnings, main_agent=main_agent,
            unavailable_tools={"WebSearch": NO_BACKEND_REASON} if search_backend is None else {},
            budget=budget, output_style=styles, restyle=restyle, workflows=workflows,
        ),
    )
    if budget is not None:
        budget.on_exceeded.append(lambda: _stop_for_budget(app))
    # Built on first use: sub-agents that inherit take the main agent's model of that moment (/model before it,
    # through SubagentSystem.follow_model).
    if resumed.source is not None:  # the old session's finished background tasks come back as history
        from catui.tasks.history import restore_session_tasks  # lazy (catui.lazy): resumed sessions only

        restore_session_tasks(tasks, resumed.source.stem, session_id)
    if main_agent is not None:
        hold_to_agent_tools(app, main_agent, mcp)
    install_deferred_tools(app)
    return app


def hook_run_reporter(main: Callable[[], Session]) -> Callable[[str, dict[str, Any]], None]:
    """Hook runs (catui.hooks.lifecycle) as ``system`` events of the ``main`` session's stream (asked at each
    run: the runner is built before the session); a sub-agent's name it in their data (``agent_id``), so they
    stay out of its parent's child messages."""

    def report(subtype: str, data: dict[str, Any]) -> None:
        main().emit(SystemEvent(subtype=subtype, data=data))

    return report


def _project_memory(options: RunOptions, cwd: Path, project_root: Path) -> str | None:
    """The CLAUDE.md / CATUI.md text of the first message's context reminder, or None."""
    if options.memory_by_sources:  # claude-agent-sdk ties it to the setting sources, not to the system prompt
        sources = set(options.setting_sources)
        return load_project_memory(options.cwd, project_root) if sources & {"user", "project"} else None
    return None if options.system_prompt is not None else load_project_memory(cwd, project_root)


def _restyler(options: RunOptions, cwd: Path, model_id: str) -> Callable[[OutputStyle | None], list[dict[str, Any]]]:
    """The main session's system prompt with another output style."""

    def restyle(style: OutputStyle | None) -> list[dict[str, Any]]:
        return session_system_prompt(options, None, cwd, model_id, active_agents=[], tools=[], memory=None,
                                     style=style)

    return restyle


def _shell_reports(compat: CompatProfile, tasks: TaskRegistry) -> ShellReports | None:
    """The current contract's reports of background shells (events, texts, the main agent's notifications)."""
    if not compat.current:
        return None
    from catui.app.shell_reports import MainShellReports  # lazy (catui.lazy): the current profile only

    return MainShellReports(tasks)


def _extra_hooks(options: RunOptions, main_agent: AgentDefinition | None) -> HooksConfig | None:
    """Hooks beyond the settings': the ``--agent`` definition's, then the callable ones."""
    parts = [part for part in (main_agent_hooks(main_agent) if main_agent is not None else None,
                               options.callback_hooks) if part is not None]
    if not parts:
        return None
    return parts[0].merged_with(parts[1]) if len(parts) == 2 else parts[0]


def _stop_for_budget(app: AgentApp) -> None:
    """The budget tripped: abort the main session (its foreground children with it) and stop background agents
    and workflows (a workflow's agents stop with their run)."""
    app.session.abort()
    tasks = app.tasks
    agents = ([t for t in tasks.list() if t.type in ("local_agent", "local_workflow") and t.is_live]
              if tasks is not None else [])
    if tasks is not None and agents:
        # Called from inside a usage update (synchronous); the stops need the loop, so they run as a task.
        stopping = asyncio.ensure_future(asyncio.gather(*(tasks.stop(t.id) for t in agents)))
        app.services.background_stops.add(stopping)
        stopping.add_done_callback(app.services.background_stops.discard)


async def start_app(app: AgentApp) -> None:
    """Start-up work that needs the event loop: sweep stale worktrees, then any hooks others registered.

    Failures here never stop a run; they are reported as warnings on stderr by the CLI.
    """

    try:
        # Only a project with run-time state can have worktrees to sweep (the sweep's own first check).
        if state_db_file(Path(app.project_root)).is_file():
            from catui.worktree.cleanup import sweep_at_startup  # lazy (catui.lazy): git and SQLite

            await sweep_at_startup(app.project_root)
    except Exception as exc:  # a broken sweep must not block the user's work
        app.services.startup_warnings.append(f"stale worktree sweep failed: {exc}")
    for starter in list(app.services.startup_hooks):
        await starter(app)
