"""Whether a tool call may run: rules first (deny beats ask beats allow), then the permission mode.

Modes, for calls that no rule settled:

- ``bypassPermissions``: everything runs.
- ``plan``: read-only calls run, and Write / Edit of the session's plan file
  (``PermissionContext.plan_file``); anything else is denied while plan mode
  is on (even when an allow rule matches, because plan mode promises no changes).
- ``acceptEdits``: read-only calls and file edits inside the working
  directories run; the rest is asked.
- ``default``: read-only calls inside the working directories run; the rest is asked.
- ``dontAsk``: like default, but whatever would be asked is denied.
- ``auto``: everything inside the working directories runs (the handoff
  classifier reviews sub-agent work separately).

With the Bash sandbox on and usable (``PermissionContext.sandboxed_bash``, from
``sandbox.autoAllowBashIfSandboxed``), a Bash command that no deny or ask rule
matches and that ``sandbox.excludedCommands`` does not take out of the sandbox
is allowed in default, acceptEdits, dontAsk and auto mode, including commands
that redirect output outside the working directories (the sandbox, not the
permission check, refuses such writes). Plan mode is unchanged.

A file call outside the working directories is asked (denied in plan and
dontAsk mode) unless an allow rule covers it; only bypassPermissions skips
that check. Every refusal's ``reason`` names the rule (and where it was
written) or the mode, and says how to allow the call (texts in refusals.py;
labels and suggested rules in rule_suggestions.py; the sub-agent limits in
subagent_limits.py).
"""

from __future__ import annotations

from pathlib import Path

from catui.permissions.bash_readonly import is_read_only_command
from catui.permissions.model import PermissionDecision, PermissionRequest, PermissionRule, PermissionState
from catui.permissions.redirects import redirects_outside
from catui.permissions.refusals import SETTINGS_HINT, how_to_remove, needs_approval, plan_denial
from catui.permissions.rule_suggestions import describe_call, suggest_rule_text
from catui.permissions.rules import (
    EDIT_TOOLS,
    READ_TOOLS,
    canonical_tool_name,
    command_parts,
    first_matching,
    format_rule,
    part_allowed_by,
    request_path,
    request_subject,
    within_directories,
)
from catui.permissions.sandbox_rules import is_excluded_command

# Tools that only manage the conversation itself; they never need approval (deny rules still apply).
NO_APPROVAL_TOOLS: frozenset[str] = frozenset(
    {"TodoWrite", "Agent", "TaskOutput", "TaskStop", "AskUserQuestion", "EnterPlanMode", "SendMessage"}
)

# Read-only, but they reach the network: asked for unless a rule allows them (as Claude Code does).
NETWORK_TOOLS: frozenset[str] = frozenset({"WebFetch", "WebSearch"})


# Leaving plan mode is the user's call: asked for (denied in print mode) unless the tool asks the user itself.
PLAN_EXIT_TOOL = "ExitPlanMode"


def decide(ctx: PermissionState, request: PermissionRequest) -> PermissionDecision:
    """Decide one tool call. See the module docstring for the order of checks."""
    cwd = ctx.primary_directory
    label = describe_call(request)

    denied = first_matching(ctx.rules, "deny", request, cwd)
    if denied is not None:
        return PermissionDecision(
            "deny",
            f"Permission to use {label} has been denied by rule '{format_rule(denied)}' from "
            f"{denied.describe_source()}. {how_to_remove(denied)}",
            denied,
        )

    confined = _confined_decision(ctx, request, label, cwd)
    if confined is not None:
        return confined

    asked = first_matching(ctx.rules, "ask", request, cwd)
    if asked is not None:
        if ctx.mode == "dontAsk":
            return PermissionDecision(
                "deny",
                f"{label} needs approval by rule '{format_rule(asked)}' from {asked.describe_source()}, "
                f"and dontAsk mode denies every call that would need approval. {how_to_remove(asked)}",
                asked,
            )
        return PermissionDecision(
            "ask",
            f"Rule '{format_rule(asked)}' from {asked.describe_source()} asks before {label} runs. "
            + how_to_remove(asked).replace("To allow this call,", "To run it without asking,"),
            asked,
        )

    if ctx.mode == "plan" and _writes_plan_file(ctx, request, cwd):
        return PermissionDecision("allow", "Writing the plan file is allowed in plan mode.")

    allowed = _allowing_rule(ctx, request, cwd)
    if (
        allowed is not None
        and ctx.mode != "bypassPermissions"
        and not _approves_exactly(allowed, request)
        and not _runs_sandboxed(ctx, request)
    ):
        escaping = _shell_writes_outside(ctx, request, cwd)
        if escaping is not None:
            return escaping
    if allowed is not None:
        if (
            ctx.mode == "plan"
            and canonical_tool_name(request.tool_name) not in NO_APPROVAL_TOOLS | {PLAN_EXIT_TOOL}
            and not (request.read_only or _is_read_only_shell(ctx, request, cwd))
        ):
            return plan_denial(label)
        return PermissionDecision("allow", f"Allowed by rule '{format_rule(allowed)}' from {allowed.describe_source()}.",
                                  allowed)

    return _decide_by_mode(ctx, request, label, cwd)


