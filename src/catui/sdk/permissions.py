"""The SDK's permission types (claude-agent-sdk's names) and what catui does with them.

``can_use_tool`` is shown a :class:`ToolPermissionContext` whose ``suggestions``
are the :class:`PermissionUpdate` values a user could accept to stop being
asked (as Claude Code fills its permission prompt's "don't ask again"
choices); it answers with :class:`PermissionResultAllow` (optionally rewriting
the call's input and applying permission updates) or
:class:`PermissionResultDeny`. :func:`apply_sdk_permission_updates` applies
updates to a permission context for the rest of the session.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from catui.errors import CatuiError, ConfigurationError
from catui.permissions.context import (
    PermissionContext,
    PermissionDecision,
    PermissionRequest,
)
from catui.permissions.updates import apply_permission_updates, suggested_updates

if TYPE_CHECKING:
    from catui.session.config import PermissionHook
    from catui.tools.base import Tool, ToolContext

log = logging.getLogger(__name__)

PermissionUpdateType = Literal[
    "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
]
PermissionUpdateDestination = Literal["userSettings", "projectSettings", "localSettings", "session"]
PermissionBehavior = Literal["allow", "deny", "ask"]

_UPDATE_TYPES: tuple[str, ...] = (
    "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories",
)
_RULE_UPDATES = ("addRules", "replaceRules", "removeRules")


@dataclass
class PermissionRuleValue:
    """One rule of an update: ``tool_name`` and what it matches (``rule_content``; None: every use)."""

    tool_name: str
    rule_content: str | None = None

    def as_text(self) -> str:
        """The rule as written in settings: ``Bash(npm test:*)`` or ``Read``."""
        return f"{self.tool_name}({self.rule_content})" if self.rule_content else self.tool_name


@dataclass
class PermissionUpdate:
    """A change to the session's permissions: rules, the mode, or the working directories.

    ``to_dict`` / ``from_dict`` convert to and from Claude Code's wire shape
    (``{"type": "addRules", "rules": [{"toolName": …, "ruleContent": …}], …}``).
    """

    type: PermissionUpdateType
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: str | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire dict. Raises ValueError naming the missing field when the update is incomplete."""
        result: dict[str, Any] = {"type": self.type, "destination": self.destination or "session"}
        if self.type in _RULE_UPDATES:
            if self.rules is None or self.behavior is None:
                missing = "rules" if self.rules is None else "behavior"
                raise ValueError(f"PermissionUpdate(type={self.type!r}) needs {missing}")
            wire_rules: list[dict[str, Any]] = []
            for rule in self.rules:
                wire = {"toolName": rule.tool_name}
                if rule.rule_content is not None:
                    wire["ruleContent"] = rule.rule_content
                wire_rules.append(wire)
            result["rules"] = wire_rules
            result["behavior"] = self.behavior
        elif self.type == "setMode":
            if self.mode is None:
                raise ValueError("PermissionUpdate(type='setMode') needs mode, e.g. 'acceptEdits'")
            result["mode"] = self.mode
        elif self.type in ("addDirectories", "removeDirectories"):
            if self.directories is None:
                raise ValueError(f"PermissionUpdate(type={self.type!r}) needs directories (a list of paths)")
            result["directories"] = list(self.directories)
        else:
            raise ValueError(f"PermissionUpdate type {self.type!r} is unknown; use one of {', '.join(_UPDATE_TYPES)}")
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PermissionUpdate:
        """An update from the wire dict (the inverse of :meth:`to_dict`)."""
        raw_rules = data.get("rules")
        rules = (
            [PermissionRuleValue(str(r["toolName"]), r.get("ruleContent")) for r in raw_rules]
            if raw_rules is not None
            else None
        )
        return cls(
            type=data["type"],
            rules=rules,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=data.get("directories"),
            destination=data.get("destination"),
        )


@dataclass
class ToolPermissionContext:
    """What ``can_use_tool`` learns about a call besides the tool's name and input.

    ``agent_id`` is None for the main agent and the sub-agent's id otherwise;
    ``agent_type`` is ``"main"`` for the main agent and the sub-agent's type
    otherwise. ``tool_use_id`` is the id of the call (its ToolUseBlock's ``id``).
    ``suggestions`` are updates that would stop the question coming back
    (return some of them in ``updated_permissions`` to apply them).
    ``decision_reason`` says why catui asks (the rule or mode that did not settle it).
    """

    signal: Any | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None


@dataclass
class PermissionResultAllow:
    """Let the call run; ``updated_input`` replaces the model's arguments (checked against the tool's
    schema), ``updated_permissions`` are applied for the rest of the session."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Refuse the call; ``message`` goes back to the model. ``interrupt=True`` also stops the run."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult = PermissionResultAllow | PermissionResultDeny

CanUseToolCallback = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]
"""``async def can_use_tool(tool_name, input, context) -> PermissionResultAllow | PermissionResultDeny``."""

CanUseTool = CanUseToolCallback
"""claude-agent-sdk's name for the callback type."""


