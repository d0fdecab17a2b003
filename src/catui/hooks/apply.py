"""How hook outcomes change a tool call, its result and the end of a turn (used by the session loop).

Permission precedence follows Claude Code: a hook's ``deny`` always refuses
the call; a hook's ``allow`` skips the approval prompt but not the user's own
``deny`` / ``ask`` rules from settings; a hook's ``ask`` makes catui ask even
where the rules would allow, unless a deny rule already refuses the call.
"""

from __future__ import annotations

from dataclasses import replace

from catui.hooks.outcome import HookOutcome
from catui.permissions.context import PermissionDecision
from catui.tools.base import ToolResult

MAX_STOP_HOOK_CONTINUATIONS = 5
"""How many times in a row Stop / SubagentStop hooks may send an agent back to work in one run.

Claude Code relies on hooks checking ``stop_hook_active``; catui also caps
the loop so a hook that always blocks cannot keep an agent running forever.
"""


def apply_hook_decision(rule_decision: PermissionDecision, outcome: HookOutcome, tool_name: str
                        ) -> PermissionDecision:
    """The permission decision once a PreToolUse hook's ``permissionDecision`` is taken into account."""
    hook = outcome.decision
    if hook is None:
        return rule_decision
    if hook == "deny":
        return PermissionDecision("deny", outcome.reason or f"A PreToolUse hook refused this {tool_name} call.")
    if rule_decision.behavior == "deny" and rule_decision.rule is not None:
        return rule_decision  # the user's own deny rule outranks a hook's approval
    if hook == "ask":
        why = f": {outcome.reason}" if outcome.reason else "."
        return PermissionDecision("ask", f"A PreToolUse hook asks for approval before {tool_name} runs{why}")
    if rule_decision.behavior == "ask" and rule_decision.rule is not None:
        return rule_decision  # an ask rule in settings still asks
    return PermissionDecision("allow", outcome.reason or "Allowed by a PreToolUse hook.")


def result_with_hook_feedback(result: ToolResult, outcome: HookOutcome, tool_name: str) -> ToolResult:
    """The tool result the model sees after PostToolUse hooks: their context and any block reason appended.

    ``updatedMCPToolOutput`` replaces the output of an MCP tool (``mcp__…``) only, as in Claude Code.
    """
    content = result.content
    if outcome.updated_tool_output is not None and tool_name.startswith("mcp__"):
        replacement = outcome.updated_tool_output
        content = replacement if isinstance(replacement, str | list) else str(replacement)
    notes: list[str] = []
    if outcome.blocked:
        notes.append(f"{outcome.event or 'PostToolUse'} hook feedback:\n"
                     + (outcome.reason or "A hook flagged this result."))
    context = outcome.context_text()
    if context:
        notes.append(context)
    if not notes and content is result.content:
        return result
    if notes:
        text = "\n\n".join(notes)
        if isinstance(content, str):
            content = f"{content}\n\n{text}" if content else text
        else:
            content = [*content, {"type": "text", "text": text}]
    return replace(result, content=content)


def stop_feedback_text(outcome: HookOutcome) -> str:
    """The user message that sends an agent back to work when a Stop / SubagentStop hook blocked."""
    reason = outcome.reason or "A hook asked you to continue before finishing."
    return f"{outcome.event or 'Stop'} hook feedback (keep working before you finish):\n{reason}"
