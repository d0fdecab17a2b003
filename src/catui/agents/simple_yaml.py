"""A fast reader for the plain YAML that agent frontmatter is almost always made of.

Running a full YAML parser on every agent file costs more than everything
else the loader does, so the common shapes are read directly here, with YAML
1.2 core-schema typing (null, true/false, decimal integers, floats; anything
else a string):

- ``key: value`` lines with plain, single-quoted or simply double-quoted values;
- flow lists of such scalars (``tools: [Read, Grep]``);
- block lists (``tools:`` then ``  - Read`` lines at one indentation);
- nested mappings of the same (``hooks:`` then ``  pre: ...``);
- list items that are one-line mappings (``- matcher: x`` then more keys under it);
- literal and folded block scalars (``|``, ``|-``, ``>``, ``>-``) with plain content;
- comment lines, and `` # comments`` after a plain value or a flow list.

Anything subtler — anchors, tags, escapes, continuation lines, duplicate keys,
odd characters, ``: `` inside a plain value, a comment after a quoted value or
ending a block scalar, keep chomping, indentation indicators, more-indented
folded lines — raises
internally and the caller falls back to the real parser. The test suite
checks that both give the same result on the whole corpus and on tricky input.
"""

from __future__ import annotations

import re
from typing import Any

# Values are stripped of spaces afterwards: a lazy ".*?" before " *" is slow on long descriptions.
_KEY_LINE_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_-]*):(?: (.*))?\Z")
_PLAIN_UNSAFE_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Characters YAML treats specially (line breaks in YAML 1.1, non-printables, BOM, tabs): leave them to
# the parser. \r is not in the class, so CRLF text stays on the fast path.
_ODD_CHARACTERS_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\t]")
_CORE_NULL_RE = re.compile(r"(?:~|null|Null|NULL)\Z")
_CORE_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_CORE_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
_CORE_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
# Keys that start like a number but are not a simple one: the parser decides.
_OTHER_NUMBER_RE = re.compile(
    r"0o|0x|[-+]?(?:\.[0-9]|[0-9]+\.|[0-9]+[eE])|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
)
# The rest of the core schema's numbers (yaml12.py's resolvers): octal, hex, .inf, .nan. Any other
# plain scalar that merely starts like a number (``1.0.0``, ``2.0.0-alpha``) is a string.
_SPECIAL_NUMBER_RE = re.compile(r"(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z")
_TYPED_START = frozenset("~nN+-.0123456789")

# Inside double quotes: an escape other than \\ or \", or a bare quote, needs the real parser.
_OTHER_ESCAPE_RE = re.compile(r'(?<!\\)(?:\\\\)*(?:\\[^\\"]|\\\Z|")')
_SIMPLE_ESCAPE_RE = re.compile(r'\\([\\"])')

# Block scalar headers handled here: (folded?, strip the final line break?)
_BLOCK_HEADERS = {"|": (False, False), "|-": (False, True), ">": (True, False), ">-": (True, True)}


class _NotSimple(Exception):
    """The text needs the real YAML parser."""


def _scalar(value: str, *, in_flow: bool = False) -> Any:
    """A plain or simply-quoted scalar's value; raises _NotSimple when the real parser must decide."""
    if not value:
        return None
    first = value[0]
    if first == "'":
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == "'" and "'" not in inner:
            return inner
        raise _NotSimple
    if first == '"':
        return _double_quoted(value)
    if first in _PLAIN_UNSAFE_START or ": " in value or " #" in value or value.endswith(":"):
        raise _NotSimple
    if in_flow and any(ch in value for ch in ",[]{}"):
        raise _NotSimple
    if value in _CORE_BOOL:
        return _CORE_BOOL[value]
    if first in _TYPED_START:  # only these can begin a null or a number
        if _CORE_NULL_RE.match(value):
            return None
        if _CORE_INT_RE.match(value):
            return int(value, 10)
        if _CORE_FLOAT_RE.match(value):
            return float(value)
        if _SPECIAL_NUMBER_RE.match(value):
            raise _NotSimple
    return value


def _double_quoted(value: str) -> str:
    """A one-line double-quoted scalar whose only escapes are ``\\\\`` and ``\\"`` (what the quote-retry writes)."""
    if len(value) < 2 or value[-1] != '"':
        raise _NotSimple
    inner = value[1:-1]
    if "\\" not in inner:
        if '"' in inner:
            raise _NotSimple
        return inner
    if _OTHER_ESCAPE_RE.search(inner):
        raise _NotSimple
    return _SIMPLE_ESCAPE_RE.sub(lambda m: m.group(1), inner)


