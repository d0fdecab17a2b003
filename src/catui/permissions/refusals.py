"""The texts of refusals: every "ask" or "deny" says why and what the user can do about it.

A refusal names the rule (and where it was written) or the mode, and the
setting, flag or rule that would let the call through.
"""

from __future__ import annotations

from pathlib import Path

from catui.permissions.model import PermissionDecision, PermissionRequest, PermissionRule
from catui.permissions.rule_suggestions import suggest_rule_text
from catui.permissions.rules import format_rule

# Where the messages tell the user to write a rule (the project's settings file).
SETTINGS_HINT = ".catui/settings.json"


def needs_approval(
    request: PermissionRequest, label: str, mode: str, cwd: Path, *, what: str = ""
) -> PermissionDecision:
    """Ask, or deny in dontAsk mode, with the allow rule that would let the call through."""
    rule_text = suggest_rule_text(request, cwd)
    how = (
        f"To allow it, add '{rule_text}' to permissions.allow in {SETTINGS_HINT} "
        f"or pass --allowedTools \"{rule_text}\""
    )
    if request.is_edit and mode in ("default", "dontAsk"):
        how += ", or use --permission-mode acceptEdits"
    if mode == "dontAsk":
        return PermissionDecision(
            "deny", f"{label} was denied because dontAsk mode denies every call that is not pre-approved. {how}."
        )
    subject = f"{label} {what}" if what else label
    return PermissionDecision("ask", f"{subject} needs approval in {mode} mode. {how}.")


def plan_denial(label: str) -> PermissionDecision:
    """Deny a call that would change something while plan mode is on, and say how to go on."""
    return PermissionDecision(
        "deny",
        f"{label} was denied because plan mode is on: only read-only tools run (and Write / Edit of the plan "
        "file) until the plan is approved. Write the plan to the plan file and present it with ExitPlanMode, "
        "or leave plan mode (--permission-mode default) to make changes.",
    )


def how_to_remove(rule: PermissionRule) -> str:
    """The sentence telling the user how to drop ``rule`` (where it was written decides how)."""
    list_name = f"permissions.{rule.behavior}"
    if rule.source == "cliArg":
        flag = "--disallowedTools" if rule.behavior == "deny" else "--allowedTools"
        return f"To allow this call, run without '{format_rule(rule)}' in {flag}."
    if rule.source == "session":
        return "The rule was added in this session; start a new session to drop it."
    if rule.source == "sdk":
        return "Remove the rule from the SDK options to allow this call."
    where = rule.origin or "the settings file"
    return f"To allow this call, remove '{format_rule(rule)}' from {list_name} in {where}."
