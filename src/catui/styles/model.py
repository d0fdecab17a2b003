"""One output style."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StyleSource = Literal["built-in", "plugin", "userSettings", "projectSettings"]
DEFAULT_STYLE = "default"
"""The name of no style at all: catui's own main prompt, unchanged."""


@dataclass(frozen=True)
class OutputStyle:
    """A style: its name, what it is for, the prompt it gives the main agent, and where it came from.

    ``keep_coding_instructions``: whether catui's coding instructions stay in the system prompt beside the
    style's (the built-in styles keep them; a Markdown style keeps them only with
    ``keep-coding-instructions: true``, as in Claude Code).
    """

    name: str
    description: str
    prompt: str
    source: StyleSource
    keep_coding_instructions: bool = False
    path: str | None = None