def _flow_list(value: str) -> list[Any]:
    inner = value[1:-1].strip()
    if not inner:
        return []
    items = []
    for part in inner.split(","):
        part = part.strip()
        if not part:
            raise _NotSimple
        items.append(_scalar(part, in_flow=True))
    return items


def _without_comment(value: str) -> str:
    """A block-context value without its trailing `` # comment`` (`` #`` always starts one after plain text)."""
    if value[0] == "#":
        return ""  # "key: # note": no value on this line
    cut = value.find(" #")
    if cut < 0:
        return value
    quote = value[0]
    if quote in "'\"":
        # Only the plain case: no escapes, and the first quote after the opening one closes it.
        close = value.find(quote, 1)
        if close < 0 or "\\" in value[:close]:
            raise _NotSimple
        rest = value[close + 1 :]
        if rest[:1] == quote:
            raise _NotSimple  # '' inside single quotes is an escaped quote
        if rest.strip(" ") and not (rest.startswith(" ") and rest.lstrip(" ").startswith("#")):
            raise _NotSimple
        return value[: close + 1]
    return value[:cut].rstrip(" ")


def _is_plain_key(key: str) -> bool:
    # Keys YAML would type (numbers, booleans, null) are not simple strings.
    if key in _CORE_BOOL:
        return False
    if key[0] in _TYPED_START:
        return not (key.isdigit() or _CORE_NULL_RE.match(key) or _OTHER_NUMBER_RE.match(key))
    return True


def _is_plain_colon_value(value: str) -> bool:
    # A plain scalar (not quoted, not a flow collection, not a block scalar …) holding ': '.
    return ": " in value and value[0] not in _PLAIN_UNSAFE_START


