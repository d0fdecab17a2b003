"""``CatuiOptions``: what a library caller says about a run, and how it maps onto :class:`RunOptions`.

Field names follow claude-agent-sdk's ``ClaudeAgentOptions``. One default
differs from the CLI on purpose: ``setting_sources`` is empty, so a library
call reads no settings files, agent folders or CLAUDE.md unless asked to.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError, ConfigurationError
from catui.models.reasoning import parse_effort, parse_thinking_config, thinking_from_budget
from catui.permissions.context import PERMISSION_MODES, PermissionDecision, PermissionRequest
from catui.sdk_types import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from catui.session.budget import check_budget_amount

if TYPE_CHECKING:
    from catui.app import RunOptions
    from catui.session.session import CanUseTool
    from catui.tools.base import Tool, ToolContext

SETTING_SOURCES: tuple[str, ...] = ("user", "project", "local")

CanUseToolCallback = Callable[
    [str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResultAllow | PermissionResultDeny]
]
"""``async def can_use_tool(tool_name, input, context) -> PermissionResultAllow | PermissionResultDeny``."""


@dataclass
class CatuiOptions:
    """Options of :func:`catui.query` and :class:`catui.CatuiClient` (claude-agent-sdk's names, snake_case).

    ``agents`` maps agent type names to :class:`catui.AgentDefinition` objects
    (or dicts with the same fields). ``tools`` are extra in-process tools made
    with :func:`catui.tool` (an :class:`SdkMcpServer` is accepted too; its tools
    get ``mcp__<server>__`` names). ``can_use_tool`` is asked whenever the
    permission rules say "ask"; without it such calls are refused.
    ``system_prompt`` replaces catui's main prompt (a str) or keeps it (None, or
    claude-agent-sdk's ``{"type": "preset", "preset": "claude_code", "append": ...}``).
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
    tools: list[Any] = field(default_factory=list)
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
    max_budget_usd: float | None = None
    """Stop once the session and all its sub-agents have cost this many US dollars (result ``error_max_budget_usd``)."""


def run_options_from(options: CatuiOptions, *, abort_run: Callable[[], None] | None = None) -> RunOptions:
    """Validate ``options`` and build the RunOptions of a fresh app. Raises ConfigurationError."""
    from catui.app import RunOptions

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
    sources = tuple(options.setting_sources or ())
    bad = [s for s in sources if s not in SETTING_SOURCES]
    if bad:
        raise ConfigurationError(
            f"CatuiOptions.setting_sources: unknown source {bad[0]!r}; use any of {', '.join(SETTING_SOURCES)}"
        )
    system_prompt, append = _system_prompt(options)
    return RunOptions(
        cwd=cwd,
        model=options.model,
        fallback_model=options.fallback_model,
        max_turns=options.max_turns,
        permission_mode=options.permission_mode,
        allowed_tools=list(options.allowed_tools),
        disallowed_tools=list(options.disallowed_tools),
        system_prompt=system_prompt,
        append_system_prompt=append,
        settings_arg=options.settings,
        setting_sources=sources,
        sdk_agents=_agents(options.agents),
        plugin_dirs=[str(p) for p in options.plugin_dirs],
        add_dirs=[str(Path(d).expanduser()) for d in options.add_dirs],
        interactive=False,
        include_partial_messages=options.include_partial_messages,
        extra_tools=extra_tools(options),
        can_use_tool=permission_bridge(options.can_use_tool, abort_run) if options.can_use_tool else None,
        env=dict(options.env),
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
        max_budget_usd=check_budget_amount(options.max_budget_usd, "CatuiOptions.max_budget_usd"),
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
    if not isinstance(options.tools, list | tuple):
        raise ConfigurationError(
            f"CatuiOptions.tools must be a list of tools made with @catui.tool, not {type(options.tools).__name__}"
        )
    if not isinstance(options.mcp_servers, Mapping):
        raise ConfigurationError(
            "CatuiOptions.mcp_servers must be a dict {name: create_sdk_mcp_server(...)}; configure external MCP "
            "servers in .mcp.json or settings"
        )
    if options.resume is not None and (not isinstance(options.resume, str) or not _SESSION_ID_PATTERN.match(options.resume)):
        raise ConfigurationError(
            f"CatuiOptions.resume {options.resume!r} is not a session id: pass the session_id of a saved session "
            "(catui.list_sessions() lists them)"
        )
    for name in ("continue_conversation", "fork_session"):
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
    value = options.system_prompt
    if value is None or isinstance(value, str):
        return value, options.append_system_prompt
    if isinstance(value, Mapping) and value.get("type") == "preset":
        appended = [a for a in (value.get("append"), options.append_system_prompt) if a]
        return None, "\n\n".join(appended) if appended else None
    raise ConfigurationError(
        "CatuiOptions.system_prompt must be a string, None, or "
        '{"type": "preset", "preset": "claude_code", "append": "..."}'
    )


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
    # Imported here, not at the top: they load pydantic, which creating a client does not need.
    from catui.sdk_tools import SdkMcpServer
    from catui.tools.base import Tool

    tools: list[Tool] = []
    for item in options.tools:
        if isinstance(item, SdkMcpServer):
            tools.extend(item.prefixed_tools())
        elif isinstance(item, Tool):
            tools.append(item)
        elif isinstance(item, str):
            raise ConfigurationError(
                f"CatuiOptions.tools: {item!r} is a name; tools holds functions made with @catui.tool. To limit "
                "the built-in tools (claude-agent-sdk's tools=[...]), list the others in disallowed_tools"
            )
        else:
            raise ConfigurationError(
                f"CatuiOptions.tools: {item!r} is not a tool; decorate an async function with @catui.tool"
            )
    for key, server in options.mcp_servers.items():
        if isinstance(server, SdkMcpServer):
            tools.extend(server.prefixed_tools(key))
        else:
            raise ConfigurationError(
                f"CatuiOptions.mcp_servers[{key!r}]: only in-process servers made by create_sdk_mcp_server "
                "go here; configure external MCP servers in .mcp.json or settings"
            )
    seen: set[str] = set()
    for item in tools:
        if item.name in seen:
            raise ConfigurationError(f"CatuiOptions.tools: two tools are named {item.name!r}")
        seen.add(item.name)
    return tools


def permission_bridge(callback: CanUseToolCallback, abort_run: Callable[[], None] | None) -> CanUseTool:
    """Adapt the SDK's ``can_use_tool(name, input, context)`` to the session's permission hook."""
    if not callable(callback):
        raise ConfigurationError("CatuiOptions.can_use_tool must be an async function (tool_name, input, context)")

    async def ask(tool: Tool, raw_input: dict[str, Any], request: PermissionRequest, ctx: ToolContext) -> PermissionDecision:
        context = ToolPermissionContext(
            signal=ctx.abort,
            suggestions=[],
            tool_use_id=_tool_use_id_of(ctx, tool.name, raw_input),
            agent_id=ctx.agent_id,
            agent_type=ctx.agent_type or ("main" if ctx.agent_id is None else None),
            blocked_path=str(request.file_path) if request.file_path is not None else None,
        )
        shown = tool.observable_input(raw_input, ctx)
        try:
            outcome: Any = callback(tool.name, dict(shown), context)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except CatuiError:
            raise
        except Exception as exc:
            raise CatuiError(f"can_use_tool raised {type(exc).__name__}: {exc}") from exc
        if isinstance(outcome, PermissionResultAllow) and outcome.updated_input == shown:
            outcome = replace(outcome, updated_input=None)  # echoing what it was shown is no rewrite
        return decision_from_result(tool.name, raw_input, outcome, ctx, abort_run)

    return ask


def _tool_use_id_of(ctx: ToolContext, tool_name: str, raw_input: dict[str, Any]) -> str | None:
    """The id of the call being decided.

    The session sets it for the running call before any permission check; when
    that is unset (a tool called outside a session), it is looked up in the
    calling agent's last assistant message: the call's input is the very dict of
    its tool_use block, so identity finds it (equality when only one call of
    that tool matches). None when unsure.
    """
    current = ctx.tool_use_id
    if current is not None:
        return current
    session = ctx.services.session
    messages = getattr(session, "messages", None) or []
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "assistant"), None)
    if last is None or not isinstance(last.get("content"), list):
        return None
    uses = [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    for block in uses:
        if block.get("input") is raw_input:
            return str(block.get("id"))
    alike = [b for b in uses if b.get("name") == tool_name and (b.get("input") or {}) == raw_input]
    return str(alike[0].get("id")) if len(alike) == 1 else None


def decision_from_result(
    tool_name: str,
    raw_input: dict[str, Any],
    outcome: Any,
    ctx: ToolContext,
    abort_run: Callable[[], None] | None,
) -> PermissionDecision:
    """Turn the callback's answer into the session's decision (a Deny with ``interrupt`` also stops the run)."""
    if isinstance(outcome, PermissionResultAllow):
        if tool_name == "AskUserQuestion" and isinstance(outcome.updated_input, Mapping):
            # The host answered a sub-agent's question (catui's relay; answers in updated_input["answers"]).
            return PermissionDecision("allow", "answered by can_use_tool", updated_input=dict(outcome.updated_input))
        if outcome.updated_input is not None and outcome.updated_input != raw_input:
            raise ConfigurationError(
                f"can_use_tool returned updated_input for {tool_name}; catui does not support rewriting a "
                "tool call's input yet. Deny the call with a message saying what to do instead."
            )
        return PermissionDecision("allow", "allowed by can_use_tool")
    if isinstance(outcome, PermissionResultDeny):
        if outcome.interrupt:
            ctx.abort.set()
            if abort_run is not None:
                abort_run()
        return PermissionDecision("deny", outcome.message or f"Permission to use {tool_name} was denied.")
    raise CatuiError(
        f"can_use_tool returned {type(outcome).__name__}; return catui.PermissionResultAllow() "
        "or catui.PermissionResultDeny(message=...)"
    )
