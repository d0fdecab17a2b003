"""Hooks as Python functions for the library API, in claude-agent-sdk's shapes.

Pass ``hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check])]}`` in
:class:`catui.CatuiOptions`. Each hook is ``async def check(input_data,
tool_use_id, context) -> HookJSONOutput``; it runs at the same moments as the
settings' command hooks (docs/hooks.md), for the main agent and for every
sub-agent, whose tool events carry ``agent_id`` and ``agent_type``. Its answer
is the JSON a command hook would print: ``{}`` for no opinion,
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision":
"deny", "permissionDecisionReason": ...}}`` to refuse a call, ``{"decision":
"block", "reason": ...}``, ``{"continue_": False}`` and so on (``async_`` and
``continue_`` stand for the keywords ``async`` and ``continue``).

The types below are typing aids with claude-agent-sdk's names and fields; a
plain dict of the same shape works anywhere one is expected. This module
imports nothing heavy: building a client stays cheap.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    from catui.hooks.config import HooksConfig

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "PermissionRequest",
]
"""Event names; catui fires the first nine (it has no compaction, notification or permission-request moment)."""


class BaseHookInput(TypedDict):
    """Fields every event's input has."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: NotRequired[str]


class _SubagentFields(TypedDict, total=False):
    """Present when the event comes from a sub-agent's work: which one."""

    agent_id: str
    agent_type: str


class PreToolUseHookInput(BaseHookInput, _SubagentFields):
    """Before a tool runs."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput, _SubagentFields):
    """After a tool succeeded."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str


class PostToolUseFailureHookInput(BaseHookInput, _SubagentFields):
    """After a tool failed."""

    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: NotRequired[bool]


class UserPromptSubmitHookInput(BaseHookInput):
    """A prompt is about to reach the main agent."""

    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class StopHookInput(BaseHookInput):
    """The main agent is about to end its turn."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]


class SubagentStartHookInput(BaseHookInput):
    """A sub-agent starts."""

    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class SubagentStopHookInput(BaseHookInput):
    """A sub-agent is about to finish."""

    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_transcript_path: str
    agent_type: str
    last_assistant_message: NotRequired[str]


class SessionStartHookInput(BaseHookInput):
    """The conversation starts (``startup``) or is resumed (``resume``)."""

    hook_event_name: Literal["SessionStart"]
    source: str
    model: NotRequired[str]


class SessionEndHookInput(BaseHookInput):
    """The conversation ends."""

    hook_event_name: Literal["SessionEnd"]
    reason: str


HookInput = (
    PreToolUseHookInput
    | PostToolUseHookInput
    | PostToolUseFailureHookInput
    | UserPromptSubmitHookInput
    | StopHookInput
    | SubagentStartHookInput
    | SubagentStopHookInput
    | SessionStartHookInput
    | SessionEndHookInput
)


class PreToolUseHookSpecificOutput(TypedDict):
    """Allow, refuse or ask about the call, or rewrite its input."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    """Context for the model after the call; ``updatedMCPToolOutput`` replaces an MCP tool's output."""

    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedMCPToolOutput: NotRequired[Any]


class PostToolUseFailureHookSpecificOutput(TypedDict):
    """Context for the model after a failed call."""

    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    """Context added to the prompt."""

    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]


class SessionStartHookSpecificOutput(TypedDict):
    """Context added to the conversation's first message."""

    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    """Context added to the sub-agent's first message."""

    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


HookSpecificOutput = (
    PreToolUseHookSpecificOutput
    | PostToolUseHookSpecificOutput
    | PostToolUseFailureHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput
    | SessionStartHookSpecificOutput
    | SubagentStartHookSpecificOutput
)


class AsyncHookJSONOutput(TypedDict):
    """``{"async_": True}``: the hook gives no answer to wait for."""

    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict):
    """A hook's answer. Every field is optional; ``{}`` changes nothing."""

    continue_: NotRequired[bool]
    suppressOutput: NotRequired[bool]
    stopReason: NotRequired[str]
    decision: NotRequired[Literal["block"]]
    systemMessage: NotRequired[str]
    reason: NotRequired[str]
    hookSpecificOutput: NotRequired[HookSpecificOutput]


HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput


class HookContext(TypedDict):
    """The third argument of a hook; ``signal`` is kept for claude-agent-sdk's shape and is always None."""

    signal: Any | None


HookCallback = Callable[[Any, str | None, HookContext], Awaitable[Any]]
"""``async def hook(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput``."""


@dataclass
class HookMatcher:
    """Hooks for the events whose subject ``matcher`` accepts.

    The subject is the tool name for tool events (``"Bash"``, ``"Write|Edit"``,
    a regular expression such as ``"mcp__.*"``), the agent type for
    ``SubagentStart``/``SubagentStop``; None or ``"*"`` accepts everything.
    ``timeout`` is in seconds (600 by default).
    """

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None


def hooks_option_config(hooks: Any, *, where: str = "CatuiOptions.hooks") -> HooksConfig | None:
    """The ``hooks`` option as catui's hook configuration (None when empty). Raises ConfigurationError.

    Accepts catui's :class:`HookMatcher`, claude-agent-sdk's (same attributes)
    and dicts with ``matcher`` / ``hooks`` / ``timeout`` keys.
    """
    # lazy: the hook machinery is needed only when a client connects, not when options are made
    from catui.errors import ConfigurationError
    from catui.hooks.callback import CallbackGroup, callback_hooks_config

    if not hooks:
        return None
    if not isinstance(hooks, Mapping):
        raise ConfigurationError(
            f"{where} must be a dict like {{\"PreToolUse\": [HookMatcher(matcher=\"Bash\", hooks=[check])]}}, "
            f"not {type(hooks).__name__}"
        )
    groups: dict[str, list[CallbackGroup]] = {}
    for event, matchers in hooks.items():
        if not isinstance(matchers, list | tuple):
            raise ConfigurationError(f"{where}[{event!r}] must be a list of HookMatcher objects")
        for index, matcher in enumerate(matchers):
            read = matcher.get if isinstance(matcher, Mapping) else lambda name, m=matcher: getattr(m, name, None)
            callbacks = read("hooks")
            if not isinstance(callbacks, list | tuple):
                raise ConfigurationError(
                    f"{where}[{event!r}][{index}] needs a list of hook functions: HookMatcher(hooks=[check])"
                )
            if read("on_failure") not in (None, "continue"):
                # a guard meant to fail closed would fail open here: refuse it rather than run it
                raise ConfigurationError(
                    f"{where}[{event!r}][{index}]: on_failure={read('on_failure')!r} is not supported by catui "
                    "(a failing hook never blocks); leave on_failure out"
                )
            groups.setdefault(str(event), []).append(
                CallbackGroup(matcher=read("matcher"), callbacks=list(callbacks), timeout=read("timeout"))
            )
    return callback_hooks_config(groups, source=where)