class _Reader:
    """Reads the lines of one frontmatter block; each method raises _NotSimple on anything unusual."""

    def __init__(self, text: str, *, tolerate_colon_values: bool) -> None:
        lines = text.split("\n")
        if "\r" in text:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        self.lines = lines
        # Per line, computed once: the text after the indentation, the indentation, and whether the
        # line is blank or a comment outside a block scalar.
        self.rests = rests = [line.lstrip(" ") for line in lines]
        self.indents = [len(line) - len(rest) for line, rest in zip(lines, rests, strict=True)]
        self.skippable = [not rest or rest[0] == "#" for rest in rests]
        self.ends_with_newline = text.endswith("\n")
        self.pos = 0
        self.tolerate_colon_values = tolerate_colon_values
        self.saw_colon_value = False

    def _skip_blank(self) -> None:
        skippable = self.skippable
        pos = self.pos
        count = len(skippable)
        while pos < count and skippable[pos]:
            pos += 1
        self.pos = pos

    def mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        lines = self.lines
        indents = self.indents
        skippable = self.skippable
        count = len(lines)
        key_line = _KEY_LINE_RE.match
        while True:
            pos = self.pos
            while pos < count and skippable[pos]:
                pos += 1
            self.pos = pos
            if pos >= count:
                return result
            current = indents[pos]
            if current < indent:
                return result
            if current > indent:
                raise _NotSimple
            match = key_line(lines[pos], current)
            if match is None:
                raise _NotSimple
            key, value_text = match.group(1, 2)
            if value_text:
                value_text = value_text.strip(" ")
                if "#" in value_text:
                    value_text = _without_comment(value_text)
            else:
                value_text = ""
            if key in result or ((key in _CORE_BOOL or key[0] in _TYPED_START) and not _is_plain_key(key)):
                raise _NotSimple
            self.pos = pos + 1
            if not value_text:
                result[key] = self._nested(indent)
            elif value_text in _BLOCK_HEADERS:
                result[key] = self._block_scalar(indent, value_text)
            elif value_text[0] == "[" and value_text[-1] == "]":
                result[key] = _flow_list(value_text)
            else:
                try:
                    result[key] = _scalar(value_text)
                except _NotSimple:
                    if not (self.tolerate_colon_values and indent == 0 and _is_plain_colon_value(value_text)):
                        raise
                    self.saw_colon_value = True
                    result[key] = value_text

    def _nested(self, parent_indent: int) -> Any:
        self._skip_blank()
        pos = self.pos
        if pos >= len(self.lines):
            return None
        indent = self.indents[pos]
        rest = self.rests[pos]
        is_item = rest == "-" or rest.startswith("- ")
        if indent < parent_indent or (indent == parent_indent and not is_item):
            return None
        if indent == parent_indent:  # "key:" then "- item" at the key's own indentation
            raise _NotSimple
        return self._list(indent) if is_item else self.mapping(indent)

    def _list(self, indent: int) -> list[Any]:
        items: list[Any] = []
        lines, rests, indents, skippable = self.lines, self.rests, self.indents, self.skippable
        count = len(lines)
        while True:
            pos = self.pos
            while pos < count and skippable[pos]:
                pos += 1
            self.pos = pos
            if pos >= count:
                return items
            current = indents[pos]
            if current < indent:
                return items
            if current > indent:
                raise _NotSimple
            rest = rests[pos]
            if rest[:2] != "- ":
                raise _NotSimple
            raw = rest[2:]
            text = raw.strip(" ")
            if text and raw[0] != " " and ":" in text and _KEY_LINE_RE.match(text):
                # "- key: value": a mapping whose keys line up two columns in; read it as if the
                # dash were a space.
                lines[pos] = " " * (current + 2) + text
                rests[pos] = text
                indents[pos] = current + 2
                items.append(self.mapping(current + 2))
                continue
            if "#" in text:
                text = _without_comment(text)
            if not text:
                raise _NotSimple  # "-" alone or "- # note": a null item, or a nested block below
            items.append(_scalar(text))
            self.pos = pos + 1

    def _block_scalar(self, parent_indent: int, header: str) -> str:
        folded, strip_final = _BLOCK_HEADERS[header]
        lines, rests, indents = self.lines, self.rests, self.indents
        count = len(lines)
        pos = self.pos
        if pos >= count or not rests[pos]:
            raise _NotSimple  # empty block or leading blank lines: rare, and subtle
        width = indents[pos]
        if width <= parent_indent:
            raise _NotSimple
        content: list[str | None] = []  # None = an empty line
        while pos < count:
            rest = rests[pos]
            if not rest:
                if lines[pos]:  # a line of spaces only: whether it is content depends on its length
                    raise _NotSimple
                content.append(None)
                pos += 1
                continue
            current = indents[pos]
            if current < width:
                if rest[0] == "#":
                    raise _NotSimple  # a comment ending the block: leave its chomping to the parser
                break
            text = lines[pos][width:]
            if folded and (current > width or text.endswith(" ")):
                raise _NotSimple
            content.append(text)
            pos += 1
        self.pos = pos
        if pos >= count and not self.ends_with_newline:
            raise _NotSimple  # the last line has no line break to keep or strip
        while content and content[-1] is None:
            content.pop()
        if folded:
            parts: list[str] = []
            empty_run = 0
            for item in content:
                if item is None:
                    empty_run += 1
                    continue
                if parts:
                    parts.append("\n" * empty_run if empty_run else " ")
                parts.append(item)
                empty_run = 0
            body = "".join(parts)
        else:
            body = "\n".join("" if item is None else item for item in content)
        return body if strip_final else body + "\n"


def _read(text: str, *, tolerate_colon_values: bool) -> tuple[dict[str, Any] | None, bool]:
    if _ODD_CHARACTERS_RE.search(text):
        return None, False
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None, False  # a lone \r is a line break to YAML, not text: the parser decides
    reader = _Reader(text, tolerate_colon_values=tolerate_colon_values)
    try:
        return reader.mapping(0), reader.saw_colon_value
    except _NotSimple:
        return None, False


def parse_simple_yaml(text: str) -> dict[str, Any] | None:
    """The mapping for simple frontmatter, or None when the real YAML parser must read it."""
    result, saw_colon_value = _read(text, tolerate_colon_values=False)
    return None if saw_colon_value else result


def analyse_simple_yaml(text: str) -> tuple[dict[str, Any] | None, bool]:
    """One pass: (mapping, False) for simple text; (_, True) when it fails only on colon values; (None, False).

    A top-level plain value holding ``": "`` (``description: Example: user: hi``) is always a YAML
    error, so when that is the only obstacle the first parse is certain to fail and Claude Code's
    quote-retry decides: the caller can skip straight to it.
    """
    return _read(text, tolerate_colon_values=True)


def fails_only_on_colon_values(text: str) -> bool:
    """True when ``text`` is simple except for top-level plain values containing ``": "``."""
    result, saw_colon_value = _read(text, tolerate_colon_values=True)
    return result is not None and saw_colon_value
