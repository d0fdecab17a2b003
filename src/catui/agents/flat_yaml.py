"""The fastest path for agent frontmatter: a block of flat ``key: value`` lines, read with one regex.

Most agent files' frontmatter is a handful of lines like ``name: reviewer``,
``description: Use this agent when ...``, ``tools: Read, Grep`` or
``tools: [Read, Grep]``, sometimes with quoted values. One compiled regex
walks those lines; Python only looks at each value to type it the YAML 1.2
way. Anything else — indentation, comments, block scalars, ``#`` after a
plain value, escapes other than ``\\\\`` and ``\\"``, tabs or odd characters,
CRLF, keys YAML would type, duplicate keys — makes ``read_flat_frontmatter``
return None, and the caller uses the general readers (``simple_yaml``, then
PyYAML), which give the same result on everything this module accepts. The
differential tests compare both on generated and real frontmatter.

A plain value holding ``": "`` (``description: Example: user: hi``) is a YAML
error, after which Claude Code quotes such values and parses again; this
module follows that rule with the same quoting function as the general path.
"""

from __future__ import annotations

import re
from typing import Any

from catui.agents.simple_yaml import _CORE_BOOL, _TYPED_START, _NotSimple, _scalar

# Characters that send the whole block to the general readers: controls and tabs, YAML 1.1 line
# breaks, the BOM, non-characters PyYAML refuses, and \r (CRLF text).
_ODD = "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ufeff\\ufffe\\uffff"
# First characters of a plain value that YAML gives a meaning (or that Claude Code's quoting regex
# would skip over as white space): left to the general readers.
_PLAIN_BAD_START = " \\-?:,\\[\\]{}#&*!|>'\"%@`\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000"
_FLAT_LINE_RE = re.compile(
    r"\n*([A-Za-z_][A-Za-z0-9_-]*): +(?:"
    rf'"([^"\\{_ODD}]*(?:\\[\\"][^"\\{_ODD}]*)*)"'  # double quotes, escapes \\ and \" only
    rf"|'([^'{_ODD}]*)'"  # single quotes without '' inside
    rf"|\[([^\[\]{{}}#:\\{_ODD}]*)\]"  # a one-line flow list of plain or simply quoted items
    rf"|([^{_PLAIN_BAD_START}{_ODD}][^{_ODD}]*)"  # a plain value (checked below)
    r")(?:\n|\Z)"
)
_NULL_KEYS = frozenset({"null", "Null", "NULL"})


class _ColonValue(Exception):
    """A plain value holds ': ': the first YAML parse fails, and Claude Code's quote-retry decides."""


def _plain(value: str) -> Any:
    if value[-1] == " ":
        value = value.rstrip(" ")
    if " #" in value or value[-1] == ":":
        raise _NotSimple  # a comment, or a mapping indicator: the general readers decide
    if ": " in value:
        raise _ColonValue
    if value[0] in _TYPED_START or value in _CORE_BOOL:
        return _scalar(value)
    return value


def _flow_items(inner: str) -> list[Any]:
    inner = inner.strip(" ")
    if not inner:
        return []
    items = []
    for part in inner.split(","):
        part = part.strip(" ")
        if not part:
            raise _NotSimple  # "[a,,b]" or a trailing comma
        quote = part[0]
        if quote == '"' or quote == "'":
            # No comma, backslash or quote inside (a comma would have split the item): the text as is.
            if len(part) < 2 or part[-1] != quote or quote in part[1:-1]:
                raise _NotSimple
            items.append(part[1:-1])
        else:
            items.append(_scalar(part, in_flow=True))
    return items


def _read(text: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    position = 0
    end = len(text)
    # match() at each line start, not finditer(): a search would scan the rest of a block that has
    # already proved not to be flat.
    match_line = _FLAT_LINE_RE.match
    while position < end:
        match = match_line(text, position)
        if match is None:
            if text[position:].strip("\n"):
                raise _NotSimple
            break
        position = match.end()
        key, double, single, flow, plain = match.groups()
        if key in result or key in _CORE_BOOL or key in _NULL_KEYS:
            raise _NotSimple  # a duplicate key is an error; a typed key is not a string
        if plain is not None:
            result[key] = _plain(plain)
        elif double is not None:
            if "\\" in double:
                # \x00 cannot occur (the regex refuses controls): a placeholder for the escaped backslash.
                double = double.replace("\\\\", "\x00").replace('\\"', '"').replace("\x00", "\\")
            result[key] = double
        elif single is not None:
            result[key] = single
        else:
            result[key] = _flow_items(flow)
    return result


def read_flat_frontmatter(text: str) -> tuple[dict[str, Any], bool] | None:
    """``(mapping, retried)`` for a block of flat ``key: value`` lines, else None (use the general readers).

    ``text`` is the frontmatter after Claude Code's first step, ``prequote_hash_values`` (values
    holding `` #`` double-quoted), as the general readers get it.

    ``retried`` is True when the mapping comes from Claude Code's quote-retry (a plain value held
    ``": "``); the values are then exactly what YAML reads after that quoting.
    """
    if "\r" in text:
        return None
    try:
        return _read(text), False
    except _NotSimple:
        return None
    except _ColonValue:
        pass
    from catui.agents.frontmatter import quote_problematic_values

    try:
        return _read(quote_problematic_values(text)), True
    except (_NotSimple, _ColonValue):
        return None
