"""What a hook's exit status and output mean, event by event (Claude Code's contract).

- exit 0: success. stdout is read as JSON when it is a JSON object; for
  ``UserPromptSubmit`` and ``SessionStart`` plain stdout is context for the model.
- exit 2: a blocking error. stderr is the reason: it reaches the model for
  ``PreToolUse`` (the call is refused), ``PostToolUse``, ``Stop`` and
  ``SubagentStop`` (the agent keeps going); a ``UserPromptSubmit`` prompt is
  dropped and the user sees why; for other events the user sees stderr.
- any other exit, a timeout, a command that cannot start: a non-blocking
  error shown to the user; the agent carries on as if there were no hook.

JSON fields read on exit 0: ``continue`` / ``stopReason`` (stop the agent),
``systemMessage`` (a note for the user), ``suppressOutput``, ``decision`` /
``reason`` (``block``; for PreToolUse the older ``approve`` / ``block``), and
``hookSpecificOutput`` (``permissionDecision``, ``permissionDecisionReason``,
``updatedInput``, ``additionalContext``, ``updatedMCPToolOutput``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from catui.hooks.execute import HookExecution

Decision = Literal["allow", "deny", "ask"]
BLOCKING_EXIT_CODE = 2

# Events whose plain stdout (exit 0, not JSON) is added to the model's context.
_STDOUT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_PERMISSION_DECISIONS: dict[str, Decision] = {"allow": "allow", "deny": "deny", "ask": "ask",
                                              # the older top-level PreToolUse spelling
                                              "approve": "allow", "block": "deny"}


@dataclass
class HookResponse:
    """One hook's answer, already interpreted for its event."""

    event: str
    command: str
    permission_decision: Decision | None = None
    reason: str | None = None
    block: bool = False
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    updated_tool_output: Any = None
    halt: bool = False
    stop_reason: str | None = None
    system_message: str | None = None
    error: str | None = None
    """A non-blocking failure, for the user."""
    suppress_output: bool = False


def interpret(execution: HookExecution, event: str) -> HookResponse:
    """The meaning of one finished hook command for ``event``."""
    hook = execution.hook
    response = HookResponse(event=event, command=hook.command)
    label = f"{event} hook `{_short(hook.command)}`"
    if execution.start_error is not None:
        response.error = f"{label} {execution.start_error} ({hook.where})"
        return response
    if execution.timed_out:
        response.error = (f"{label} did not finish within {hook.timeout:g}s and was stopped; make it faster "
                          f"or raise its 'timeout' ({hook.where})")
        return response
    code = execution.exit_code
    if code == BLOCKING_EXIT_CODE:
        reason = execution.stderr.strip() or f"{label} exited with status 2 without a message"
        if event == "PreToolUse":
            response.permission_decision, response.reason = "deny", reason
        elif event in ("PostToolUse", "Stop", "SubagentStop", "UserPromptSubmit", "PreCompact"):
            response.block, response.reason = True, reason
        else:
            response.error = f"{label} exited with status 2: {_tail(execution.stderr)}"
        return response
    if code != 0:
        detail = _tail(execution.stderr) or _tail(execution.stdout)
        response.error = f"{label} failed with exit status {code}" + (f": {detail}" if detail else "")
        return response
    stdout = execution.stdout.strip()
    data = _json_object(stdout)
    if data is None:
        if stdout and event in _STDOUT_IS_CONTEXT:
            response.additional_context = stdout
        return response
    read_json_answer(data, response, label)
    return response


def read_json_answer(data: dict[str, Any], response: HookResponse, label: str) -> None:
    """Fill ``response`` from a hook's JSON answer (a command's stdout, or what a callback hook returned)."""
    event = response.event
    if data.get("continue") is False:
        response.halt = True
        stop_reason = data.get("stopReason")
        response.stop_reason = stop_reason if isinstance(stop_reason, str) and stop_reason else None
    message = data.get("systemMessage")
    if isinstance(message, str) and message:
        response.system_message = message
    response.suppress_output = data.get("suppressOutput") is True
    reason = data.get("reason")
    reason_text = reason if isinstance(reason, str) and reason else None
    decision = data.get("decision")
    if event == "PreToolUse" and isinstance(decision, str) and decision in _PERMISSION_DECISIONS:
        response.permission_decision, response.reason = _PERMISSION_DECISIONS[decision], reason_text
    elif decision == "block":
        response.block, response.reason = True, reason_text
    elif decision is not None and decision not in ("approve", "allow"):
        response.error = f"{label} printed an unknown decision {decision!r}; it is ignored"

    specific = data.get("hookSpecificOutput")
    if specific is None:
        return
    if not isinstance(specific, dict):
        response.error = f"{label}: 'hookSpecificOutput' must be an object; it is ignored"
        return
    named = specific.get("hookEventName")
    if named is not None and named != event:
        response.error = (f"{label} answered for event {named!r} in 'hookSpecificOutput.hookEventName' but ran "
                          f"for {event!r}; its hookSpecificOutput is ignored")
        return
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        response.additional_context = context
    if event == "PreToolUse":
        chosen = specific.get("permissionDecision")
        if isinstance(chosen, str) and chosen in ("allow", "deny", "ask"):
            response.permission_decision = _PERMISSION_DECISIONS[chosen]
            why = specific.get("permissionDecisionReason")
            response.reason = why if isinstance(why, str) and why else response.reason
        elif chosen is not None:
            response.error = f"{label}: permissionDecision must be allow, deny or ask, not {chosen!r}"
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            response.updated_input = updated
    elif event == "PostToolUse" and "updatedMCPToolOutput" in specific:
        response.updated_tool_output = specific["updatedMCPToolOutput"]


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None  # stdout that only looks like JSON is treated as text, as Claude Code does
    return data if isinstance(data, dict) else None


def _tail(text: str, lines: int = 3) -> str:
    return " / ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


def _short(command: str, limit: int = 60) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"
