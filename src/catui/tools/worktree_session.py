"""EnterWorktree / ExitWorktree: an agent moves into a new worktree of its repository, and back.

EnterWorktree makes ``<repo>/.catui/worktrees/<name>`` on a new branch
``worktree-<name>`` from HEAD (the same place and branch scheme as
``isolation: "worktree"`` agents, see :mod:`catui.worktree`), then moves the
calling agent's context into it: ``cwd``, ``project_root`` and the first of
the permission context's working directories. ExitWorktree moves it back and
either keeps the worktree and its branch or removes both; removing refuses
while the worktree holds work (uncommitted files or commits since it was
made) unless ``discard_changes`` is true. Each agent's context is its own, so
a sub-agent that enters a worktree moves itself only.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from catui.tools.base import EnteredWorktree, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from catui.tools.worktree_session_input import EnterWorktreeInput, ExitWorktreeInput
    from catui.worktree.model import WorktreeInfo

NAME_PATTERN = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
NAME_MAX_CHARS = 64


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a worktree, or None when it can."""
    if len(name) > NAME_MAX_CHARS:
        return f"is {len(name)} characters long; use at most {NAME_MAX_CHARS}"
    if not NAME_PATTERN.match(name) or any(part in {".", ".."} for part in name.split("/")):
        return "may hold only letters, digits, '.', '_' and '-', in segments separated by '/' (no '.' or '..' segment)"
    return None


def folder_slug(name: str) -> str:
    """The folder (and branch suffix) of a worktree name: one path segment, ``/`` read as ``+``."""
    return name.replace("/", "+")


class EnterWorktreeTool(Tool):
    """Create a worktree of the agent's repository and make it the agent's working directory."""

    name = "EnterWorktree"
    input_model_ref: ClassVar[str] = "catui.tools.worktree_session_input:EnterWorktreeInput"

    @property
    def description(self) -> str:
        return (
            "Create a new git worktree of the current repository (a separate checkout on its own branch, made "
            "from HEAD) and switch this session into it: later file and shell tools work there. Use it when the "
            "user asks to work in a worktree. Fails outside a git repository and when the session is already in "
            "one. Leave with ExitWorktree."
        )

    async def call(self, args: EnterWorktreeInput, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): git and the worktree modules load when an agent enters a worktree
        from catui.worktree.create import create_worktree
        from catui.worktree.model import WorktreeError
        from catui.worktree.refs import find_git_root

        if ctx.worktree is not None:
            return ToolResult(
                f"EnterWorktree: this session is already in the worktree {ctx.worktree.info.path}; "
                "call ExitWorktree first",
                is_error=True,
            )
        name = args.name if args.name is not None else f"session-{secrets.token_hex(4)}"
        problem = name_problem(name)
        if problem is not None:
            return ToolResult(f"EnterWorktree: the name {name!r} {problem}", is_error=True)
        git_root = find_git_root(ctx.cwd)
        if git_root is None:
            return ToolResult(
                f"EnterWorktree: {ctx.cwd} is not inside a git repository; run `git init` and commit first",
                is_error=True,
            )
        try:
            info = await create_worktree(
                f"worktree-{folder_slug(name)}", repo_root=git_root, slug=folder_slug(name)
            )
        except WorktreeError as exc:
            return ToolResult(f"EnterWorktree: {exc}", is_error=True)
        ctx.worktree = EnteredWorktree(
            info=info,
            original_cwd=ctx.cwd,
            original_project_root=ctx.project_root,
            original_working_directories=ctx.permissions.working_directories,
        )
        inside = _same_place_in(info.path, git_root, ctx.cwd)
        _move(ctx, cwd=inside, project_root=info.path, primary=info.path)
        return ToolResult(
            f"Created worktree at {info.path} on branch {info.branch}. The session now works in the worktree; "
            "use ExitWorktree to leave it (keeping or removing it).",
            data={"worktreePath": str(info.path), "worktreeBranch": info.branch},
        )


