"""Splitting an agent file into its frontmatter block and its system prompt (the trimmed body).

``split_plain_file`` works on the bytes of a file in the usual shape, decoding
only the block and the trimmed body; ``prompt_from`` trims the body of a text
decoded the general way. Both give what ``str.strip()`` of the body would.
"""

from __future__ import annotations

import re

from catui.agents.frontmatter import BOM

_WHITESPACE_RUN_RE = re.compile(r"\s*")  # \s on str is str.isspace(), what str.strip() removes


def prompt_from(text: str, start: int) -> str:
    """The system prompt: ``text[start:]`` trimmed, with Windows line endings made plain.

    One copy of the text instead of two (slice, then strip): bodies are most of a file.
    """
    start = _WHITESPACE_RUN_RE.match(text, start).end()  # type: ignore[union-attr]  # \s* always matches
    end = len(text)
    while end > start and text[end - 1].isspace():
        end -= 1
        if len(text) - end > 64:  # a long run of trailing white space: let strip() find its start
            end = start + len(text[start:end].rstrip())
            break
    prompt = text[start:end]
    return prompt.replace("\r\n", "\n") if "\r" in prompt else prompt


# ASCII bytes that JavaScript's \s matches (find_frontmatter's skips), and those str.strip() removes.
_JS_SPACE_BYTES = frozenset(b"\t\n\v\f\r ")
_STRIP_BYTES = frozenset(b"\t\n\v\f\r\x1c\x1d\x1e\x1f ")


def split_plain_file(data: bytes) -> tuple[str, str] | None:
    """(frontmatter block, prompt) straight from the bytes of a file in the usual shape, else None.

    Decoding only the block and the trimmed body saves decoding the whole file and then copying its
    body (most of a file) again. The usual shape: no BOM, ``---`` and a line break, a key on the next
    line, and only ASCII white space where the block ends and around the body; anything else (and any
    byte that is not UTF-8) returns None, and the caller decodes the whole text the general way.
    """
    if data[:4] != b"---\n" or len(data) < 5 or data[4] in _JS_SPACE_BYTES or data[4] >= 0x80:
        return None
    end = data.find(b"---", 4)
    if end < 0:
        return None
    length = len(data)
    start = end + 3
    # find_frontmatter's body start, then str.strip()'s trimming (a superset of those ASCII spaces).
    while start < length and data[start] in _STRIP_BYTES:
        start += 1
        if start - end > 64:
            return None  # a long run of blank lines: rare enough for the general path
    stop = length
    while stop > start and data[stop - 1] in _STRIP_BYTES:
        stop -= 1
        if length - stop > 64:
            return None
    try:
        raw = data[4:end].decode("utf-8")
        prompt = str(memoryview(data)[start:stop], "utf-8")
    except UnicodeDecodeError:
        return None
    # A non-ASCII character at either edge may be Unicode white space (or, at the start, the BOM that
    # find_frontmatter skips too): then the general path trims. Most such files start with CJK text.
    if start < stop and (
        (data[start] >= 0x80 and (prompt[0].isspace() or prompt[0] == BOM))
        or (data[stop - 1] >= 0x80 and prompt[-1].isspace())
    ):
        return None
    # Searching the bytes is cheaper than searching the text (often two bytes a character once decoded).
    return raw, (prompt.replace("\r\n", "\n") if b"\r" in data and "\r" in prompt else prompt)