def _confined_decision(
    ctx: PermissionState, request: PermissionRequest, label: str, cwd: Path
) -> PermissionDecision | None:
    """A confined tool (``PermissionContext.confinements``) runs inside its folder and nowhere else."""
    tool = canonical_tool_name(request.tool_name)
    confinement = next((c for c in ctx.confinements if c.tool_name == tool), None)
    if confinement is None:
        return None
    path = request_path(request, cwd)
    if path is not None and within_directories(path, (confinement.folder,)):
        return PermissionDecision("allow", f"{tool} may change files in {confinement.folder}.")
    where = f"{path} is outside it" if path is not None else "this call names no file"
    return PermissionDecision(
        "deny",
        f"Permission to use {label} has been denied: {tool} was given to this agent {confinement.why}, "
        f"so it may only touch files in {confinement.folder}, and {where}. To let the agent use {tool} "
        "anywhere, list it in the 'tools' field of its definition.",
    )


def _allowing_rule(ctx: PermissionState, request: PermissionRequest, cwd: Path) -> PermissionRule | None:
    rule = first_matching(ctx.rules, "allow", request, cwd)
    if rule is not None:
        return rule
    # A compound command may be covered part by part by different allow rules, and parts that only
    # read inside the working directories (cd src, git status) need no rule of their own.
    command = _bash_command(request)
    if command is None:
        return None
    parts = command_parts(command)
    if len(parts) < 2:
        return None
    bash_rules = [r for r in ctx.rules if r.behavior == "allow" and r.tool_name == "Bash" and r.content is not None]
    covering: PermissionRule | None = None
    for part in parts:
        match = next((r for r in bash_rules if r.content is not None and part_allowed_by(r.content, part)), None)
        if match is None:
            if not is_read_only_command(part, ctx.working_directories, cwd):
                return None
            continue
        covering = covering or match
    return covering


def _decide_by_mode(ctx: PermissionState, request: PermissionRequest, label: str, cwd: Path) -> PermissionDecision:
    mode = ctx.mode
    tool = canonical_tool_name(request.tool_name)
    if tool in NO_APPROVAL_TOOLS or mode == "bypassPermissions":
        return PermissionDecision("allow", f"Allowed in {mode} mode.")
    if tool == PLAN_EXIT_TOOL and not request.read_only:
        how = (
            f"To let the agent leave plan mode without asking, add '{PLAN_EXIT_TOOL}' to permissions.allow "
            f"in {SETTINGS_HINT} or pass --allowedTools \"{PLAN_EXIT_TOOL}\"."
        )
        reason = f"Leaving plan mode needs the user's approval of the plan; until then plan mode stays on. {how}"
        return PermissionDecision("deny" if mode == "dontAsk" else "ask", reason)

    path = request_path(request, cwd) if _is_file_call(request) else None
    if path is not None and ctx.working_directories and not within_directories(path, ctx.working_directories):
        dirs = ", ".join(str(d) for d in ctx.working_directories)
        how = (
            f"To allow it, add '{suggest_rule_text(request, cwd)}' to permissions.allow in {SETTINGS_HINT}, "
            f"or add the folder with permissions.additionalDirectories or --add-dir."
        )
        if mode in ("plan", "dontAsk"):
            return PermissionDecision(
                "deny", f"{path} is outside the working directories ({dirs}), and {mode} mode denies it. {how}"
            )
        return PermissionDecision("ask", f"{path} is outside the working directories ({dirs}). {how}")

    if mode in SANDBOX_APPROVING_MODES and _runs_sandboxed(ctx, request):
        return PermissionDecision("allow", "Allowed because Bash runs in the sandbox (sandbox.autoAllowBashIfSandboxed).")
    read_only = request.read_only or _is_read_only_shell(ctx, request, cwd)
    if tool in NETWORK_TOOLS and mode != "auto":
        return needs_approval(request, label, mode, cwd, what="reaches the network and")
    if mode == "plan":
        if read_only:
            return PermissionDecision("allow", "Read-only calls run in plan mode.")
        return plan_denial(label)
    if mode == "auto":
        return _shell_writes_outside(ctx, request, cwd) or PermissionDecision("allow", "Allowed in auto mode.")
    if read_only:
        return PermissionDecision("allow", f"Read-only calls run in {mode} mode.")
    if mode == "acceptEdits" and request.is_edit:
        return PermissionDecision("allow", "File edits inside the working directories run in acceptEdits mode.")
    return needs_approval(request, label, mode, cwd)


