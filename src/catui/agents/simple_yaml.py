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
_KEY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")
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
        if value.isdigit() and value.isascii():
            return int(value, 10)  # the common number, without the regexes
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


# Printable ASCII plus the two line-break characters: the characters the odd-character check lets through.
_PLAIN_ASCII_BYTES = bytes(range(0x20, 0x7F)) + b"\n\r"
# First characters after which a plain value may be something other than its own text (typed, quoted,
# a flow collection …): _scalar decides. Any other value without ':' and '#' is a string as it is, or
# one of _CORE_BOOL's booleans.
_NOT_TEXT_START = _PLAIN_UNSAFE_START | _TYPED_START

# Where a block scalar's content ends, one compiled pattern per (content indentation, folded?).
# Literal content: the first line break not followed by an empty line or by a line indented at least
# that much with something besides spaces (so a line of spaces only stops it, as does the end of the
# text after a final line break); one search finds it without visiting the lines in Python.
# Folded content: a run of lines that are empty or indented exactly that much without trailing spaces
# (more-indented or trailing-space lines change how YAML folds them, so they stop the run and the
# caller declines), each ending with a line break.
_BLOCK_END_RES: dict[tuple[int, bool], re.Pattern[str]] = {}
# Indentations come from files: patterns for deeper ones are compiled when needed (re keeps its own
# bounded cache) rather than kept here for ever.
_CACHED_INDENT_LIMIT = 64
_FOLDED_BREAKS_RE = re.compile(r"\n(\n*)")


def _block_end_re(width: int, folded: bool) -> re.Pattern[str]:
    pattern = _BLOCK_END_RES.get((width, folded))
    if pattern is None:
        if folded:
            pattern = re.compile(rf"(?:(?: {{{width}}}[^ \n](?:.*[^ \n])?)?\n)*")
        else:
            pattern = re.compile(rf"\n(?! {{{width}}} *[^ \n]|\n)")
        if width <= _CACHED_INDENT_LIMIT:
            _BLOCK_END_RES[width, folded] = pattern
    return pattern


# A run of list items at one indentation, each ending with a line break, whose text is plain (no ':'
# or '#', no space at either end, not starting with a quote) or quoted without escapes, quotes or
# anything after the closing quote: the common block list, read in one match instead of line by line.
# Any other line (a comment, a "- key: value" item, a last line without a line break …) ends the run
# and is read by the general loop. One compiled pattern per indentation.
_ITEM_RUN_RES: dict[int, re.Pattern[str]] = {}


def _item_run_re(indent: int) -> re.Pattern[str]:
    pattern = _ITEM_RUN_RES.get(indent)
    if pattern is None:
        pattern = re.compile(
            rf"""(?: {{{indent}}}- (?:[^ \n#:'"](?:[^\n#:]*[^ \n#:])?|"[^"\\\n]*"|'[^'\n]*')\n)+"""
        )
        if indent <= _CACHED_INDENT_LIMIT:
            _ITEM_RUN_RES[indent] = pattern
    return pattern


def _fold_breaks(match: re.Match[str]) -> str:
    # One line break between two lines becomes a space; n + 1 breaks (n empty lines) become n.
    return match.group(1) or " "


def _has_only_plain_characters(text: str) -> bool:
    """False when ``text`` holds a character of _ODD_CHARACTERS_RE (which makes the caller decline).

    The regex costs a few nanoseconds per character, on text that is mostly printable ASCII. Deleting
    the printable ASCII bytes and line breaks from the UTF-8 encoding (C loops, under a nanosecond a
    character) leaves the encodings of every other character, whole and in order: the regex then
    reads only those (none, usually).
    """
    others = text.encode("utf-8", "surrogatepass").translate(None, _PLAIN_ASCII_BYTES)
    return not others or _ODD_CHARACTERS_RE.search(others.decode("utf-8", "surrogatepass")) is None


# Keys already seen to match _KEY_LINE_RE's key and to be untyped strings (not a number, boolean or
# null): one set lookup instead of those checks on every key line. Bounded, as keys come from files.
_PLAIN_KEYS: set[str] = set()
_PLAIN_KEYS_LIMIT = 4096


def _is_plain_key_text(key: str) -> bool:
    """True when ``key`` is what _KEY_LINE_RE accepts as a key and YAML reads as a string."""
    if key in _PLAIN_KEYS:
        return True
    if not _KEY_RE.match(key) or ((key in _CORE_BOOL or key[0] in _TYPED_START) and not _is_plain_key(key)):
        return False
    if len(_PLAIN_KEYS) < _PLAIN_KEYS_LIMIT:
        _PLAIN_KEYS.add(key)
    return True


