"""Parsing of ``tools`` / ``disallowedTools`` values as Claude Code's loader does."""

from __future__ import annotations

from typing import Any

from catui.permissions.tool_specs import split_tool_specs


def parse_tool_list(value: Any) -> list[str] | None:
    """A frontmatter tool list: string or list → names; any ``*`` → None (all tools); null/empty → [].

    Claude Code joins the string items of a list with ``", "`` and splits the result, so a
    list item may itself hold several names (``- Read, Grep``); non-string items are dropped.
    A mapping (another tool's format) or any other type gives ``[]``: no tools.
    """
    if value is None:
        return []
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        text = ", ".join(item for item in value if isinstance(item, str))
    else:
        return []
    names = split_tool_specs(text)
    if "*" in names:
        return None
    return names


def tool_base_name(entry: str) -> str:
    """``Bash(git:*)`` → ``Bash``; ``Agent(a, b)`` → ``Agent``; a plain name is returned unchanged."""
    paren = entry.find("(")
    return entry[:paren].strip() if paren > 0 else entry.strip()
