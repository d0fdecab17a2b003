"""Loader warnings that name the file line they are about (issue 15).

Field warnings begin with the field's name (``fields.Warn``); :class:`LineNamingWarner` looks up the line the
field is written on (only when it warns, so clean files pay nothing) and puts ``line N:`` in front. It also
reports prose values whose `` # `` may have been meant as a comment (docs/decisions.md, "` #` in frontmatter
values").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from catui.agents.frontmatter import ambiguous_hash_lines, key_lines
from catui.agents.problems import AgentWarning

# The field a warning is about: its first word, quoted or not (``'model' must …``, ``color 'Red' is …``).
_LEADING_FIELD_RE = re.compile(r"'?([A-Za-z_][A-Za-z0-9_-]*)'?[ :]")


class LineNamingWarner:
    """A ``Warn`` for one agent file that appends :class:`AgentWarning` s naming the field's line."""

    def __init__(self, path: str, sink: list[AgentWarning], raw_frontmatter: str | Callable[[], str]) -> None:
        self._path = path
        self._sink = sink
        self._raw_frontmatter = raw_frontmatter
        self._lines: dict[str, int] | None = None

    def _raw(self) -> str:
        raw = self._raw_frontmatter
        return raw() if callable(raw) else raw

    def __call__(self, message: str) -> None:
        field = _LEADING_FIELD_RE.match(message)
        if field is not None:
            if self._lines is None:
                self._lines = key_lines(self._raw())
            line = self._lines.get(field.group(1))
            if line is not None:
                message = f"line {line}: {message}"
        self._sink.append(AgentWarning(self._path, message))

    def report_ambiguous_hashes(self, data: Mapping[str, Any]) -> None:
        """Warn about each prose value whose `` # `` is read as text although it looks like a comment."""
        if not any(isinstance(value, str) and " #" in value for value in data.values()):
            return
        for line, key in ambiguous_hash_lines(self._raw()):
            self._sink.append(AgentWarning(self._path, (
                f"line {line}: the ' # …' in '{key}' is read as part of its text, not as a comment "
                "(in prose fields catui keeps ' #'); to make it a comment, put it on a line of its own, "
                "or quote the value to keep it as text and silence this warning"
            )))
