"""A fast reader for frontmatter made only of unambiguous ``key: value`` lines.

Most agent files hold a handful of plain lines (name, description, tools,
model, color). Running a full YAML parser on them costs more than everything
else the loader does, so such lines are read directly here, with YAML 1.2
core-schema typing (null, true/false, decimal integers; everything else a
string). Anything that could mean something subtler — block scalars,
continuation lines, comments, anchors, tags, escapes, duplicate keys, ``: ``
or `` #`` inside a value, floats, odd characters — makes ``parse_simple_yaml``
return None, and the caller uses the real parser. The test suite checks that
both give the same result on the whole corpus.
"""

from __future__ import annotations

import re
from typing import Any

_KEY_LINE_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_-]*):(?: +(.*?))? *\Z")
_BLOCK_ITEM_RE = re.compile(r"( +)- +(.*?) *\Z")
_PLAIN_UNSAFE_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Characters YAML treats specially (line breaks in YAML 1.1, non-printables, BOM): leave them to the parser.
_ODD_CHARACTERS_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\t]")
_CORE_NULL_RE = re.compile(r"(?:~|null|Null|NULL)\Z")
_CORE_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_CORE_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
# Floats, octal, hex, .inf/.nan (and anything that starts like them): typed by the YAML loader.
_OTHER_NUMBER_RE = re.compile(
    r"0o|0x|[-+]?(?:\.[0-9]|[0-9]+\.|[0-9]+[eE])|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
)

# Inside double quotes: an escape other than \\\\ or \\", or a bare quote, needs the real parser.
_OTHER_ESCAPE_RE = re.compile(r'(?<!\\)(?:\\\\)*(?:\\[^\\"]|\\\Z|")')
_SIMPLE_ESCAPE_RE = re.compile(r'\\([\\"])')

_TYPED_START = frozenset("~nN+-.0123456789")

_NOT_SIMPLE = (False, None)


def _scalar(value: str, *, in_flow: bool = False) -> tuple[bool, Any]:
    """(True, value) for a plain or simply-quoted scalar; (False, None) when the real parser must decide."""
    if not value:
        return True, None
    first = value[0]
    if first == "'":
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == "'" and "'" not in inner:
            return True, inner
        return _NOT_SIMPLE
    if first == '"':
        return _double_quoted(value)
    if first in _PLAIN_UNSAFE_START or ": " in value or " #" in value or value.endswith(":"):
        return _NOT_SIMPLE
    if in_flow and any(ch in value for ch in ",[]{}"):
        return _NOT_SIMPLE
    if value in _CORE_BOOL:
        return True, _CORE_BOOL[value]
    if first in _TYPED_START:  # only these can begin a null or a number
        if _CORE_NULL_RE.match(value):
            return True, None
        if _CORE_INT_RE.match(value):
            return True, int(value, 10)
        if _OTHER_NUMBER_RE.match(value):
            return _NOT_SIMPLE
    return True, value


def _double_quoted(value: str) -> tuple[bool, Any]:
    """A one-line double-quoted scalar whose only escapes are ``\\\\`` and ``\\"`` (what the quote-retry writes)."""
    if len(value) < 2 or value[-1] != '"':
        return _NOT_SIMPLE
    inner = value[1:-1]
    if "\\" not in inner:
        return (True, inner) if '"' not in inner else _NOT_SIMPLE
    if _OTHER_ESCAPE_RE.search(inner):
        return _NOT_SIMPLE
    return True, _SIMPLE_ESCAPE_RE.sub(lambda m: m.group(1), inner)


def _flow_list(value: str) -> tuple[bool, Any]:
    inner = value[1:-1].strip()
    if not inner:
        return True, []
    items = []
    for part in inner.split(","):
        part = part.strip()
        if not part:
            return _NOT_SIMPLE
        ok, item = _scalar(part, in_flow=True)
        if not ok:
            return _NOT_SIMPLE
        items.append(item)
    return True, items


def _is_plain_key(key: str) -> bool:
    # Keys YAML would type (numbers, booleans, null) are not simple strings.
    if key in _CORE_BOOL:
        return False
    if key[0] in _TYPED_START:
        return not (key.isdigit() or _CORE_NULL_RE.match(key) or _OTHER_NUMBER_RE.match(key))
    return True


def parse_simple_yaml(text: str) -> dict[str, Any] | None:
    """The mapping for frontmatter made only of unambiguous lines, or None to use the YAML parser."""
    result, saw_colon_value = _parse(text, tolerate_colon_values=False)
    return None if saw_colon_value else result


def analyse_simple_yaml(text: str) -> tuple[dict[str, Any] | None, bool]:
    """One pass: (mapping, False) for simple text; (_, True) when it fails only on colon values; (None, False).

    A top-level plain value holding ``": "`` (``description: Example: user: hi``) is always a YAML
    error, so when that is the only obstacle the first parse is certain to fail and Claude Code's
    quote-retry decides: the caller can skip straight to it.
    """
    return _parse(text, tolerate_colon_values=True)


def fails_only_on_colon_values(text: str) -> bool:
    """True when ``text`` is simple except for top-level plain values containing ``": "``."""
    result, saw_colon_value = _parse(text, tolerate_colon_values=True)
    return result is not None and saw_colon_value


def _parse(text: str, *, tolerate_colon_values: bool) -> tuple[dict[str, Any] | None, bool]:
    if _ODD_CHARACTERS_RE.search(text):  # (\r is not in the class: CRLF text stays on the fast path)
        return None, False
    result: dict[str, Any] = {}
    saw_colon_value = False
    list_key: str | None = None  # the last "key:" line with no value; block list items may follow
    list_indent: str | None = None
    for raw_line in text.split("\n"):
        line = raw_line[:-1] if raw_line.endswith("\r") else raw_line
        if not line.strip():
            continue
        if line[0] == " ":
            item = _BLOCK_ITEM_RE.match(line)
            if list_key is None or item is None or (list_indent is not None and item.group(1) != list_indent):
                return None, False
            ok, value = _scalar(item.group(2))
            if not ok:
                return None, False
            list_indent = item.group(1)
            current = result[list_key]
            if current is None:
                current = result[list_key] = []
            current.append(value)
            continue
        match = _KEY_LINE_RE.match(line)
        if match is None:
            return None, False
        key, value_text = match.group(1), match.group(2) or ""
        if key in result or not _is_plain_key(key):
            return None, False
        if value_text.startswith("[") and value_text.endswith("]"):
            ok, value = _flow_list(value_text)
        else:
            ok, value = _scalar(value_text)
        if not ok and tolerate_colon_values and _is_plain_colon_value(value_text):
            ok, value, saw_colon_value = True, value_text, True
        if not ok:
            return None, False
        result[key] = value
        list_key, list_indent = (key, None) if not value_text else (None, None)
    return result, saw_colon_value


def _is_plain_colon_value(value: str) -> bool:
    # A plain scalar (not quoted, not a flow collection, not a block scalar …) holding ': '.
    return ": " in value and value[0] not in _PLAIN_UNSAFE_START