class _Reader:
    """Reads the lines of one frontmatter block; each method raises _NotSimple on anything unusual.

    ``pos`` is where the next line starts in the text. Lines are cut out of the text only when a
    method reads them: the lines of block scalars (often most of a block, shell scripts in ``hooks:``)
    are never visited one by one but found by one regex search and dedented with one replace.

    A method that stops at a line it has read (less indented than its own lines) leaves it in
    ``rest`` (the text after the indentation), ``stop`` (where the line ends) and ``indent``, so
    that its caller goes on with it instead of reading it again; ``rest`` is None otherwise.
    """

    __slots__ = ("indent", "pos", "rest", "saw_colon_value", "size", "stop", "text", "tolerate_colon_values")

    def __init__(self, text: str, *, tolerate_colon_values: bool) -> None:
        self.text = text
        self.size = len(text)
        self.pos = 0
        self.rest: str | None = None
        self.stop = 0
        self.indent = 0
        self.tolerate_colon_values = tolerate_colon_values
        self.saw_colon_value = False

    def mapping(self, indent: int) -> dict[str, Any]:
        """The mapping whose keys are at ``indent``, from ``pos`` (or the line left in ``rest``)."""
        result: dict[str, Any] = {}
        text = self.text
        size = self.size
        find = text.find
        not_text_start = _NOT_TEXT_START
        core_bool = _CORE_BOOL.get
        plain_keys = _PLAIN_KEYS
        pos = self.pos
        rest = self.rest
        if rest is not None:
            stop = self.stop
            current = self.indent
            self.rest = None
        while True:
            if rest is None:
                # The next line that is not blank or a comment (inlined in each reading method: a
                # method call per line costs more than the rest of the work on a typical line).
                while pos < size:
                    stop = find("\n", pos)
                    if stop < 0:
                        stop = size
                    rest = text[pos:stop].lstrip(" ")
                    if rest and rest[0] != "#":
                        break
                    pos = stop + 1
                else:
                    self.pos = pos
                    return result
                current = stop - pos - len(rest)
            if current != indent:
                if current < indent:
                    self.pos, self.rest, self.stop, self.indent = pos, rest, stop, current
                    return result
                raise _NotSimple
            # _KEY_LINE_RE without a regex over the (often long) value: the key ends at the first
            # ':' (no key character is one), which ends the line or is followed by a space.
            key, colon, value_text = rest.partition(": ")
            if not colon:
                if rest[-1] != ":":
                    raise _NotSimple
                key = rest[:-1]
            if key in result or (key not in plain_keys and not _is_plain_key_text(key)):
                raise _NotSimple
            pos = stop + 1
            rest = None
            if value_text:
                value_text = value_text.strip(" ")
                if "#" in value_text:
                    value_text = _without_comment(value_text)
                elif value_text:
                    # The usual values: text that YAML reads as itself or as a boolean (one-character
                    # searches, at memchr speed, rule out ': ' and a final ':'), or text in double quotes.
                    initial = value_text[0]
                    if initial not in not_text_start and ":" not in value_text:
                        result[key] = core_bool(value_text, value_text)
                        continue
                    if (
                        initial == '"'
                        and value_text[-1] == '"'
                        and len(value_text) > 1
                        and "\\" not in value_text
                        and value_text.count('"') == 2
                    ):
                        result[key] = value_text[1:-1]
                        continue
            if value_text:
                self.pos = pos
                if value_text in _BLOCK_HEADERS:
                    result[key] = self._block_scalar(indent, value_text)
                    pos = self.pos
                    rest = self.rest
                    if rest is not None:
                        stop = self.stop
                        current = self.indent
                        self.rest = None
                elif value_text[0] == "[" and value_text[-1] == "]":
                    result[key] = _flow_list(value_text)
                else:
                    try:
                        result[key] = _scalar(value_text)
                    except _NotSimple:
                        if not (
                            self.tolerate_colon_values and indent == 0 and _is_plain_colon_value(value_text)
                        ):
                            raise
                        self.saw_colon_value = True
                        result[key] = value_text
                continue
            # "key:" alone: a nested list or mapping if the next line is more indented (or an item at
            # the same indentation, which is refused), else null.
            while pos < size:
                stop = find("\n", pos)
                if stop < 0:
                    stop = size
                rest = text[pos:stop].lstrip(" ")
                if rest and rest[0] != "#":
                    break
                pos = stop + 1
            else:
                result[key] = None
                rest = None
                continue
            current = stop - pos - len(rest)
            is_item = rest == "-" or rest.startswith("- ")
            if current < indent or (current == indent and not is_item):
                result[key] = None
                continue
            if current == indent:  # "key:" then "- item" at the key's own indentation
                raise _NotSimple
            self.pos, self.rest, self.stop, self.indent = pos, rest, stop, current
            result[key] = self._list(current) if is_item else self.mapping(current)
            pos = self.pos
            rest = self.rest
            if rest is not None:
                stop = self.stop
                current = self.indent
                self.rest = None

    def _list(self, indent: int) -> list[Any]:
        """The block list whose dashes are at ``indent``, from ``pos`` (or the line left in ``rest``)."""
        items: list[Any] = []
        text = self.text
        size = self.size
        find = text.find
        not_text_start = _NOT_TEXT_START
        core_bool = _CORE_BOOL.get
        item_run = _item_run_re(indent).match
        try_run = True
        pos = self.pos
        rest = self.rest
        if rest is not None:
            stop = self.stop
            current = self.indent
            self.rest = None
        while True:
            if rest is None:
                while pos < size:
                    stop = find("\n", pos)
                    if stop < 0:
                        stop = size
                    rest = text[pos:stop].lstrip(" ")
                    if rest and rest[0] != "#":
                        break
                    pos = stop + 1
                    try_run = True
                else:
                    self.pos = pos
                    return items
                current = stop - pos - len(rest)
            if current != indent:
                if current < indent:
                    self.pos, self.rest, self.stop, self.indent = pos, rest, stop, current
                    return items
                raise _NotSimple
            if rest[:2] != "- ":
                raise _NotSimple
            # A run of simple items is read in one match; after a line that ends one, the next
            # attempt waits for a comment or blank line (lines with comments are usually all alike).
            run = item_run(text, pos) if try_run else None
            if run is not None:
                end = run.end()
                cut = indent + 2
                for item in text[pos : end - 1].split("\n"):
                    item = item[cut:]
                    initial = item[0]
                    if initial == '"' or initial == "'":
                        items.append(item[1:-1])
                    elif initial not in not_text_start:
                        items.append(core_bool(item, item))  # no ':' or '#' inside: the pattern refuses them
                    else:
                        items.append(_scalar(item))
                pos = end
                rest = None
                continue
            try_run = False
            item = rest[2:]
            rest = None
            if item[:1] != " ":
                if item[-1:] == " ":
                    item = item.rstrip(" ")
                if ":" in item and _KEY_LINE_RE.match(item):
                    # "- key: value": a mapping whose keys line up two columns in, starting with
                    # this line read as if the dash were a space.
                    self.pos, self.rest, self.stop, self.indent = pos, item, stop, indent + 2
                    items.append(self.mapping(indent + 2))
                    pos = self.pos
                    rest = self.rest
                    if rest is not None:
                        stop = self.stop
                        current = self.indent
                        self.rest = None
                    continue
            else:
                item = item.strip(" ")
            pos = stop + 1
            if "#" in item:
                item = _without_comment(item)
            if not item:
                raise _NotSimple  # "-" alone or "- # note": a null item, or a nested block below
            if item[0] not in not_text_start and ":" not in item and "#" not in item:
                items.append(
                    core_bool(item, item)
                )  # the usual item: text that YAML reads as itself (or a boolean)
            else:
                items.append(_scalar(item))

    def _block_scalar(self, parent_indent: int, header: str) -> str:
        """A block scalar's value, its content starting at ``pos``; leaves the line after it in ``rest``."""
        folded, strip_final = _BLOCK_HEADERS[header]
        text = self.text
        size = self.size
        start = self.pos
        if start >= size:
            raise _NotSimple  # the header ends the text
        stop = text.find("\n", start)
        if stop < 0:
            stop = size
        first_rest = text[start:stop].lstrip(" ")
        if not first_rest:
            raise _NotSimple  # empty block or leading blank lines: rare, and subtle
        width = stop - start - len(first_rest)
        if width <= parent_indent:
            raise _NotSimple
        if folded:
            run = _block_end_re(width, True).match(text, start)
            end = run.end() if run else start  # the pattern matches the empty string: never None
        else:
            found = _block_end_re(width, False).search(text, start)
            if found is None:
                raise _NotSimple  # the content runs into the end of the text without a line break
            end = found.start() + 1
        self.pos = end
        if end < size:
            # The line that stopped the run: fine if it is less indented and not a comment; anything
            # else is content the pattern refused (spaces only, more-indented or trailing-space folded
            # lines, a last line without a line break) or a comment whose chomping the parser decides.
            stop = text.find("\n", end)
            if stop < 0:
                stop = size
            if stop > end:
                stop_rest = text[end:stop].lstrip(" ")
                current = stop - end - len(stop_rest)
                if not stop_rest or current >= width or stop_rest[0] == "#":
                    raise _NotSimple
                self.rest, self.stop, self.indent = stop_rest, stop, current
        # Each content line starts with the indentation or is empty: cutting it after every line break
        # dedents them all; the trailing empty lines go (clip or strip chomping).
        body = text[start + width : end].replace("\n" + " " * width, "\n").rstrip("\n")
        if folded:
            body = _FOLDED_BREAKS_RE.sub(_fold_breaks, body)
        return body if strip_final else body + "\n"


def _read(text: str, *, tolerate_colon_values: bool) -> tuple[dict[str, Any] | None, bool]:
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None, False  # a lone \r is a line break to YAML, not text: the parser decides
        # Every \r ends a line, where the reader used to drop it: the same as dropping it up front.
        text = text.replace("\r\n", "\n")
    if not _has_only_plain_characters(text):
        return None, False
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
