"""What hooks answered: one event's combined outcome, and the rules that combine answers.

All hooks matching an event run in parallel; :func:`combine` makes one
:class:`HookOutcome` of their answers so that the strictest wins (deny beats
ask beats allow, one ``block`` blocks, any ``continue: false`` stops the
agent). :func:`merge_outcomes` joins the outcomes of several events that one
step of the session runs (``SessionStart`` then ``UserPromptSubmit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catui.hooks.output import Decision, HookResponse
from catui.messages import Block

REMINDER_PREFIX = "<system-reminder>"


@dataclass(frozen=True)
class HookNotice:
    """Something the user should see about a hook (a failure, a message it printed, why it stopped work)."""

    event: str
    command: str
    outcome: str  # error | message | blocked | stopped
    message: str

    def as_event_data(self) -> dict[str, Any]:
        """The data of the ``system/hook_response`` event a session emits for it."""
        return {"hook_event": self.event, "hook_name": self.command, "outcome": self.outcome, "message": self.message}


@dataclass
class HookOutcome:
    """The combined answer of every hook that ran for one event.

    ``decision`` (PreToolUse): allow / deny / ask, with ``reason``.
    ``blocked`` (PostToolUse, UserPromptSubmit, Stop, SubagentStop): with ``reason``, the text for the model
    (for UserPromptSubmit, for the user). ``additional_context``: text for the model.
    ``halt``: a hook said ``continue: false``; ``stop_reason`` is for the user.
    """

    event: str = ""
    decision: Decision | None = None
    reason: str | None = None
    blocked: bool = False
    updated_input: dict[str, Any] | None = None
    updated_tool_output: Any = None
    additional_context: list[str] = field(default_factory=list)
    halt: bool = False
    stop_reason: str | None = None
    notices: list[HookNotice] = field(default_factory=list)
    ran: int = 0

    def context_block(self) -> Block | None:
        """The hooks' additional context as one reminder block for the model, or None."""
        text = self.context_text()
        return {"type": "text", "text": text} if text else None

    def context_text(self) -> str:
        """The hooks' additional context wrapped as a system reminder ("" when there is none)."""
        if not self.additional_context:
            return ""
        body = "\n\n".join(c.strip() for c in self.additional_context)
        return f"{REMINDER_PREFIX}\nContext from the project's {self.event} hook:\n{body}\n</system-reminder>"

    @property
    def is_empty(self) -> bool:
        """No hook ran and there is nothing to act on."""
        return not (self.ran or self.notices or self.additional_context or self.blocked or self.halt)


def no_outcome(event: str = "") -> HookOutcome:
    """The outcome of an event without hooks (a new object: callers may add to it)."""
    return HookOutcome(event=event)


def combine(event: str, responses: list[HookResponse]) -> HookOutcome:
    """One outcome from the answers of hooks that ran in parallel for ``event``."""
    outcome = HookOutcome(event=event, ran=len(responses))
    reasons: dict[str, list[str]] = {"deny": [], "ask": [], "allow": [], "block": []}
    for response in responses:
        if response.error:
            outcome.notices.append(HookNotice(event, response.command, "error", response.error))
        if response.system_message:
            outcome.notices.append(HookNotice(event, response.command, "message", response.system_message))
        if response.halt:
            outcome.halt = True
            outcome.stop_reason = outcome.stop_reason or response.stop_reason
            outcome.notices.append(HookNotice(event, response.command, "stopped",
                                              response.stop_reason or f"A {event} hook stopped the agent."))
        if response.additional_context:
            outcome.additional_context.append(response.additional_context)
        if response.block:
            outcome.blocked = True
            if response.reason:
                reasons["block"].append(response.reason)
        if response.permission_decision is not None:
            if response.reason:
                reasons[response.permission_decision].append(response.reason)
            if _stricter(response.permission_decision, outcome.decision):
                outcome.decision = response.permission_decision
        if response.updated_input is not None and response.permission_decision != "deny":
            outcome.updated_input = response.updated_input
        if response.updated_tool_output is not None:
            outcome.updated_tool_output = response.updated_tool_output
    if outcome.decision is not None:
        outcome.reason = "\n".join(reasons[outcome.decision]) or None
    elif outcome.blocked:
        outcome.reason = "\n".join(reasons["block"]) or None
    if outcome.decision == "deny":
        outcome.updated_input = None
    return outcome


_STRICTNESS = {None: 0, "allow": 1, "ask": 2, "deny": 3}


def _stricter(new: Decision, current: Decision | None) -> bool:
    return _STRICTNESS[new] > _STRICTNESS[current]


def merge_outcomes(outcomes: list[HookOutcome]) -> HookOutcome:
    """Several events' outcomes as one (notices and context kept in order; any block or halt wins)."""
    real = [o for o in outcomes if not o.is_empty]
    if not real:
        return no_outcome()
    if len(real) == 1:
        return real[0]
    merged = HookOutcome(event=real[-1].event)
    for outcome in real:
        merged.notices.extend(outcome.notices)
        merged.additional_context.extend(outcome.additional_context)
        merged.ran += outcome.ran
        if outcome.blocked:
            merged.blocked, merged.reason, merged.event = True, outcome.reason, outcome.event
        if outcome.halt:
            merged.halt, merged.stop_reason = True, merged.stop_reason or outcome.stop_reason
    return merged
