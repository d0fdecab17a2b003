"""Short labels for tool calls, and the allow rule that would approve a call like one being refused.

``describe_call`` names a call in messages (``Bash(npm test)``);
``suggest_rule_text`` is the rule a refusal proposes and the one "don't ask
again" records (``Bash(npm test:*)``, ``Edit(src/**)``, ``WebFetch(domain:x)``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from catui.permissions.bash_readonly import is_read_only_command
from catui.permissions.model import PermissionRequest
from catui.permissions.rules import (
    EDIT_TOOLS,
    READ_TOOLS,
    canonical_tool_name,
    command_parts,
    request_host,
    request_path,
    request_subject,
)


def describe_call(request: PermissionRequest) -> str:
    """A short label for messages: ``Bash(npm test)``, ``Edit(/p/a.py)``, ``WebFetch(example.com)``."""
    tool = request.tool_name
    canonical = canonical_tool_name(tool)
    detail: str | None
    if canonical in READ_TOOLS or canonical in EDIT_TOOLS:
        path = request.file_path
        if path is None:
            value = next(
                (request.tool_input.get(k) for k in ("file_path", "notebook_path", "path") if request.tool_input.get(k)),
                None,
            )
            detail = str(value) if value else None
        else:
            detail = str(path)
    elif canonical == "WebFetch":
        detail = request_host(request)
    else:
        detail = request_subject(request)
    if detail is None:
        return tool
    if len(detail) > 120:
        detail = detail[:117] + "..."
    return f"{tool}({detail})"


def suggest_rule_text(request: PermissionRequest, cwd: Path) -> str:
    """A rule that would allow calls like this one, for messages and "don't ask again".

    Bash gets a prefix rule on the command's first words (``Bash(npm test:*)``),
    file tools a rule on the file or folder, WebFetch its domain, MCP tools
    their full name, Agent its type.
    """
    tool = canonical_tool_name(request.tool_name)
    if tool == "Bash":
        command = request_subject(request) or ""
        parts = command_parts(command)
        if len(parts) > 1:
            # Suggest a rule for the one part that needs it; otherwise the exact command, never all of Bash.
            parts = [p for p in parts if not is_read_only_command(p, (), cwd)]
            if len(parts) != 1:
                return f"Bash({_escape_content(command.strip())})"
        if not parts:
            return "Bash"
        try:
            words = shlex.split(parts[0])
        except ValueError:
            words = parts[0].split()
        if not words:
            return "Bash"
        prefix = words[:2] if len(words) > 1 and not words[1].startswith("-") and "/" not in words[1] else words[:1]
        return f"Bash({' '.join(prefix)}:*)"
    if tool in READ_TOOLS or tool in EDIT_TOOLS:
        path = request_path(request, cwd)
        family = "Edit" if tool in EDIT_TOOLS else "Read"
        if path is None:
            return family
        if tool in ("Glob", "Grep", "LS"):
            return f"{family}({_path_pattern(path, cwd)}/**)"
        return f"{family}({_path_pattern(path, cwd)})"
    if tool == "WebFetch":
        host = request_host(request)
        return f"WebFetch(domain:{host})" if host else "WebFetch"
    if tool == "Agent":
        subject = request_subject(request)
        return f"Agent({subject})" if subject else "Agent"
    return request.tool_name


def _escape_content(text: str) -> str:
    return text.replace("*", "\\*").replace("(", "\\(").replace(")", "\\)")


def _path_pattern(path: Path, cwd: Path) -> str:
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return "/" + path.as_posix()  # '//abs/path'
    text = rel.as_posix()
    return "." if text in ("", ".") else text
