"""The input model of :mod:`catui.tools.grep`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput


class GrepInput(ToolInput):
    pattern: str = Field(description="The regular expression to search for in file contents.")
    path: str | None = Field(
        default=None,
        description="The file or folder to search in. Defaults to the current working directory.",
    )
    glob: str | None = Field(
        default=None, description='Only search files matching this glob (e.g. "*.js", "*.{ts,tsx}").'
    )
    output_mode: Literal["content", "files_with_matches", "count"] | None = Field(
        default=None,
        description='"content" shows matching lines, "files_with_matches" (default) lists files, '
        '"count" gives match counts per file.',
    )
    before: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description='Lines to show before each match. Needs output_mode "content"; ignored otherwise.',
    )
    after: int | None = Field(
        default=None,
        ge=0,
        alias="-A",
        description='Lines to show after each match. Needs output_mode "content"; ignored otherwise.',
    )
    context_flag: int | None = Field(default=None, ge=0, alias="-C", description="Alias for context.")
    # Claude Code sends both spellings in its schema; models use either, `context` wins when both are given.
    context: int | None = Field(
        default=None,
        ge=0,
        description='Lines to show before and after each match. Needs output_mode "content"; ignored otherwise.',
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description='Show line numbers (default true). Needs output_mode "content"; ignored otherwise.',
    )
    case_insensitive: bool | None = Field(default=None, alias="-i", description="Search case-insensitively.")
    type: str | None = Field(
        default=None,
        description="A ripgrep file type to search (e.g. py, js, rust, go, java). More efficient than glob.",
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Keep only the first N lines (content), files (files_with_matches) or entries (count). "
        "Defaults to 250; 0 means no limit (use it sparingly: large results fill the context).",
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="Skip the first N lines or entries before head_limit applies. Default 0.",
    )
    multiline: bool | None = Field(
        default=None,
        description="Let patterns span lines and `.` match newlines (rg -U --multiline-dotall). Default false.",
    )
