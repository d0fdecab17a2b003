"""Parsing of ``tools`` / ``disallowedTools`` values as Claude Code's loader does."""

from __future__ import annotations

from typing import Any


def split_outside_parens(text: str) -> list[str]:
    """Split on commas and whitespace that are not inside parentheses: ``Agent(a, b), Read`` → 2 entries."""
    if "(" not in text:
        # Splitting on the regex [,\s]+ and dropping empty items, without the regex engine: str.split()
        # splits on exactly the characters \s matches (a test checks every code point).
        return text.replace(",", " ").split()
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        items.append("".join(current))
    return [i.strip() for i in items if i.strip()]


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
    names = split_outside_parens(text)
    if "*" in names:
        return None
    return names


def tool_base_name(entry: str) -> str:
    """``Bash(git:*)`` → ``Bash``; ``Agent(a, b)`` → ``Agent``; a plain name is returned unchanged."""
    paren = entry.find("(")
    return entry[:paren].strip() if paren > 0 else entry.strip()
