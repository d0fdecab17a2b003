"""Finding and parsing the YAML frontmatter of an agent file exactly as Claude Code does.

Claude Code's rules (from its frontmatter parser):

1. The block is found only by ``^---\\s*\\n([\\s\\S]*?)---\\s*\\n?`` on the raw text:
   it starts at the first character, tolerates CRLF, and ends at the first
   ``---`` anywhere, even mid-line. (JavaScript's ``\\s`` is reproduced below.)
2. Single-line ``key: value`` lines whose value contains `` #`` are
   double-quoted before parsing, so ``Fix issue #12`` is not cut at a comment.
   catui keeps this only for prose fields (``description`` …): in a field that
   holds identifiers (``model``, ``tools`` … see ``IDENTIFIER_KEYS``) `` #``
   starts a comment, as YAML reads it, so ``model: sonnet  # note`` is
   ``sonnet`` (docs/decisions.md, "` #` in frontmatter values").
3. If the YAML does not parse, every single-line unquoted ``key: value`` whose
   value contains one of ``{}[]*&#!|>%@``` or ``": "`` is double-quoted and
   parsing is retried. If that fails too, the frontmatter is ``{}``. A result
   that is not a mapping is also ``{}``.

The YAML itself is read by PyYAML's C loader with YAML 1.2 scalar rules
(``yaml12.load_yaml12``), which also rejects continuation lines that Claude
Code's parser rejects for being indented too little.

catui differs deliberately in one place: a UTF-8 byte-order mark is removed
before the search (Claude Code silently ignores such a file, reported upstream
as a bug), because editors on Windows add it invisibly.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

import yaml

from catui.agents.yaml12 import UnderIndentedLineError, load_yaml12

# JavaScript's \s (ECMAScript WhiteSpace + LineTerminator), which differs from Python's.
_JS_SPACE = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
FRONTMATTER_RE = re.compile(rf"\A---{_JS_SPACE}*\n([\s\S]*?)---{_JS_SPACE}*\n?")

# JavaScript's '.' excludes these line terminators; '$' without the m flag is the end of the line here.
_SIMPLE_LINE_RE = re.compile(r"\A([a-zA-Z_-]+):" + _JS_SPACE + r"+([^\n\r\u2028\u2029]+)\Z")
_YAML_SPECIAL_RE = re.compile(r"[{}\[\]*&#!|>%@`]|: ")

_JS_SPACE_CHARS = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)

FrontmatterStatus = Literal["ok", "ok_hash_prequoted", "ok_after_quote_retry", "yaml_error", "no_frontmatter"]

BOM = "\ufeff"


class ParsedMarkdown(NamedTuple):
    """The result of splitting a Markdown file into frontmatter and body (immutable; a tuple is cheap to build)."""

    frontmatter: dict[str, Any]
    body: str
    status: FrontmatterStatus
    # The YAML error (first attempt's message with its file line) when status is yaml_error.
    error: str | None = None
    # True when the YAML parsed but was not a mapping (a list, a bare string …).
    not_a_mapping: bool = False
    # Where the body begins in the text given to parse_markdown (0 when there is no frontmatter).
    body_start: int = 0


def find_frontmatter(text: str) -> tuple[str, int] | None:
    """``FRONTMATTER_RE.match(text)`` without the regex engine: (block text, where the body starts).

    The lazy ``[\\s\\S]*?`` scan is the slow part of the regex on long files; string searches give
    the same answer (the block starts after the last newline of the whitespace following the
    opening ``---``, and ends at the first ``---`` after that).
    """
    if not text.startswith("---"):
        return None
    if text[3:4] == "\n" and text[4:5] not in _JS_SPACE_CHARS:
        # The usual "---\n" then a key: the block starts right after that line break.
        end = text.find("---", 4)
        if end < 0:
            return None
        body_start = end + 3
        if (
            text[body_start : body_start + 1] == "\n"
            and text[body_start + 1 : body_start + 2] not in _JS_SPACE_CHARS
        ):
            return text[4:end], body_start + 1
        length = len(text)
        while body_start < length and text[body_start] in _JS_SPACE_CHARS:
            body_start += 1
        return text[4:end], body_start
    length = len(text)
    position = 3
    while position < length and text[position] in _JS_SPACE_CHARS:
        position += 1
    newline = text.rfind("\n", 3, position)
    if newline < 0:
        return None
    start = newline + 1
    end = text.find("---", start)
    if end < 0:
        return None
    body_start = end + 3
    while body_start < length and text[body_start] in _JS_SPACE_CHARS:
        body_start += 1
    return text[start:end], body_start


IDENTIFIER_KEYS: frozenset[str] = frozenset({
    "name", "model", "tools", "disallowedTools", "color", "effort", "permissionMode", "memory", "isolation",
    "maxTurns", "background", "skills", "mcpServers", "allowed-tools", "allowedTools", "cwd",
    "appendSystemPrompt", "user-invocable", "disable-model-invocation", "context", "agent",
})
"""Fields whose values are names, ids or flags: `` #`` there always starts a comment (no id holds " #")."""


def _is_quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"


def _double_quote(key: str, value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}: "{escaped}"'