SANDBOX_APPROVING_MODES: frozenset[str] = frozenset({"default", "acceptEdits", "dontAsk", "auto"})


def _runs_sandboxed(ctx: PermissionState, request: PermissionRequest) -> bool:
    """Whether this is a Bash command that will run inside the sandbox (so the sandbox bounds what it writes)."""
    if not ctx.sandboxed_bash:
        return False
    command = _bash_command(request)
    return command is not None and not is_excluded_command(command, ctx.sandbox_excluded_commands)


def _approves_exactly(rule: PermissionRule, request: PermissionRequest) -> bool:
    """A rule naming this very command (as "don't ask again" records it), redirections and all."""
    content = rule.content
    if content is None or "*" in content.replace("\\*", ""):
        return False
    return content.replace("\\*", "*") == (request_subject(request) or "").strip()


def _shell_writes_outside(ctx: PermissionState, request: PermissionRequest, cwd: Path) -> PermissionDecision | None:
    """Ask (deny in plan and dontAsk mode) when a Bash command redirects output outside the working directories.

    An allow rule approves a command, not a place to write: ``Bash(npm test:*)`` does not cover
    ``npm test > ~/.bashrc``.
    """
    command = _bash_command(request)
    if command is None:
        return None
    outside = redirects_outside(command, ctx.working_directories, cwd)
    if not outside:
        return None
    dirs = ", ".join(str(d) for d in ctx.working_directories)
    reason = (
        f"{describe_call(request)} writes to {', '.join(outside)}, outside the working directories ({dirs}). "
        "Write inside them, or add the folder with permissions.additionalDirectories or --add-dir."
    )
    return PermissionDecision("deny" if ctx.mode in ("plan", "dontAsk") else "ask", reason)


def _is_read_only_shell(ctx: PermissionState, request: PermissionRequest, cwd: Path) -> bool:
    """A Bash call whose command only reads inside the working directories (ls, git status, grep …)."""
    command = _bash_command(request)
    return command is not None and is_read_only_command(command, ctx.working_directories, cwd)


# The plan is written with these; Bash and NotebookEdit stay read-only even on the plan file.
PLAN_FILE_TOOLS: frozenset[str] = frozenset({"Write", "Edit"})


def _writes_plan_file(ctx: PermissionState, request: PermissionRequest, cwd: Path) -> bool:
    """A Write or Edit call on exactly the session's plan file."""
    if ctx.plan_file is None or canonical_tool_name(request.tool_name) not in PLAN_FILE_TOOLS:
        return False
    path = request_path(request, cwd)
    if path is None:
        return False
    try:
        return path.resolve() == ctx.plan_file.resolve()
    except (OSError, RuntimeError):
        return False


def _bash_command(request: PermissionRequest) -> str | None:
    """The command of a Bash call (None for other tools, or a Bash call without one)."""
    if canonical_tool_name(request.tool_name) != "Bash":
        return None
    return request_subject(request)


def _is_file_call(request: PermissionRequest) -> bool:
    tool = canonical_tool_name(request.tool_name)
    return request.file_path is not None or tool in READ_TOOLS or tool in EDIT_TOOLS


