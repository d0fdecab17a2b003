"""Files an isolated agent's file tools may not change: configuration that runs code outside its worktree.

An isolated agent (``isolation: "worktree"``) works in a checkout of its own, but some files there are read
by programs that do not run under the agent's limits: ``.claude/`` and ``.catui/`` (settings with hooks and
permission rules, e.g. one that turns the sandbox off; agents; commands), ``.mcp.json`` (servers started at
the next session) and git's metadata (``.git`` — config and hooks). Write, Edit and NotebookEdit refuse them
for such an agent in every permission mode, bypassPermissions included; Bash is held back by the sandbox
(docs/sandbox.md). Agent memory folders (``agent-memory``, ``agent-memory-local``) stay writable.
"""

from __future__ import annotations

import os
from pathlib import Path

from catui.tools.base import ToolContext

SETTINGS_FOLDERS = (".claude", ".catui")
MEMORY_FOLDERS = ("agent-memory", "agent-memory-local")


def protected_kind(path: Path, roots: tuple[Path, ...]) -> str | None:
    """What makes ``path`` (a resolved path) configuration, relative to one of ``roots``; ``None`` if it is not."""
    if ".git" in path.parts:
        return "git's metadata (its config and hooks run later, outside the agent's limits)"
    for root in roots:
        real_root = Path(os.path.realpath(root))
        try:
            parts = path.relative_to(real_root).parts
        except ValueError:
            continue
        if not parts:
            continue
        if parts[0] in SETTINGS_FOLDERS and not (len(parts) > 1 and parts[1] in MEMORY_FOLDERS):
            return (
                f"{real_root / parts[0]} holds settings, hooks, agents and commands that catui and Claude Code load "
                "at the next start, outside this agent's limits"
            )
        if parts == (".mcp.json",):
            return "it lists MCP servers that catui and Claude Code start at the next session"
    return None


def isolated_config_refusal(path: Path, ctx: ToolContext, *, verb: str) -> str | None:
    """The error for an isolated agent's change of ``path`` when it is protected configuration, else ``None``."""
    worktree = ctx.permissions.isolated_worktree
    if worktree is None:
        return None
    what = protected_kind(path, (worktree, *ctx.permissions.working_directories))
    if what is None:
        return None
    return (
        f"Refused to {verb} {path}: {what}. An isolated (worktree) agent may not change it in any permission "
        "mode. Describe the change in your answer instead; the user can make it in the main checkout."
    )
