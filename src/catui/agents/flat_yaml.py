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
# One alternative per line: a flat "key: value" line (groups 1-5), a blank line, or anything else
# (group 6, which sends the block to the general readers). Quotes and brackets stay in their groups
# so that an empty quoted value ("") differs from an alternative that did not match ("" in findall).
_FLAT_LINES_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_-]*): +(?:"
    rf'("[^"\\{_ODD}]*(?:\\[\\"][^"\\{_ODD}]*)*")'  # double quotes, escapes \\ and \" only
    rf"|('[^'{_ODD}]*')"  # single quotes without '' inside
    rf"|(\[[^\[\]{{}}#:\\{_ODD}]*\])"  # a one-line flow list of plain or simply quoted items
    rf"|([^{_PLAIN_BAD_START}{_ODD}][^{_ODD}]*)"  # a plain value (checked below)
    r")(?:\n|\Z)"
    r"|\n"
    r"|([^\n]+)\n?"
)
# A line that starts indented, as a list item or as a comment. One regex search with a literal first
# character is cheaper than three two-character substring searches.
_NOT_FLAT_LINE_START_RE = re.compile(r"\n[ #-]")
_TYPED_KEYS = frozenset(_CORE_BOOL) | {"null", "Null", "NULL"}
# What Claude Code's quote-retry looks for (frontmatter.quote_problematic_values): its key pattern,
# and the special characters of its value pattern (the other alternative, ": ", is tested apart).
_RETRY_KEY_RE = re.compile(r"[a-zA-Z_-]+\Z")
_SPECIAL_RE = re.compile(r"[{}\[\]*&#!|>%@`]")


class _ColonValue(Exception):
    """A plain value holds ': ': the first YAML parse fails, and Claude Code's quote-retry decides."""


def _plain(value: str) -> Any:
    """A plain value that is not an untyped string without special characters (the caller's fast case)."""
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


def _read(lines: list[tuple[str, ...]], *, retried: bool) -> dict[str, Any]:
    """The mapping from ``_FLAT_LINES_RE.findall`` rows; ``retried`` reads them as after the quote-retry.

    Claude Code's retry (``quote_problematic_values``) double-quotes, verbatim, the value of every
    line whose key has only letters, ``_`` and ``-`` and whose unquoted value holds ``: `` or one of
    ``{}[]*&#!|>%@```. Read after that quoting, such a value is its text as written (trailing spaces
    and brackets included); every other line reads as usual.
    """
    result: dict[str, Any] = {}
    typed_start = _TYPED_START
    for key, double, single, flow, plain, other in lines:
        if plain:
            if key in result or key in _TYPED_KEYS:
                raise _NotSimple  # a duplicate key is an error; a typed key is not a string
            if retried and (": " in plain or _SPECIAL_RE.search(plain)) and _RETRY_KEY_RE.match(key):
                result[key] = plain
            # The usual value: an untyped string with nothing YAML would read differently.
            # One-character searches first: they run at memchr speed, two-character ones do not.
            elif (
                plain[-1] in " :"
                or (":" in plain and ": " in plain)
                or ("#" in plain and " #" in plain)
                or plain[0] in typed_start
                or plain in _CORE_BOOL
            ):
                result[key] = _plain(plain)
            else:
                result[key] = plain
        elif not key:
            if other:
                raise _NotSimple  # a line that is not "key: value" (indentation, comment, list item …)
        elif key in result or key in _TYPED_KEYS:
            raise _NotSimple
        elif double:
            double = double[1:-1]
            if "\\" in double:
                # \x00 cannot occur (the regex refuses controls): a placeholder for the escaped backslash.
                double = double.replace("\\\\", "\x00").replace('\\"', '"').replace("\x00", "\\")
            result[key] = double
        elif single:
            result[key] = single[1:-1]
        elif retried and _RETRY_KEY_RE.match(key):
            result[key] = flow  # "[a, b]" holds '[': quoted by the retry, so it is text
        else:
            result[key] = _flow_items(flow[1:-1])
    return result


def read_flat_frontmatter(text: str) -> tuple[dict[str, Any], bool] | None:
    """``(mapping, retried)`` for a block of flat ``key: value`` lines, else None (use the general readers).

    ``text`` is the frontmatter after Claude Code's first step, ``prequote_hash_values`` (values
    holding `` #`` double-quoted), as the general readers get it.

    ``retried`` is True when the mapping comes from Claude Code's quote-retry (a plain value held
    ``": "``); the values are then exactly what YAML reads after that quoting.
    """
    # Indented, list-item and comment lines are never flat: decline before the regex reads the block.
    if "\r" in text or text[:1] in (" ", "-", "#") or _NOT_FLAT_LINE_START_RE.search(text):
        return None
    lines = _FLAT_LINES_RE.findall(text)
    try:
        return _read(lines, retried=False), False
    except _NotSimple:
        return None
    except _ColonValue:
        pass
    try:
        return _read(lines, retried=True), True
    except (_NotSimple, _ColonValue):
        return None  # e.g. a value with ': ' that the retry does not quote: a YAML error