def prequote_hash_values(text: str) -> str:
    """Quote single-line values containing `` #`` so YAML does not read the rest as a comment.

    Flow collections (``[a, b]  # note``) are left alone: quoting would turn a list into a string.
    """
    # "#" first: a one-character search runs at memchr speed, a two-character one ~25x slower (CPython 3.11).
    if "#" not in text or " #" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if " #" not in line:
            continue  # the value cannot hold " #" either (most lines: skip the regex)
        match = _SIMPLE_LINE_RE.match(line)
        if not match:
            continue
        key, value = match.group(1), match.group(2)
        if " #" in value and not _is_quoted(value) and value[0] not in "[{":
            if key in IDENTIFIER_KEYS:
                lines[i] = f"{key}: {value.split(' #', 1)[0].rstrip()}"  # YAML's reading: the rest is a comment
            else:
                lines[i] = _double_quote(key, value)
    return "\n".join(lines)


def ambiguous_hash_lines(text: str) -> list[tuple[int, str]]:
    """(file line, key) of prose values holding `` # `` that may be meant as a comment but are read as text.

    ``text`` is the frontmatter block (the lines between the ``---`` lines, so its first line is the file's
    line 2). ``#12``-style references (no space after the ``#``) are not ambiguous; ``text  # note`` is.
    """
    found: list[tuple[int, str]] = []
    if " #" not in text:
        return found
    for number, line in enumerate(text.split("\n"), start=2):
        match = _SIMPLE_LINE_RE.match(line.rstrip("\r"))
        if not match or match.group(1) in IDENTIFIER_KEYS:
            continue
        value = match.group(2)
        if _is_quoted(value) or value[0] in "[{":
            continue
        if re.search(r" #(\s|$)", value):
            found.append((number, match.group(1)))
    return found


_KEY_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:\s|$)")


def key_lines(text: str) -> dict[str, int]:
    """The file line of each top-level key of a frontmatter block (whose first line is the file's line 2)."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=2):
        match = _KEY_LINE_RE.match(line)
        if match:
            lines.setdefault(match.group(1), number)
    return lines


def quote_problematic_values(text: str) -> str:
    """Claude Code's retry: double-quote single-line values that contain YAML special characters."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _SIMPLE_LINE_RE.match(line)
        if not match:
            continue
        key, value = match.group(1), match.group(2)
        if _is_quoted(value):
            continue
        if _YAML_SPECIAL_RE.search(value):
            lines[i] = _double_quote(key, value)
    return "\n".join(lines)


def describe_yaml_error(exc: yaml.YAMLError, first_line: int) -> str:
    """``line N, column M: <problem>; <how to fix it>``, the line counted in the whole file.

    ``first_line`` is the file line of the YAML's first line (2 for frontmatter: the opening ``---``
    is line 1).
    """
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, UnderIndentedLineError) and exc.context_mark is not None:
        start = exc.context_mark.line + first_line
        spaces = exc.required_indent
        problem = (
            f"this line continues the {exc.kind} that starts on line {start}, but YAML needs it indented "
            f"by at least {spaces} space{'' if spaces == 1 else 's'}"
        )
        fix = f"indent it, or join it to line {start}"
    elif (
        isinstance(exc, yaml.MarkedYAMLError)
        and exc.context == "while scanning a simple key"
        and exc.context_mark is not None
    ):
        # PyYAML notices the missing ':' on the line after the one that lacks it: point at that one.
        mark = exc.context_mark
        problem = "this line is not a 'key: value' line"
        fix = "if it continues the value above, indent it"
    else:
        fix = "quote values that contain ': ' or '#', e.g. description: \"...\""
    if mark is None:
        return f"{problem}; {fix}"
    return f"line {mark.line + first_line}, column {mark.column + 1}: {problem}; {fix}"


def parse_markdown(text: str, *, strip_bom: bool = True, with_body: bool = True) -> ParsedMarkdown:
    """Split ``text`` into frontmatter (a dict, possibly empty) and body, following Claude Code's rules.

    ``with_body=False`` leaves ``body`` empty (``body_start`` still says where it begins in ``text``):
    a loader that trims the body anyway saves copying a large file's text twice.
    """
    offset = 0
    if strip_bom and text.startswith(BOM):
        text = text[1:]
        offset = 1
    found = find_frontmatter(text)
    if found is None:
        return ParsedMarkdown({}, text, "no_frontmatter")
    raw, body_start = found
    body = text[body_start:] if with_body else ""
    data, status, error, not_a_mapping = parse_frontmatter_block(raw)
    return ParsedMarkdown(data, body, status, error, not_a_mapping, body_start + offset)


def parse_frontmatter_block(raw: str) -> tuple[dict[str, Any], FrontmatterStatus, str | None, bool]:
    """(mapping, status, YAML error, not a mapping) for the text between the ``---`` lines.

    Claude Code's steps: quote `` #`` values, parse; if that fails, quote values with special
    characters and parse once more. The error reported is the first attempt's, as it is the one
    that describes the file as written.
    """
    prequoted = prequote_hash_values(raw)
    status: FrontmatterStatus = "ok" if prequoted is raw or prequoted == raw else "ok_hash_prequoted"
    try:
        try:
            data = load_yaml12(prequoted)
        except yaml.YAMLError as first_error:
            message = describe_yaml_error(first_error, first_line=2)
            try:
                data = load_yaml12(quote_problematic_values(prequoted))
            except yaml.YAMLError:
                return {}, "yaml_error", message, False
            status = "ok_after_quote_retry"
    except RecursionError:
        return {}, "yaml_error", "the YAML is nested too deeply; flatten it", False
    if data is None:
        return {}, status, None, False
    if not isinstance(data, dict):
        return {}, status, None, True
    return data, status, None, False
