"""Claude Code's metric instruments, and what a finished tool call adds to them (lines, commits, PRs).

Names, units and attributes as Claude Code's monitoring documentation gives
them, so its dashboards read catui's data: ``claude_code.session.count``,
``claude_code.token.usage`` (``type``: input, output, cacheRead,
cacheCreation), ``claude_code.cost.usage`` (USD),
``claude_code.active_time.total`` (s), ``claude_code.lines_of_code.count``
(``type``: added, removed), ``claude_code.commit.count``,
``claude_code.pull_request.count``, ``claude_code.code_edit_tool.decision``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from opentelemetry.metrics import NoOpMeter

# `git [-C dir] commit …` / `gh pr create …` anywhere in a compound command (not `git commit-tree`)
COMMIT = re.compile(r"(^|[;&|\s(])git(\s+-\S+(\s+\S+)?)*\s+commit(?![\w-])")
PULL_REQUEST = re.compile(r"(^|[;&|\s(])gh\s+pr\s+create(?![\w-])")
LANGUAGES = {
    ".py": "Python", ".pyi": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript",
    ".jsx": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".md": "Markdown", ".json": "JSON",
    ".yaml": "YAML", ".yml": "YAML", ".toml": "TOML", ".rs": "Rust", ".go": "Go", ".java": "Java",
    ".kt": "Kotlin", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".cs": "C#",
    ".rb": "Ruby", ".php": "PHP", ".swift": "Swift", ".sh": "Shell", ".bash": "Shell", ".html": "HTML",
    ".css": "CSS", ".scss": "SCSS", ".sql": "SQL", ".ipynb": "Jupyter Notebook", ".txt": "Text",
}


class ClaudeCodeMetrics:
    """The instruments, on ``meter`` (a no-op meter when metrics export nowhere)."""

    def __init__(self, meter: Any) -> None:
        meter = meter if meter is not None else NoOpMeter("catui")
        self.session_count = meter.create_counter(
            "claude_code.session.count", unit="count", description="Sessions started")
        self.token_usage = meter.create_counter(
            "claude_code.token.usage", unit="tokens", description="Tokens used, by type and model")
        self.cost_usage = meter.create_counter(
            "claude_code.cost.usage", unit="USD", description="Cost of the model requests, by model")
        self.active_time = meter.create_counter(
            "claude_code.active_time.total", unit="s", description="Time the agent worked on prompts")
        self.lines_of_code = meter.create_counter(
            "claude_code.lines_of_code.count", unit="count", description="Lines of code added and removed")
        self.commit_count = meter.create_counter(
            "claude_code.commit.count", unit="count", description="git commits made through the Bash tool")
        self.pull_request_count = meter.create_counter(
            "claude_code.pull_request.count", unit="count", description="Pull requests created through the Bash tool")
        self.code_edit_decision = meter.create_counter(
            "claude_code.code_edit_tool.decision", unit="count",
            description="Permission decisions on Edit, Write and NotebookEdit calls")


@dataclass(frozen=True)
class CodeChanges:
    added: int = 0
    removed: int = 0
    commits: int = 0
    pull_requests: int = 0


def _lines(text: Any) -> int:
    if not isinstance(text, str) or not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def code_changes(tool_name: str, tool_input: Mapping[str, Any], data: Any) -> CodeChanges:
    """What a successful call changed: lines (Edit, Write, NotebookEdit), commits and PRs (Bash)."""
    data = data if isinstance(data, Mapping) else {}
    if tool_name == "Edit":
        times = int(data.get("replacements") or 1)
        return CodeChanges(added=_lines(tool_input.get("new_string")) * times,
                           removed=_lines(tool_input.get("old_string")) * times)
    if tool_name == "Write":
        return CodeChanges(added=int(data.get("lines") or _lines(tool_input.get("content"))))
    if tool_name == "NotebookEdit":
        mode = tool_input.get("edit_mode") or "replace"
        return CodeChanges(added=0 if mode == "delete" else _lines(tool_input.get("new_source")))
    if tool_name == "Bash":
        command = str(tool_input.get("command") or "")
        return CodeChanges(commits=1 if COMMIT.search(command) else 0,
                           pull_requests=1 if PULL_REQUEST.search(command) else 0)
    return CodeChanges()


def edit_language(path: str) -> str:
    """The programming language of an edited file, by its extension (``unknown`` when not known)."""
    return LANGUAGES.get(PurePath(path).suffix.lower(), "unknown") if path else "unknown"
