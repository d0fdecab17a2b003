"""Splitting a list of tool specs (``Read, Grep Bash(git status:*)``) into its entries.

One splitter for both places such lists are written: permission rules
(``--allowedTools``, ``--disallowedTools``) and agent definitions' ``tools`` /
``disallowedTools``. It sits in its own module, importing nothing, so the
agent loaders use it without loading the rule matcher (``rules.py``).
"""

from __future__ import annotations


def split_tool_specs(text: str) -> list[str]:
    """Split on commas and whitespace outside parentheses: ``Agent(a, b), Read`` → 2 entries.

    A backslash keeps the next character in the entry, as the rule syntax reads it: ``\\(`` and
    ``\\)`` do not open or close a parenthesis, and an escaped comma or space does not split.
    Empty entries are dropped.
    """
    if "(" not in text and "\\" not in text:
        # The common case, without the loop: str.split() splits on exactly the characters that
        # str.isspace() accepts (the regex [,\s]+ with empty items dropped; a test checks every code point).
        return text.replace(",", " ").split()
    entries: list[str] = []
    depth = 0
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
            continue
        if char == "\\":
            escaped = True
            current.append(char)
            continue
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                entries.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        entries.append("".join(current))
    return [entry.strip() for entry in entries if entry.strip()]
