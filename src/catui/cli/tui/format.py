"""Short, human labels for tool calls and their outcomes, as the terminal shows them.

``● Read(src/app.py)`` then ``  ⎿ Read 42 lines``: one line for the call, one
(or a few) for what came of it. Pure functions over event data; no terminal
state, so the interactive UI, the demo and the tests share them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catui.messages import result_text

AGENT_TOOL_NAMES = frozenset({"Agent", "Task"})
FILE_TOOLS = frozenset({"Read", "Write", "Edit", "NotebookEdit"})
MAX_ARG_CHARS = 80
RESULT_PREVIEW_LINES = 3

_TAG = re.compile(r"</?tool_use_error>")
_SEPARATOR = re.compile(r"[=\-_~*#]{3,}")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def cell_width(text: str) -> int:
    """Terminal columns ``text`` occupies (wide East Asian characters take two, ANSI codes none)."""
    width = 0
    for ch in _ANSI.sub("", text):
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def fit(text: str, columns: int) -> str:
    """``text`` (one line, may hold ANSI styles) cut to ``columns`` cells, ending with ``…`` when cut."""
    if columns <= 0:
        return ""
    if cell_width(text) <= columns:
        return text
    out: list[str] = []
    used = 0
    for piece in re.split(f"({_ANSI.pattern})", text):
        if _ANSI.fullmatch(piece):
            out.append(piece)
            continue
        for ch in piece:
            w = cell_width(ch)
            if used + w > columns - 1:
                styled = any(_ANSI.fullmatch(p) for p in out)
                return "".join(out) + "…" + ("\x1b[0m" if styled else "")
            out.append(ch)
            used += w
    return "".join(out)


def wrap_cells(text: str, columns: int) -> list[str]:
    """``text`` (one line, may hold ANSI styles) broken into pieces of at most ``columns`` cells."""
    if columns <= 0:
        return [text]
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for piece in re.split(f"({_ANSI.pattern})", text):
        if _ANSI.fullmatch(piece):
            current.append(piece)
            continue
        for ch in piece:
            w = cell_width(ch)
            if used + w > columns:
                pieces.append("".join(current))
                current, used = [], 0
            current.append(ch)
            used += w
    pieces.append("".join(current))
    return pieces


def one_line(text: str, limit: int = MAX_ARG_CHARS) -> str:
    """The first line of ``text``, shortened, with a marker when more was cut."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit:
        return first[: limit - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


def format_tokens(count: int) -> str:
    """``950`` → ``950``, ``12345`` → ``12.3k``, ``2_500_000`` → ``2.5M``."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def format_duration(seconds: float) -> str:
    """``4.2`` → ``4s``, ``75`` → ``1m 15s``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m"


def display_path(path: str, cwd: Path | None) -> str:
    """A path relative to ``cwd`` when it lies inside it, else as given."""
    if cwd is None or not path:
        return path
    try:
        relative = str(Path(path).relative_to(cwd))
    except ValueError:
        return path
    return relative if relative != "." else ""


def is_agent_call(name: str) -> bool:
    return name in AGENT_TOOL_NAMES


def agent_type_of(tool_input: Mapping[str, Any]) -> str:
    value = tool_input.get("subagent_type")
    return value if isinstance(value, str) and value else "general-purpose"


def tool_call_label(name: str, tool_input: Mapping[str, Any], cwd: Path | None = None) -> str:
    """``Read(src/app.py)``, ``Bash(pytest -q)``, ``Explore(Find the config loader)`` …"""
    if is_agent_call(name):
        return f"{agent_type_of(tool_input)}({one_line(str(tool_input.get('description') or ''))})"
    arg = _main_argument(name, tool_input, cwd)
    return f"{name}({arg})" if arg else name


def _main_argument(name: str, tool_input: Mapping[str, Any], cwd: Path | None) -> str:
    if name in FILE_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        return display_path(str(path), cwd)
    if name in ("Glob", "Grep"):
        pattern = one_line(str(tool_input.get("pattern") or ""))
        where = display_path(str(tool_input.get("path") or ""), cwd)
        return f"{pattern} in {where}" if where else pattern
    if name == "Bash":
        return one_line(str(tool_input.get("command") or ""))
    if name == "WebFetch":
        return one_line(str(tool_input.get("url") or ""))
    if name == "TodoWrite":
        todos = tool_input.get("todos")
        return f"{len(todos)} items" if isinstance(todos, list) else ""
    for value in tool_input.values():
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return ""


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def _bash_lines(text: str) -> list[str]:
    """The tail of a command's output (where test runners and compilers say what happened)."""
    lines = [ln for ln in text.rstrip().splitlines() if ln.strip() and not _SEPARATOR.fullmatch(ln.strip())]
    if not lines:
        return ["(no output)"]
    if len(lines) <= RESULT_PREVIEW_LINES + 1:
        return [one_line(ln, 120) for ln in lines]
    hidden = len(lines) - RESULT_PREVIEW_LINES
    return [f"… +{hidden} lines", *(one_line(ln, 120) for ln in lines[-RESULT_PREVIEW_LINES:])]


def tool_result_lines(
    name: str, content: Any, is_error: bool, data: Any = None, tool_input: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
) -> list[str]:
    """What to show under a finished call: usually one line, the tail of the output for Bash."""
    text = result_text(content) if isinstance(content, str | list) else str(content or "")
    tool_input = tool_input or {}
    if name == "Bash":
        return _bash_lines(_TAG.sub("", text))
    if is_error:
        cleaned = _TAG.sub("", text).strip()
        return [one_line(cleaned, 120) or "Error"]
    if is_agent_call(name):
        return [agent_done_line(data)]
    path = display_path(str(tool_input.get("file_path") or ""), cwd)
    if name == "Read":
        count = _count_lines(text)
        return [f"Read {count} line{'s' if count != 1 else ''}"]
    if name == "Write" and path:
        count = _count_lines(str(tool_input.get("content") or ""))
        return [f"Wrote {count} line{'s' if count != 1 else ''} to {path}"]
    if name == "Edit" and path:
        added = _count_lines(str(tool_input.get("new_string") or ""))
        removed = _count_lines(str(tool_input.get("old_string") or ""))
        return [f"Updated {path} (+{added} -{removed} lines)"]
    if name in ("Glob", "Grep"):
        if text.strip().startswith(("No files found", "No matches")) or not text.strip():
            return [one_line(text) or "No matches"]
        lines = [ln for ln in text.splitlines() if ln.strip()]
        noun = "files" if name == "Glob" or not re.search(r":\d+[:-]", lines[0]) else "lines"
        return [f"Found {len(lines)} {noun if len(lines) != 1 else noun[:-1]}"]
    return [one_line(text, 120) or "Done"]


def agent_done_line(data: Any) -> str:
    """``Done (3 tool uses · 12.3k tokens · 4s)`` from an Agent call's structured result."""
    if not isinstance(data, Mapping):
        return "Done"
    if data.get("status") == "async_launched":
        return "Running in the background"
    parts = []
    tools = data.get("totalToolUseCount")
    if isinstance(tools, int):
        parts.append(f"{tools} tool use{'s' if tools != 1 else ''}")
    tokens = data.get("totalTokens")
    if isinstance(tokens, int):
        parts.append(f"{format_tokens(tokens)} tokens")
    duration = data.get("totalDurationMs")
    if isinstance(duration, int | float):
        parts.append(format_duration(duration / 1000))
    return f"Done ({' · '.join(parts)})" if parts else "Done"


class MarkdownLineStyler:
    """Light Markdown styling for a terminal, one complete line at a time.

    Headings and ``**bold**`` turn bold, inline code and fenced code blocks
    turn cyan, fence lines dim. It keeps whether a fence is open between
    lines, so one styler follows one text block. Everything else is shown
    as written, which keeps streamed text and its styled form the same width.
    """

    _BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
    _CODE = re.compile(r"`([^`\n]+)`")
    _HEADING = re.compile(r"^(\s*)(#{1,6})\s+(.*)$")
    _FENCE = re.compile(r"^\s*(```|~~~)")

    def __init__(self) -> None:
        self.in_fence = False

    def __call__(self, line: str) -> str:
        # the caller's prefix ("● " or an indent) stays outside the Markdown
        prefix_match = re.match(r"^((?:\x1b\[[0-9;]*m)?●(?:\x1b\[0m)? |\s*)", line)
        prefix = prefix_match.group(1) if prefix_match else ""
        body = line[len(prefix) :]
        if self._FENCE.match(body):
            self.in_fence = not self.in_fence
            return prefix + "\x1b[2m" + body + "\x1b[0m"
        if self.in_fence:
            return prefix + "\x1b[36m" + body + "\x1b[0m"
        heading = self._HEADING.match(body)
        if heading:
            return prefix + heading.group(1) + "\x1b[1m" + heading.group(3) + "\x1b[0m"
        body = self._CODE.sub(lambda m: "\x1b[36m" + m.group(1) + "\x1b[39m", body)
        body = self._BOLD.sub(lambda m: "\x1b[1m" + m.group(1) + "\x1b[22m", body)
        return prefix + body
