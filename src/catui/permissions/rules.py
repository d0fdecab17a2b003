"""Permission rules in Claude Code's syntax: parsing, and matching a rule against a tool call.

A rule is ``Tool`` (every call of the tool) or ``Tool(content)``:

- ``Bash(npm run test)`` matches that exact command; ``Bash(git status:*)`` and
  ``Bash(git status *)`` match it and anything that starts with it plus a space;
  ``*`` elsewhere is a wildcard (``Bash(git * main)``, ``Bash(ls*)``). A command
  joined with ``&&``, ``;``, ``|`` … is checked part by part: an allow rule must
  cover every part, a deny or ask rule fires on any part.
- ``Read(…)`` / ``Edit(…)`` take gitignore-style globs: ``//abs/path/**`` from the
  filesystem root, ``~/…`` from the home folder, ``/…`` from the rule's base
  folder (the folder holding the settings file's ``.catui``/``.claude`` folder),
  anything else from the current directory. Read rules cover Read, Glob and
  Grep; Edit rules cover Edit, Write, MultiEdit and NotebookEdit.
- ``mcp__server`` and ``mcp__server__*`` match every tool of that MCP server,
  ``mcp__server__tool`` one tool.
- ``WebFetch(domain:example.com)`` matches fetches of that host
  (``domain:*.example.com`` its subdomains).
- ``Agent(Explore)`` matches that agent type; ``Task`` is the old name of ``Agent``.

The parts: rule syntax (:mod:`catui.permissions.rule_syntax`), Bash commands
(:mod:`catui.permissions.command_rules`), paths (:mod:`catui.permissions.path_rules`);
this module matches a rule against a request and re-exports their public names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from catui.permissions.command_rules import (
    command_parts,
    command_pattern_matches,
    deny_forms,
    is_exact_pattern,
    part_allowed_by,
    strip_wrappers,
)
from catui.permissions.model import Behavior, PermissionRequest, PermissionRule
from catui.permissions.path_rules import path_rule_matches, pattern_root, within_directories
from catui.permissions.rule_syntax import (
    EDIT_TOOLS,
    READ_TOOLS,
    TOOL_NAME_ALIASES,
    RuleSyntaxError,
    canonical_tool_name,
    format_rule,
    parse_rule,
)

__all__ = [
    "EDIT_TOOLS", "READ_TOOLS", "TOOL_NAME_ALIASES", "RuleSyntaxError", "canonical_tool_name", "command_parts",
    "command_pattern_matches", "denies_tool_outright", "domain_matches", "first_matching", "format_rule",
    "parse_rule", "part_allowed_by", "path_rule_matches", "pattern_root", "request_host", "request_path",
    "request_subject", "rule_base", "rule_matches", "rules_of", "strip_wrappers", "wildcard_matches",
    "within_directories",
]


def rule_matches(rule: PermissionRule, request: PermissionRequest, cwd: Path | None = None) -> bool:
    """Whether ``rule`` applies to ``request``.

    ``cwd`` is the folder relative path patterns (``src/**``) are taken from,
    and the base of ``/…`` patterns for rules that have none of their own.
    For a Bash command made of several parts, an allow rule matches only if it
    covers every part; a deny or ask rule matches if it covers any part.
    """
    cwd = cwd or Path.cwd()
    tool = canonical_tool_name(request.tool_name)
    if rule.tool_name.startswith("mcp__"):
        return _mcp_rule_matches(rule.tool_name, tool)
    if not _tool_covered(rule.tool_name, tool, rule.content is not None):
        return False
    if rule.content is None:
        return True
    if rule.tool_name in READ_TOOLS or rule.tool_name in EDIT_TOOLS:
        path = request_path(request, cwd)
        if path is None:
            return False
        return path_rule_matches(rule.content, path, rule_base(rule, cwd), cwd, any_path=rule.behavior != "allow")
    if rule.tool_name == "Bash":
        command = request_subject(request)
        if command is None:
            return False
        parts = command_parts(command)
        if rule.behavior == "allow":
            if is_exact_pattern(rule.content) and command.strip() == rule.content.replace("\\*", "*"):
                return True  # the whole command, exactly as approved (compound ones included)
            return bool(parts) and all(part_allowed_by(rule.content, part) for part in parts)
        return any(command_pattern_matches(rule.content, cand) for part in parts for cand in deny_forms(part))
    if rule.tool_name == "WebFetch":
        host = request_host(request)
        return host is not None and domain_matches(rule.content, host)
    subject = request_subject(request)
    if subject is None:
        return False
    return wildcard_matches(rule.content, subject)


def _tool_covered(rule_tool: str, request_tool: str, has_content: bool) -> bool:
    if rule_tool == request_tool:
        return True
    # Read rules cover every file-reading tool, Edit rules every file-changing tool.
    if rule_tool == "Read" and request_tool in READ_TOOLS:
        return True
    return rule_tool == "Edit" and request_tool in EDIT_TOOLS


def denies_tool_outright(rule: PermissionRule, tool_name: str) -> bool:
    """Whether ``rule`` is a deny rule for the whole tool (``Bash``, ``mcp__server``), not for some calls of it.

    Such tools are left out of the tool list the model sees, as Claude Code does for ``--disallowedTools Bash``.
    """
    if rule.behavior != "deny" or rule.content is not None:
        return False
    tool = canonical_tool_name(tool_name)
    if rule.tool_name.startswith("mcp__"):
        return _mcp_rule_matches(rule.tool_name, tool)
    return canonical_tool_name(rule.tool_name) == tool


def _mcp_rule_matches(rule_tool: str, request_tool: str) -> bool:
    if not request_tool.startswith("mcp__"):
        return False
    rule_parts = rule_tool.split("__")
    req_parts = request_tool.split("__")
    if len(req_parts) < 3 or rule_parts[1] != req_parts[1]:
        return False
    if len(rule_parts) == 2 or rule_parts[2:] == ["*"]:
        return True
    return rule_tool == request_tool


def rule_base(rule: PermissionRule, cwd: Path) -> Path:
    """The folder a rule's ``/…`` patterns are relative to."""
    return rule.base if rule.base is not None else cwd


def request_subject(request: PermissionRequest) -> str | None:
    """What a rule's content is compared with: the command, the agent type, or the explicit subject."""
    if request.subject is not None:
        return request.subject
    tool = canonical_tool_name(request.tool_name)
    inp = request.tool_input
    if tool == "Bash":
        value = inp.get("command")
    elif tool == "Agent":
        value = inp.get("subagent_type") or "general-purpose"
    elif tool == "WebFetch":
        host = request_host(request)
        value = f"domain:{host}" if host else None
    elif tool == "Skill":
        value = inp.get("skill") or inp.get("command")
    else:
        return None
    return value if isinstance(value, str) else None


def request_host(request: PermissionRequest) -> str | None:
    """The host a WebFetch call reaches, from ``subject`` (``domain:host``) or the ``url`` input."""
    if request.subject and request.subject.startswith("domain:"):
        return request.subject[len("domain:") :].lower()
    url = request.tool_input.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower() if host else None


def request_path(request: PermissionRequest, cwd: Path) -> Path | None:
    """The absolute path a file tool touches: ``file_path`` or the usual input fields."""
    if request.file_path is not None:
        path = request.file_path
    else:
        raw = None
        for key in ("file_path", "notebook_path", "path"):
            value = request.tool_input.get(key)
            if isinstance(value, str) and value:
                raw = value
                break
        if raw is None:
            if canonical_tool_name(request.tool_name) in ("Glob", "Grep"):
                return Path(os.path.normpath(cwd))
            return None
        path = Path(raw).expanduser()
    if not path.is_absolute():
        path = cwd / path
    return Path(os.path.normpath(path))


def domain_matches(content: str, host: str) -> bool:
    """``domain:example.com`` matches that host; ``domain:*.example.com`` its subdomains."""
    wanted = content[len("domain:") :].strip().lower() if content.startswith("domain:") else content.lower()
    host = host.lower().rstrip(".")
    if wanted.startswith("*."):
        return host.endswith(wanted[1:])
    return host == wanted


def wildcard_matches(pattern: str, value: str) -> bool:
    """Generic rule content matching: exact, or ``*`` as a wildcard."""
    if "*" not in pattern:
        return pattern == value
    regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(regex, value, re.DOTALL) is not None


def first_matching(
    rules: Iterable[PermissionRule], behavior: Behavior, request: PermissionRequest, cwd: Path
) -> PermissionRule | None:
    """The first rule of ``behavior`` that matches ``request``."""
    for rule in rules:
        if rule.behavior == behavior and rule_matches(rule, request, cwd):
            return rule
    return None


def rules_of(rules: Sequence[PermissionRule], behavior: Behavior) -> list[PermissionRule]:
    return [r for r in rules if r.behavior == behavior]
