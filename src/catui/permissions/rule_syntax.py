"""Writing permission rules in Claude Code's syntax: parsing a rule string, and printing a rule back.

See :mod:`catui.permissions.rules` for what each form means.
"""

from __future__ import annotations

import re
from pathlib import Path

from catui.permissions.model import Behavior, PermissionRule

READ_TOOLS: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS"})
EDIT_TOOLS: frozenset[str] = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

# Old or alternative tool names that rules may still use.
TOOL_NAME_ALIASES: dict[str, str] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "BashOutput": "TaskOutput",
    "AgentOutputTool": "TaskOutput",
    "BashOutputTool": "TaskOutput",
}

_TOOL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-.]*(?:\*)?$")


class RuleSyntaxError(ValueError):
    """A rule string that cannot be parsed; the message says what is wrong and how to write it."""


def canonical_tool_name(name: str) -> str:
    """The tool name a rule or request is compared under (``Task`` → ``Agent``)."""
    return TOOL_NAME_ALIASES.get(name, name)


def parse_rule(
    text: str,
    behavior: Behavior,
    source: str,
    *,
    base: Path | None = None,
    origin: str | None = None,
) -> PermissionRule:
    """Parse one rule string such as ``Bash(git status:*)``.

    ``base`` is the folder ``/…`` path patterns are relative to (None: the
    current directory at match time); ``origin`` names where the text came from
    (a settings file path, ``--allowedTools``) for messages. Raises
    :class:`RuleSyntaxError` for malformed text.
    """
    if not isinstance(text, str):
        raise RuleSyntaxError(f"a permission rule must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise RuleSyntaxError("empty permission rule; write a tool name such as 'Read' or 'Bash(git status:*)'")
    open_at = _first_unescaped(stripped, "(")
    if open_at < 0:
        if _first_unescaped(stripped, ")") >= 0:
            raise RuleSyntaxError(f"'{stripped}' has a ')' without a matching '('")
        tool_name, content = stripped, None
    else:
        tool_name = stripped[:open_at].strip()
        if not stripped.endswith(")") or (stripped.endswith("\\)") and not stripped.endswith("\\\\)")):
            raise RuleSyntaxError(
                f"'{stripped}' has unbalanced parentheses: a rule is 'Tool' or 'Tool(content)' "
                "with the closing ')' last"
            )
        inner = stripped[open_at + 1 : -1]
        _check_balanced(inner, stripped)
        content = _unescape(inner).strip()
    if not tool_name:
        raise RuleSyntaxError(f"'{stripped}' has no tool name before '('; write e.g. 'Bash(npm test:*)'")
    if tool_name.startswith("mcp__"):
        _check_mcp_name(tool_name)
    if not _TOOL_NAME_RE.match(tool_name) or (tool_name.endswith("*") and not tool_name.startswith("mcp__")):
        raise RuleSyntaxError(
            f"'{tool_name}' is not a tool name (letters, digits, '_', '-' and '.' only); "
            "write one rule per entry, e.g. 'Read' and 'Write' as two rules"
        )
    tool_name = canonical_tool_name(tool_name)
    if tool_name.startswith("mcp__"):
        if content is not None and content not in ("", "*"):
            raise RuleSyntaxError(f"'{stripped}': MCP rules take no content; write '{tool_name}' or 'mcp__server__*'")
        content = None
    if content in ("", "*"):
        # Tool() and Tool(*) are the whole tool, as in Claude Code.
        content = None
    if tool_name == "WebFetch" and content is not None and not _is_domain_content(content):
        raise RuleSyntaxError(f"'{stripped}': WebFetch rules name a host as 'WebFetch(domain:example.com)'")
    return PermissionRule(tool_name, content, behavior, source, base=base, origin=origin)


def _is_domain_content(content: str) -> bool:
    return content.startswith("domain:") and bool(content[len("domain:") :].strip())


def _first_unescaped(text: str, char: str) -> int:
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == char:
            return i
    return -1


def _check_balanced(inner: str, whole: str) -> None:
    depth = 0
    escaped = False
    for ch in inner:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise RuleSyntaxError(
                    f"'{whole}' has unbalanced parentheses; escape literal ones in the content as '\\(' and '\\)'"
                )
    if depth:
        raise RuleSyntaxError(
            f"'{whole}' has unbalanced parentheses; escape literal ones in the content as '\\(' and '\\)'"
        )


def _unescape(text: str) -> str:
    return re.sub(r"\\([()\\])", r"\1", text)


def _check_mcp_name(name: str) -> None:
    parts = name.split("__")
    if len(parts) < 2 or not parts[1]:
        raise RuleSyntaxError(f"'{name}' names no MCP server; write 'mcp__<server>' or 'mcp__<server>__<tool>'")
    if len(parts) > 2 and not "__".join(parts[2:]):
        raise RuleSyntaxError(f"'{name}' ends with '__' but names no tool; write 'mcp__{parts[1]}__*' or a tool")
    if "*" in "__".join(parts[1:-1]) or ("*" in parts[-1] and parts[-1] != "*") or (len(parts) == 2 and "*" in parts[1]):
        raise RuleSyntaxError(f"'{name}': in MCP rules '*' may only stand for the whole tool part, as 'mcp__server__*'")


def format_rule(rule: PermissionRule) -> str:
    """The rule as it is written in settings, with literal parentheses escaped."""
    if rule.content is None:
        return rule.tool_name
    return f"{rule.tool_name}({rule.content.replace('(', chr(92) + '(').replace(')', chr(92) + ')')})"
