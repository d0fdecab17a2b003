"""Running git: one async helper, with retries for git's own lock-file contention.

Git processes dominate worktree timing, so callers keep their number minimal;
this module only makes each one predictable (C locale so messages can be
matched, no prompts, a clear error when git is missing).
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from catui.worktree.model import WorktreeError

# git prints these when another git process holds a lock it needs (refs, config, index), or when it
# read another worktree's admin folder while a concurrent `git worktree add` was still filling it in.
_LOCK_CONTENTION = re.compile(
    r"(Unable to create '[^']*\.lock'|could not lock config file|cannot lock ref|\.lock': File exists"
    r"|failed to read [^:]*worktrees/[^:]*: |worktrees/[^:]*: No such file or directory)",
    re.I,
)
LOCK_RETRIES = 8
CANCEL_GRACE_S = 30.0


@dataclass(frozen=True)
class GitResult:
    """A finished git command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines of stderr on one line, for error messages."""
        tail = [line.strip() for line in self.stderr.strip().splitlines() if line.strip()][-lines:]
        return " / ".join(tail) or f"exit status {self.returncode}"


@functools.lru_cache(maxsize=8)
def _which_git(path_variable: str | None) -> str | None:
    return shutil.which("git", path=path_variable)


def git_executable() -> str:
    """The path of ``git`` on PATH, or a :class:`WorktreeError` saying it is missing."""
    found = _which_git(os.environ.get("PATH"))
    if found is None:
        raise WorktreeError(
            "worktree isolation needs git, but `git` was not found on PATH; install git, "
            "or configure WorktreeCreate/WorktreeRemove hooks in settings"
        )
    return found


def _git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0"})
    if extra:
        env.update(extra)
    return env


def is_lock_contention(result: GitResult) -> bool:
    """Whether a failure came from a concurrent git process (a held lock, a half-made worktree): worth retrying."""
    return not result.ok and bool(_LOCK_CONTENTION.search(result.stderr))


async def run_git(
    *args: str, cwd: Path, retry_on_lock: bool = False, env: Mapping[str, str] | None = None
) -> GitResult:
    """Run ``git <args>`` in ``cwd``; never raises for a non-zero exit (check ``.ok``).

    ``env`` adds variables for this command (a temporary ``GIT_INDEX_FILE``).

    With ``retry_on_lock`` a failure caused by git's lock files (another agent
    creating its worktree at the same moment) is retried with a short jittered
    back-off. Only pass it for commands that are safe to repeat after failing.
    """
    git = git_executable()
    attempt = 0
    while True:
        proc = await _start_git(git, args, cwd, env)
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            await _let_git_finish(proc)
            raise
        result = GitResult(
            args=tuple(args),
            returncode=proc.returncode if proc.returncode is not None else -1,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
        )
        if retry_on_lock and attempt < LOCK_RETRIES and is_lock_contention(result):
            attempt += 1
            await asyncio.sleep(random.uniform(0.01, 0.05) * attempt)
            continue
        return result


async def _start_git(
    git: str, args: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None
) -> asyncio.subprocess.Process:
    """Start git; a cancellation that arrives meanwhile waits for the started git to finish, then propagates.

    The start is shielded because asyncio kills a child whose pipes were still being connected when the
    awaiting task was cancelled, and git is running by then: a `worktree add` killed that way leaves
    its admin entry locked ("initializing"), which neither `worktree remove --force` nor `prune` clears.
    """
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            git,
            *args,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_git_env(env),
        )
    )
    try:
        return await _started(asyncio.shield(starting), git, cwd)
    except asyncio.CancelledError:
        if not starting.cancelled():
            try:
                proc = await _started(starting, git, cwd)
            except (WorktreeError, asyncio.CancelledError):
                raise asyncio.CancelledError from None
            await _let_git_finish(proc)
        raise


async def _started(
    starting: asyncio.Future[asyncio.subprocess.Process], git: str, cwd: Path
) -> asyncio.subprocess.Process:
    try:
        return await starting
    except FileNotFoundError as exc:
        if not Path(cwd).is_dir():
            raise WorktreeError(f"cannot run git in {cwd}: the folder does not exist") from exc
        raise WorktreeError(f"cannot run git ({git}): {exc}") from exc
    except OSError as exc:
        raise WorktreeError(f"cannot run git in {cwd}: {exc}") from exc


async def _let_git_finish(proc: asyncio.subprocess.Process) -> None:
    """After a cancellation: let git finish rather than kill it half-way.

    A killed `worktree add` leaves a locked entry behind; the caller's rollback then undoes a complete
    result instead. Only a git that outlasts the grace period (or a second cancellation) is killed.
    """
    try:
        await asyncio.wait_for(proc.wait(), timeout=CANCEL_GRACE_S)
    except (TimeoutError, asyncio.CancelledError):
        if proc.returncode is None:
            proc.kill()
