"""The input model of :mod:`catui.tools.worktree_merge`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catui.tools.tool_input import ToolInput


class WorktreeMergeInput(ToolInput):
    agent_id: str = Field(min_length=1, description="The agentId of the agent whose worktree to use.")
    action: Literal["diff", "apply", "merge"] = Field(description="diff (look), apply (staged) or merge (commit).")
    commit_message: str | None = Field(default=None, description="The merge commit's message (merge only).")
