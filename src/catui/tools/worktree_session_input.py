"""The input models of :mod:`catui.tools.worktree_session`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput


class EnterWorktreeInput(ToolInput):
    name: str | None = Field(
        default=None,
        description=(
            "Optional name of the worktree: segments of letters, digits, '.', '_' and '-' separated by '/', "
            "at most 64 characters. A random name is chosen when omitted."
        ),
    )


class ExitWorktreeInput(ToolInput):
    action: Literal["keep", "remove"] = Field(
        description='"keep" leaves the worktree and its branch on disk; "remove" deletes both.'
    )
    discard_changes: bool | None = Field(
        default=None,
        description=(
            'With action "remove": true deletes the worktree even though it holds uncommitted files or '
            "commits made in it. Without it such a worktree is not removed."
        ),
    )
