"""Application wiring: builds the main agent's session from options and settings.

The CLI and the SDK both describe a run with :class:`RunOptions` and get an
:class:`AgentApp` back: the main :class:`~catui.session.session.Session` plus
the registries it shares with its sub-agents (agent definitions, background
tasks, usage). Everything heavy is imported here, not at ``import catui``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.registry import load_agent_registry
from catui.config.context import environment_block, git_status_snapshot, load_project_memory
from catui.config.settings import load_settings, settings_env, settings_files
from catui.errors import ConfigurationError
from catui.hooks.install import close_hooks, install_hooks
from catui.hooks.runner import HookRunner
from catui.mcp.install import install_mcp
from catui.models.resolve import ResolvedModel, create_provider, default_max_tokens, resolve_model
from catui.paths import find_project_root, sessions_dir
from catui.permissions.from_settings import permission_context_from_settings
from catui.permissions.rules import denies_tool_outright
from catui.sandbox.config import merge_sandbox_values, sandbox_settings_from
from catui.sandbox.policy import BashSandbox
from catui.session.prompt import context_block, main_system_prompt
from catui.session.session import CanUseTool, Session, SessionConfig, new_session_id
from catui.session.transcript import TranscriptWriter
from catui.session.usage import UsageTracker
from catui.subagents.install import install_subagents
from catui.tasks.registry import TaskRegistry
from catui.tools.base import Tool, ToolContext
from catui.tools.registry import builtin_tools
from catui.tools.services import ToolServices
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


@dataclass
class AppServices:
    """What the application's parts share, set as they are installed (build_app, hooks, MCP, sub-agents)."""

    env: dict[str, str] = field(default_factory=dict)
    """The merged environment: os.environ, then the settings' ``env`` block, then the SDK's ``env`` option."""
    context_block: dict[str, Any] | None = None
    """The first user message's context reminder (CLAUDE.md / CATUI.md and the date)."""
    resolved_model: ResolvedModel | None = None
    subagents: SubagentSystem | None = None
    hooks: HookRunner | None = None
    mcp: McpManager | None = None
    startup_warnings: list[str] = field(default_factory=list)
    startup_hooks: list[Callable[[AgentApp], Awaitable[None]]] = field(default_factory=list)
    session_end_done: bool = False
    """SessionEnd hooks run once, whoever closes the app first."""


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
        closer = getattr(self.tasks, "shutdown", None)
        if closer is not None:
            await closer()
        mcp = self.services.mcp
        if mcp is not None:
            await mcp.aclose()
        await self.session.config.provider.aclose()


def effective_env(options: RunOptions, settings_env: Mapping[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(settings_env)
    if options.env:
        env.update(options.env)
    return env


def git_branch(cwd: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


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

    try:
        resolved = resolve_model(options.model, settings.merged, env)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{_model_origin(options.model, settings, env)}{exc}") from None
    provider = create_provider(resolved, settings.merged, env)

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
    tasks = TaskRegistry(project_root)
    session_id = options.session_id or new_session_id()

    transcript_path: Path | None = None
    transcript: TranscriptWriter | None = None
    if options.write_transcript:
        transcript_path = sessions_dir(cwd) / f"{session_id}.jsonl"
        transcript = TranscriptWriter([transcript_path], session_id=session_id, cwd=cwd, git_branch=git_branch(cwd))

    sandbox = _bash_sandbox(settings, options.sandbox, cwd)
    if sandbox is not None and sandbox.settings.auto_allow_bash_if_sandboxed and sandbox.availability.usable:
        permissions = permissions.with_sandboxed_bash(sandbox.settings.excluded_commands)
    # Shell commands see the variables of settings' `env` and the SDK's `env` option, not only os.environ.
    services = ToolServices(env={**settings_env(settings), **(options.env or {})}, tasks=tasks, sandbox=sandbox)
    ctx = ToolContext(
        cwd=cwd, project_root=project_root, permissions=permissions, interactive=options.interactive,
        services=services,
    )
    usage_tracker = UsageTracker()

    tools = builtin_tools(interactive=options.interactive)
    tools = [t for t in tools if t.is_enabled()]
    tools.extend(options.extra_tools)

    if options.system_prompt is not None:
        system = [{"type": "text", "text": options.system_prompt}]
        if options.append_system_prompt:
            system.append({"type": "text", "text": options.append_system_prompt})
    else:
        system = main_system_prompt(
            environment_block(cwd, resolved.model_id, additional_dirs=tuple(Path(d) for d in options.add_dirs)),
            git_status_snapshot(cwd),
            options.append_system_prompt,
        )

    config = SessionConfig(
        provider=provider,
        model=resolved.model_id,
        tools=tools,
        tool_context=ctx,
        system_prompt=system,
        session_id=session_id,
        max_turns=options.max_turns,
        max_tokens=default_max_tokens(resolved.model_id),
        transcript=transcript,
        can_use_tool=options.can_use_tool,
        include_partial_messages=options.include_partial_messages,
        usage_tracker=usage_tracker,
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
    app.services.context_block = context_block(
        None if options.system_prompt is not None else load_project_memory(cwd, project_root)
    )
    app.services.env = env
    app.services.resolved_model = resolved
    install_subagents(app)

    install_hooks(app)
    install_mcp(app)
    return app


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
    """The first user message: the context reminder, then the prompt verbatim."""
    blocks = [app.services.context_block] if app.services.context_block is not None else []
    return [*blocks, {"type": "text", "text": prompt}]
