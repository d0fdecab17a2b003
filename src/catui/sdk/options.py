"""``CatuiOptions``: what a library caller says about a run, and how it maps onto :class:`RunOptions`.

Field names and defaults follow claude-agent-sdk's ``ClaudeAgentOptions``:
``setting_sources=None`` reads every settings source as the CLI does (``[]``
reads none), and ``system_prompt=None`` gives the minimal prompt (no catui
main prompt; the preset ``{"type": "preset", "preset": "claude_code"}`` asks
for it). See docs/decisions.md.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from catui.app.output_format import StructuredResult, output_schema_from
from catui.errors import ConfigurationError
from catui.models.reasoning import parse_effort, parse_thinking_config, thinking_from_budget
from catui.permissions.context import PERMISSION_MODES
from catui.sdk.hooks import hooks_option_config
from catui.sdk.permissions import (
    CanUseToolCallback,
    CanUseToolShadowedWarning,
    decision_from_result,
    permission_bridge,
    shadowed_can_use_tool,
)
from catui.session.budget import check_budget_amount

if TYPE_CHECKING:
    from catui.app.options import RunOptions
    from catui.session.events import Event
    from catui.tools.base import Tool

SETTING_SOURCES: tuple[str, ...] = ("user", "project", "local")

# claude-agent-sdk's type names for option values.
SettingSource = Literal["user", "project", "local"]
EffortLevel = Literal["low", "medium", "high", "xhigh", "max"]


class SdkPluginConfig(TypedDict):
    """One entry of ``plugins``: ``{"type": "local", "path": "/path/to/plugin"}``."""

    type: Literal["local"]
    path: str


class ThinkingConfig(TypedDict, total=False):
    """``{"type": "adaptive"}``, ``{"type": "enabled", "budget_tokens": N}`` or ``{"type": "disabled"}``."""

    type: Literal["adaptive", "enabled", "disabled"]
    budget_tokens: int

# Re-exported: the bridge lives with the permission types it speaks.
__all__ = [
    "CanUseToolCallback",
    "CatuiOptions",
    "EffortLevel",
    "SdkPluginConfig",
    "SettingSource",
    "ThinkingConfig",
    "decision_from_result",
    "permission_bridge",
    "run_options_from",
]


@dataclass
class CatuiOptions:
    """Options of :func:`catui.query` and :class:`catui.CatuiClient` (claude-agent-sdk's names, snake_case).

    ``agents`` maps agent type names to :class:`catui.AgentDefinition` objects
    (or dicts with the same fields). ``tools`` is claude-agent-sdk's base set of
    built-in tools (names such as ``["Read", "Grep"]``, ``[]`` for none, or
    ``{"type": "preset", "preset": "claude_code"}`` for all); it may also hold
    extra in-process tools made with :func:`catui.tool` (an :class:`SdkMcpServer`
    too; its tools get ``mcp__<server>__`` names). ``can_use_tool`` is asked whenever the
    permission rules say "ask"; without it such calls are refused.
    ``system_prompt`` replaces catui's main prompt (a str) or keeps it (None, or
    claude-agent-sdk's ``{"type": "preset", "preset": "claude_code", "append": ...}``),
    ``{"type": "custom", "prompt": ...}`` or ``{"type": "file", "path": ...}``; None gives a minimal prompt.
    ``resume`` (a session id) or ``continue_conversation`` (the latest session
    of ``cwd``) start from a saved conversation; with ``fork_session`` it is
    continued under a new id and the old transcript is left as it was.
    ``sandbox`` has the ``sandbox`` setting's shape (``{"enabled": True}``) and is laid over it (docs/sandbox.md).
    """

    agents: dict[str, Any] | None = None
    model: str | None = None
    fallback_model: str | None = None
    max_turns: int | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    can_use_tool: CanUseToolCallback | None = None
    system_prompt: str | dict[str, Any] | None = None
    append_system_prompt: str | None = None
    cwd: str | Path | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    sandbox: dict[str, Any] | None = None
    setting_sources: list[str] | None = None
    settings: str | None = None
    tools: list[Any] | dict[str, Any] | None = None
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    plugin_dirs: list[str | Path] = field(default_factory=list)
    include_partial_messages: bool = False
    session_id: str | None = None
    write_transcript: bool = True
    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    effort: str | int | None = None
    """``low``, ``medium``, ``high``, ``xhigh``, ``max`` (claude-agent-sdk's EffortLevel) or a positive integer."""
    thinking: dict[str, Any] | None = None
    """claude-agent-sdk's ThinkingConfig: ``{"type": "enabled", "budget_tokens": N}``, ``adaptive`` or ``disabled``;
    wins over ``max_thinking_tokens``."""
    max_thinking_tokens: int | None = None
    """The older way to give a thinking budget (0 = off)."""
    agent: str | None = None
    """Run the main session as this agent definition (the CLI's ``--agent``)."""
    output_format: dict[str, Any] | None = None
    """``{"type": "json_schema", "schema": {...}}``: the answer comes back validated in
    ``ResultMessage.structured_output`` (docs/sdk.md, "Structured output")."""
    forward_subagent_text: bool = False
    """Show sub-agents' text and thinking too; by default their messages carry only tool calls and results."""
    include_hook_events: bool = False
    """Show hooks running as ``HookEventMessage`` (``hook_started`` / ``hook_response``)."""
    stderr: Callable[[str], None] | None = None
    """Called with each line of catui's warnings and errors (its log, and start-up warnings) while the client is
    open; a clean run writes none."""
    plugins: list[dict[str, Any]] = field(default_factory=list)
    """``[{"type": "local", "path": "..."}]``: plugin folders, like ``plugin_dirs``."""
    hooks: dict[str, list[Any]] | None = None
    """Hooks as Python functions: ``{"PreToolUse": [HookMatcher(matcher="Bash", hooks=[fn])]}`` (catui.sdk.hooks)."""
    executor: str | None = None
    """Where sub-agents run: ``"in-process"`` or ``"ray"`` (background agents on a Ray cluster, docs/ray.md);
    None leaves it to ``CATUI_EXECUTOR`` and the ``executor`` setting."""
    max_budget_usd: float | None = None
    """Stop once the session and all its sub-agents have cost this many US dollars (result ``error_max_budget_usd``)."""
    compat: str | None = None
    """Which Claude Code sub-agent contract to follow: ``"2.1.92"`` (the default) or ``"2.1.332"`` (the current
    one); None leaves it to ``CATUI_COMPAT`` and the ``compat`` setting (docs/compat.md)."""
    enable_file_checkpointing: bool = False
    """Keep the files' state before each prompt's edits, so that :meth:`CatuiClient.rewind_files` can restore them."""
    replay_user_messages: bool = False
    """Also yield each prompt as a :class:`UserMessage` whose ``uuid`` ``rewind_files`` takes
    (claude-agent-sdk: ``extra_args={"replay-user-messages": None}``)."""


def run_options_from(
    options: CatuiOptions,
    *,
    abort_run: Callable[[], None] | None = None,
    on_permission_updates: Callable[[list[Any]], None] | None = None,
    structured: StructuredResult | None = None,
    idle_events: Callable[[Event], None] | None = None,
) -> RunOptions:
    """Validate ``options`` and build the RunOptions of a fresh app. Raises ConfigurationError.

    ``structured`` is the client's :class:`~catui.app.output_format.StructuredResult` when
    ``output_format`` is set: its tool joins the run's tools and its instructions the system prompt.
    """
    from catui.app.options import RunOptions

    if not isinstance(options, CatuiOptions):
        raise ConfigurationError(f"options must be a catui.CatuiOptions, not {type(options).__name__}")
    _check_shapes(options)
    cwd = Path(options.cwd).expanduser() if options.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        raise ConfigurationError(f"CatuiOptions.cwd: {cwd} is not a directory")
    if options.permission_mode is not None and options.permission_mode not in PERMISSION_MODES:
        raise ConfigurationError(
            f"CatuiOptions.permission_mode: unknown mode {options.permission_mode!r}; "
            f"use one of {', '.join(PERMISSION_MODES)}"
        )
    if options.max_turns is not None and (not isinstance(options.max_turns, int) or options.max_turns < 1):
        raise ConfigurationError(f"CatuiOptions.max_turns must be a positive integer, not {options.max_turns!r}")
    # claude-agent-sdk: None reads every source (as the CLI does), [] none.
    sources = tuple(options.setting_sources) if options.setting_sources is not None else SETTING_SOURCES
    bad = [s for s in sources if s not in SETTING_SOURCES]
    if bad:
        raise ConfigurationError(
            f"CatuiOptions.setting_sources: unknown source {bad[0]!r}; use any of {', '.join(SETTING_SOURCES)}"
        )
    system_prompt, append = _system_prompt(options)
    output_schema_from(options.output_format)  # checked here too, for callers that build RunOptions directly
    if structured is not None:
        append = "\n\n".join(a for a in (append, structured.instructions) if a)
    tools = extra_tools(options) + ([structured.tool] if structured is not None else [])
    if options.can_use_tool is not None:
        shadowed = shadowed_can_use_tool(options.allowed_tools, options.permission_mode)
        if shadowed is not None:
            warnings.warn(shadowed, CanUseToolShadowedWarning, stacklevel=3)
    return RunOptions(
        idle_events=idle_events,
        memory_by_sources=True,
        cwd=cwd,
        model=options.model,
        fallback_model=options.fallback_model,
        max_turns=options.max_turns,
        permission_mode=options.permission_mode,
        allowed_tools=list(options.allowed_tools),
        disallowed_tools=[*options.disallowed_tools, *_tools_left_out(options.tools)],
        system_prompt=system_prompt,
        append_system_prompt=append,
        settings_arg=options.settings,
        setting_sources=sources,
        sdk_agents=_agents(options.agents),
        plugin_dirs=[str(p) for p in options.plugin_dirs] + _local_plugins(options.plugins),
        add_dirs=[str(Path(d).expanduser()) for d in options.add_dirs],
        interactive=False,
        include_partial_messages=options.include_partial_messages,
        extra_tools=tools,
        # External servers' configs join .mcp.json's, as --mcp-config's do; in-process ones are tools above.
        mcp_servers={k: dict(v) for k, v in options.mcp_servers.items() if isinstance(v, Mapping)} or None,
        can_use_tool=(
            permission_bridge(options.can_use_tool, abort_run, on_permission_updates) if options.can_use_tool else None
        ),
        # The variable claude-agent-sdk sets for its CLI, so both drivers turn checkpointing on the same way.
        env={**options.env, **({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}
                               if options.enable_file_checkpointing is True else {})},
        sandbox=_sandbox_option(options.sandbox),
        session_id=options.session_id,
        write_transcript=options.write_transcript,
        resume=options.resume,
        continue_conversation=options.continue_conversation,
        fork_session=options.fork_session,
        effort=parse_effort(options.effort, "CatuiOptions.effort"),
        thinking=_thinking(options),
        agent=options.agent,
        agent_origin="CatuiOptions.agent",
        callback_hooks=hooks_option_config(options.hooks),
        include_hook_events=options.include_hook_events is True,
        executor=options.executor,
        max_budget_usd=check_budget_amount(options.max_budget_usd, "CatuiOptions.max_budget_usd"),
        compat=options.compat,
    )


def _thinking(options: CatuiOptions) -> dict[str, Any] | None:
    """The run's thinking config: ``thinking`` when given (even ``disabled``), else ``max_thinking_tokens``."""
    if options.thinking is not None:
        return parse_thinking_config(options.thinking, "CatuiOptions.thinking")
    return thinking_from_budget(options.max_thinking_tokens, "CatuiOptions.max_thinking_tokens")


def _sandbox_option(value: Any) -> dict[str, Any] | None:
    """The ``sandbox`` option: the settings' shape (``{"enabled": True, ...}``); checked field by field later."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f"CatuiOptions.sandbox must be a dict like {{'enabled': True}}, not {type(value).__name__}"
        )
    return dict(value)


_SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def _check_shapes(options: CatuiOptions) -> None:
    """Refuse values of the wrong type before anything iterates them (``allowed_tools="Bash"`` is 4 rules)."""
    for name in ("model", "fallback_model", "append_system_prompt", "settings", "agent"):
        value = getattr(options, name)
        if value is not None and not isinstance(value, str):
            raise ConfigurationError(f"CatuiOptions.{name} must be a string or None, not {type(value).__name__}")
    if options.cwd is not None and not isinstance(options.cwd, str | PathLike):
        raise ConfigurationError(f"CatuiOptions.cwd must be a path (str or Path), not {type(options.cwd).__name__}")
    for name in ("allowed_tools", "disallowed_tools"):
        value = getattr(options, name)
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
            raise ConfigurationError(
                f"CatuiOptions.{name} must be a list of rule strings such as [\"Read\", \"Bash(git status:*)\"], "
                f"not {value!r}"
            )
    for name in ("add_dirs", "plugin_dirs"):
        value = getattr(options, name)
        if not isinstance(value, list | tuple) or not all(isinstance(item, str | PathLike) for item in value):
            raise ConfigurationError(f"CatuiOptions.{name} must be a list of paths, not {value!r}")
    if options.setting_sources is not None and not isinstance(options.setting_sources, list | tuple):
        raise ConfigurationError(
            f"CatuiOptions.setting_sources must be a list such as [\"project\"], not {options.setting_sources!r}"
        )
    env = options.env
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigurationError(
            "CatuiOptions.env must be a dict of strings to strings (environment variables), "
            f"not {env!r}"[:300]
        )
    if options.tools is not None and not isinstance(options.tools, list | tuple | Mapping):
        raise ConfigurationError(
            "CatuiOptions.tools must be a list (built-in tool names and tools made with @catui.tool) or "
            f'{{"type": "preset", "preset": "claude_code"}}, not {type(options.tools).__name__}'
        )
    if not isinstance(options.mcp_servers, Mapping):
        raise ConfigurationError(
            "CatuiOptions.mcp_servers must be a dict {name: create_sdk_mcp_server(...) or a server config such as "
            '{"command": "python", "args": ["server.py"]}}'
        )
    if options.resume is not None and (not isinstance(options.resume, str) or not _SESSION_ID_PATTERN.match(options.resume)):
        raise ConfigurationError(
            f"CatuiOptions.resume {options.resume!r} is not a session id: pass the session_id of a saved session "
            "(catui.list_sessions() lists them)"
        )
    for name in ("continue_conversation", "fork_session"):
        if not isinstance(getattr(options, name), bool):
            raise ConfigurationError(f"CatuiOptions.{name} must be True or False, not {getattr(options, name)!r}")
    if options.stderr is not None and not callable(options.stderr):
        raise ConfigurationError("CatuiOptions.stderr must be a function taking one line (str), or None")
    for name in ("forward_subagent_text", "include_hook_events", "enable_file_checkpointing", "replay_user_messages"):
        if not isinstance(getattr(options, name), bool):
            raise ConfigurationError(f"CatuiOptions.{name} must be True or False, not {getattr(options, name)!r}")
    session_id = options.session_id
    if session_id is not None and (not isinstance(session_id, str) or not _SESSION_ID_PATTERN.match(session_id)):
        # It names the transcript file: a path separator would write outside the projects folder.
        raise ConfigurationError(
            f"CatuiOptions.session_id {session_id!r} is not usable: use a UUID (str(uuid.uuid4())) or letters, "
            "digits, '-' and '_' (at most 128)"
        )


def _system_prompt(options: CatuiOptions) -> tuple[str | None, str | None]:
    """(replacement prompt, appended text). None keeps catui's prompt; "" is claude-agent-sdk's minimal one."""
    value = options.system_prompt
    if value is None:
        return "", options.append_system_prompt
    if isinstance(value, str):
        return value, options.append_system_prompt
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "preset" and value.get("preset", "claude_code") == "claude_code":
        appended = [a for a in (value.get("append"), options.append_system_prompt) if a]
        return None, "\n\n".join(appended) if appended else None
    if kind == "custom" and isinstance(value.get("prompt"), str):
        return value["prompt"], options.append_system_prompt
    if kind == "file" and isinstance(value.get("path"), str | PathLike):
        path = Path(value["path"]).expanduser()
        if not path.is_absolute() and options.cwd is not None:
            path = Path(options.cwd).expanduser() / path
        try:
            return path.read_text(encoding="utf-8"), options.append_system_prompt
        except OSError as exc:
            raise ConfigurationError(
                f"CatuiOptions.system_prompt: cannot read the prompt file {path}: {exc.strerror or exc}"
            ) from None
    raise ConfigurationError(
        "CatuiOptions.system_prompt must be a string, None, "
        '{"type": "preset", "preset": "claude_code", "append": "..."}, {"type": "custom", "prompt": "..."} '
        'or {"type": "file", "path": "..."}'
    )


def _local_plugins(plugins: Any) -> list[str]:
    """The folders of ``plugins=[{"type": "local", "path": ...}]``."""
    if not isinstance(plugins, list | tuple):
        raise ConfigurationError(f'CatuiOptions.plugins must be a list like [{{"type": "local", "path": "..."}}], not {plugins!r}')
    paths: list[str] = []
    for index, plugin in enumerate(plugins):
        if not isinstance(plugin, Mapping) or plugin.get("type") != "local":
            raise ConfigurationError(
                f"CatuiOptions.plugins[{index}]: {plugin!r} is not supported; catui loads local plugins: "
                '{"type": "local", "path": "/path/to/plugin"}'
            )
        path = plugin.get("path")
        if not isinstance(path, str | PathLike) or not str(path).strip():
            raise ConfigurationError(f"CatuiOptions.plugins[{index}] needs a \"path\" to the plugin folder")
        paths.append(str(Path(path).expanduser()))
    return paths


def _tools_left_out(tools: Any) -> list[str]:
    """The built-in tools ``tools`` leaves out, as deny rules (as ``--tools``): none when unset or the preset.

    Deny rules, not a shorter list, so that sub-agents (which inherit the rules) lose them too.
    """
    if tools is None:
        return []
    if isinstance(tools, Mapping):
        if tools.get("type") == "preset" and tools.get("preset") == "claude_code":
            return []
        raise ConfigurationError(
            'CatuiOptions.tools: the only preset is {"type": "preset", "preset": "claude_code"} (every built-in tool)'
        )
    names = [item for item in tools if isinstance(item, str)]
    if not names and any(not isinstance(item, str) for item in tools):
        return []  # only in-process tools were given: the built-ins stay
    # Imported here: the tool registry loads every tool module (and pydantic), which creating a client does not need.
    from catui.app.tool_names import builtin_tool_names, tools_left_out

    return tools_left_out(",".join(names), builtin_tool_names(interactive=False), "CatuiOptions.tools")


def _agents(agents: Mapping[str, Any] | None) -> dict[str, Any] | None:
    from catui.agents.definition import AgentDefinition

    if agents is None:
        return None
    if not isinstance(agents, Mapping):
        raise ConfigurationError("CatuiOptions.agents must be a dict of agent type → AgentDefinition")
    for name, definition in agents.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(f"CatuiOptions.agents: agent type names must be non-empty strings, not {name!r}")
        if isinstance(definition, AgentDefinition):
            # Dicts are checked by the registry; an object skipped that (claude-agent-sdk requires both fields).
            for required in ("description", "prompt"):
                if not getattr(definition, required).strip():
                    raise ConfigurationError(
                        f"CatuiOptions.agents: agent '{name}' needs a non-empty {required} "
                        f"(AgentDefinition(description=..., prompt=...))"
                    )
    return dict(agents)


def extra_tools(options: CatuiOptions) -> list[Tool]:
    """The in-process tools of ``tools`` and ``mcp_servers``, checked for duplicate names."""
    given = options.tools if isinstance(options.tools, list | tuple) else []
    if all(isinstance(item, str) for item in given) and all(
        isinstance(server, Mapping) for server in options.mcp_servers.values()
    ):
        return []  # built-in tools' names and external servers' configs only: no in-process tool
    # Imported here, not at the top: they load pydantic, which a query without in-process tools does not need.
    from catui.sdk.tools import SdkMcpServer
    from catui.tools.base import Tool

    tools: list[Tool] = []
    for item in given:
        if isinstance(item, SdkMcpServer):
            tools.extend(item.prefixed_tools())
        elif isinstance(item, Tool):
            tools.append(item)
        elif isinstance(item, str):
            continue  # a built-in tool's name: base_tool_names reads those
        else:
            raise ConfigurationError(
                f"CatuiOptions.tools: {item!r} is neither a built-in tool's name nor a tool; decorate an async "
                "function with @catui.tool"
            )
    for key, server in options.mcp_servers.items():
        if isinstance(server, SdkMcpServer):
            tools.extend(server.prefixed_tools(key))
        elif not isinstance(server, Mapping):
            raise ConfigurationError(
                f"CatuiOptions.mcp_servers[{key!r}]: give an in-process server made by create_sdk_mcp_server or "
                'an external server\'s config (stdio: {"command": ..., "args": [...]}; '
                '{"type": "http" | "sse", "url": ...}), not ' + type(server).__name__
            )
    seen: set[str] = set()
    for item in tools:
        if item.name in seen:
            raise ConfigurationError(f"CatuiOptions.tools: two tools are named {item.name!r}")
        seen.add(item.name)
    return tools