class CanUseToolShadowedWarning(UserWarning):
    """``can_use_tool`` is set, but options approve some calls before it is asked.

    Silence it with ``warnings.filterwarnings("ignore", category=catui.CanUseToolShadowedWarning)``.
    """


def shadowed_can_use_tool(allowed_tools: Sequence[str], permission_mode: str | None) -> str | None:
    """Why ``can_use_tool`` will not hear about some calls (whole tools allowed, bypass mode), or None."""
    if permission_mode == "bypassPermissions":
        return ("permission_mode='bypassPermissions' approves tool calls without asking can_use_tool "
                "(it is still asked to approve a plan, ExitPlanMode, once the agent has entered plan mode)")
    whole = []
    for entry in allowed_tools:
        name, _, rest = entry.strip().partition("(")
        if name and (not rest or rest in (")", "*)")):
            whole.append(name)
    if whole:
        return (f"allowed_tools approves every call of {', '.join(whole)}, so can_use_tool is not asked about them; "
                "allow a narrower rule (\"Bash(git status:*)\") to be asked about the rest")
    return None


def permission_suggestions(request: PermissionRequest, cwd: Path, *more_dirs: Path) -> list[PermissionUpdate]:
    """What Claude Code offers as "don't ask again" for this call (:func:`catui.permissions.updates.suggested_updates`)."""
    return [PermissionUpdate.from_dict(update) for update in suggested_updates(request, cwd, *more_dirs)]


def apply_sdk_permission_updates(context: PermissionContext, updates: Sequence[Any]) -> PermissionContext:
    """``context`` with ``updates`` (PermissionUpdate objects or wire dicts) applied for the rest of the session.

    As claude-agent-sdk sends them: when one cannot be sent (``to_dict`` raises ValueError, naming it),
    none is. Applying them is :func:`catui.permissions.updates.apply_permission_updates`, the same as
    for the control protocol's approvals; what it leaves out or does not save is logged.
    """
    wire: list[dict[str, Any]] = []
    for index, update in enumerate(updates):
        if isinstance(update, Mapping):
            update = PermissionUpdate.from_dict(update)
        if not isinstance(update, PermissionUpdate):
            raise ValueError(f"updated_permissions[{index}] is a {type(update).__name__}, not a PermissionUpdate")
        wire.append(update.to_dict())
    applied, notes = apply_permission_updates(context, wire)
    for note in notes:
        log.info("can_use_tool's %s", note)
    return applied


# -- the bridge: the SDK's can_use_tool as the session's permission hook --------------------------


def permission_bridge(
    callback: CanUseToolCallback,
    abort_run: Callable[[], None] | None,
    on_permission_updates: Callable[[list[Any]], None] | None = None,
) -> PermissionHook:
    """Adapt the SDK's ``can_use_tool(name, input, context)`` to the session's permission hook.

    ``on_permission_updates`` is told about the updates an answer applied (the client applies them to
    the main session too, when a sub-agent asked).
    """
    if not callable(callback):
        raise ConfigurationError("CatuiOptions.can_use_tool must be an async function (tool_name, input, context)")

    async def ask(tool: Tool, raw_input: dict[str, Any], request: PermissionRequest, ctx: ToolContext) -> PermissionDecision:
        decision = ctx.permissions.decide(request)
        context = ToolPermissionContext(
            signal=ctx.abort,
            suggestions=permission_suggestions(request, ctx.cwd, *ctx.permissions.working_directories),
            tool_use_id=_tool_use_id_of(ctx, tool.name, raw_input),
            agent_id=ctx.agent_id,
            agent_type=ctx.agent_type or ("main" if ctx.agent_id is None else None),
            blocked_path=str(request.file_path) if request.file_path is not None else None,
            decision_reason=decision.reason or None,
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
        if isinstance(outcome, PermissionResultAllow) and outcome.updated_permissions:
            _apply_answer_updates(outcome.updated_permissions, ctx, on_permission_updates)
        return decision_from_result(tool.name, raw_input, outcome, ctx, abort_run)

    return ask


def _apply_answer_updates(
    updates: list[Any], ctx: ToolContext, on_permission_updates: Callable[[list[Any]], None] | None
) -> None:
    """Apply an answer's ``updated_permissions``; a bad one is logged and none applied (as claude-agent-sdk)."""
    try:
        ctx.permissions = apply_sdk_permission_updates(ctx.permissions, updates)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("can_use_tool returned updated_permissions that catui cannot apply (%s); none applied", exc)
        return
    if on_permission_updates is not None:
        on_permission_updates(list(updates))


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
    session = ctx.session
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
        updated = outcome.updated_input
        if updated is not None and not isinstance(updated, Mapping):
            raise CatuiError(
                f"can_use_tool returned updated_input of type {type(updated).__name__} for {tool_name}; "
                "give a dict of the tool's arguments"
            )
        rewrite = dict(updated) if updated is not None and updated != raw_input else None
        return PermissionDecision("allow", "allowed by can_use_tool", updated_input=rewrite)
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
