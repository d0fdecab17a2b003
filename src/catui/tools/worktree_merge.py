"""WorktreeMerge (catui's own, off by default): the parent agent shows or brings back an isolated agent's work.

Offered only when the ``worktree.allowAgentMerge`` setting is true (``worktree_merge_allowed``): merging
changes the user's checkout, so the user opts in. ``diff`` is read-only; ``apply`` and ``merge`` change
files and go through the permission check like an edit (asked in the default mode). The git work is
``worktree/merge_back.py``'s, the same as ``catui worktrees diff|apply|merge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from catui.errors import CatuiError
from catui.tools.base import Tool, ToolContext, ToolResult

SETTING = "allowAgentMerge"
MAX_DIFF_CHARS = 60_000

DESCRIPTION = """\
Review or bring back the work of a sub-agent that ran with isolation "worktree" and kept its worktree \
(its result named worktreePath and worktreeBranch).

- action "diff": the files it changed and the full diff against the commit it started from. Read this first.
- action "apply": its changes put into the main checkout's files, staged but not committed.
- action "merge": the same, committed (a fast-forward when the checkout has not moved; else a merge \
commit, with commit_message if given).

If both sides changed the same lines nothing is changed, and the result names the conflicting files; the \
worktree is always kept. Use the agentId from the agent's result."""


def worktree_merge_allowed(settings: Mapping[str, Any]) -> bool:
    """Whether the ``worktree.allowAgentMerge`` setting offers the tool (true only; anything else is off)."""
    section = settings.get("worktree")
    return isinstance(section, Mapping) and section.get(SETTING) is True


class WorktreeMergeTool(Tool):
    name = "WorktreeMerge"
    input_model_ref: ClassVar[str] = "catui.tools.worktree_merge_input:WorktreeMergeInput"
    read_only = False

    @property
    def description(self) -> str:
        return DESCRIPTION

    def is_read_only(self, args: Any) -> bool:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.worktree_merge_input import WorktreeMergeInput
        return isinstance(args, WorktreeMergeInput) and args.action == "diff"

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): git and the merge code load when the (opt-in) tool is called
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.worktree_merge_input import WorktreeMergeInput
        from catui.worktree.lookup import recorded_worktree
        from catui.worktree.merge_back import MergeConflict, apply_worktree, worktree_diff
        assert isinstance(args, WorktreeMergeInput)
        try:
            info = recorded_worktree(ctx.project_root, args.agent_id)
            if args.action == "diff":
                diff = await worktree_diff(info)
                patch = diff.patch if len(diff.patch) <= MAX_DIFF_CHARS else (
                    diff.patch[:MAX_DIFF_CHARS] + f"\n[diff cut at {MAX_DIFF_CHARS:,} characters; "
                    "read the files in the worktree for the rest]")
                text = f"{diff.stat}\n{patch}" if diff.files else "The worktree has no changes."
                return ToolResult(text, data={"action": "diff", "agentId": info.agent_id, "base": diff.base,
                                              "files": diff.files, "worktreePath": str(info.path)})
            result = await apply_worktree(info, ctx.project_root, commit=args.action == "merge",
                                          message=args.commit_message)
        except MergeConflict as exc:
            return ToolResult(str(exc), is_error=True,
                              data={"action": args.action, "status": "conflict", "conflicts": exc.files})
        except CatuiError as exc:
            return ToolResult(str(exc), is_error=True)
        return ToolResult(result.describe(info.agent_id),
                          data={"action": args.action, "status": result.kind, "files": result.files,
                                "commit": result.commit, "agentId": info.agent_id})