class ExitWorktreeTool(Tool):
    """Leave the worktree entered with EnterWorktree, keeping or removing it."""

    name = "ExitWorktree"
    input_model_ref: ClassVar[str] = "catui.tools.worktree_session_input:ExitWorktreeInput"

    @property
    def description(self) -> str:
        return (
            "Leave the worktree this session entered with EnterWorktree and return to the original directory. "
            'action "keep" leaves the worktree and its branch for later; "remove" deletes both, and refuses when '
            "the worktree has uncommitted files or new commits unless discard_changes is true."
        )

    async def call(self, args: ExitWorktreeInput, ctx: ToolContext) -> ToolResult:
        from catui.worktree.cleanup import remove_worktree  # lazy (catui.lazy)
        from catui.worktree.model import WorktreeError

        entered = ctx.worktree
        if entered is None:
            return ToolResult(
                "ExitWorktree: this session is not in a worktree entered with EnterWorktree; nothing to exit",
                is_error=True,
            )
        info: WorktreeInfo = entered.info
        if args.action == "remove" and not args.discard_changes:
            try:
                work = await _unsaved_work(info)
            except WorktreeError as exc:
                return ToolResult(f"ExitWorktree: {exc}; the worktree is left in place", is_error=True)
            if work:
                return ToolResult(
                    f"ExitWorktree: the worktree {info.path} has {work}; commit or move that work elsewhere, "
                    'call ExitWorktree with action "keep", or pass discard_changes: true to delete it anyway',
                    is_error=True,
                )
        # Step out first, so that a failed removal still leaves the session in a folder that exists.
        ctx.worktree = None
        _move(ctx, cwd=entered.original_cwd, project_root=entered.original_project_root, primary=None,
              working_directories=entered.original_working_directories)  # fmt: skip
        if args.action == "keep":
            return ToolResult(
                f"Exited the worktree. It is kept at {info.path} on branch {info.branch}. "
                f"The session is back in {entered.original_cwd}.",
                data={"action": "keep", "worktreePath": str(info.path), "worktreeBranch": info.branch},
            )
        try:
            await remove_worktree(info)
        except WorktreeError as exc:
            return ToolResult(
                f"ExitWorktree: left the worktree, but removing it failed: {exc}", is_error=True
            )
        return ToolResult(
            f"Exited and removed the worktree {info.path} and its branch {info.branch}. "
            f"The session is back in {entered.original_cwd}.",
            data={"action": "remove", "worktreePath": str(info.path), "worktreeBranch": info.branch},
        )


async def _unsaved_work(info: WorktreeInfo) -> str:
    """What removing the worktree would lose, in words ("" when nothing)."""
    from catui.worktree.changes import commits_ahead, dirty_entries  # lazy (catui.lazy)

    parts: list[str] = []
    entries, _error = await dirty_entries(info)
    if entries:
        parts.append(f"{len(entries)} uncommitted file(s)")
    ahead = await commits_ahead(info)
    if ahead:
        parts.append(f"{ahead} commit(s) made in it")
    return " and ".join(parts)


def _same_place_in(worktree: Path, git_root: Path, cwd: Path) -> Path:
    """The worktree's counterpart of ``cwd`` (a sub-folder of the repository), when it exists there."""
    try:
        relative = cwd.resolve().relative_to(git_root.resolve())
    except ValueError:
        return worktree
    candidate = worktree / relative
    return candidate if candidate.is_dir() else worktree


def _move(
    ctx: ToolContext,
    *,
    cwd: Path,
    project_root: Path,
    primary: Path | None,
    working_directories: tuple[Path, ...] | None = None,
) -> None:
    """Point the agent's context at a new place; ``primary`` replaces the first working directory."""
    ctx.cwd = cwd
    ctx.project_root = project_root
    if working_directories is not None:
        ctx.permissions = ctx.permissions.with_working_directories(*working_directories)
    elif primary is not None:
        rest = ctx.permissions.working_directories[1:]
        ctx.permissions = ctx.permissions.with_working_directories(primary, *rest)
