"""Where catui keeps things on disk.

The user's catui home is ``$CATUI_HOME`` or ``~/.catui``. Per-project run-time
state lives in ``<project>/.catui/`` (tasks, worktrees, state.db); catui keeps
those folders out of git itself by writing ``.catui/.gitignore``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# The file ignores itself too, so a project where catui only kept run-time state shows nothing new in
# `git status`; settings.json and agents/ written by the user stay visible and committable.
RUNTIME_GITIGNORE = (
    "# Written by catui: run-time state stays out of git.\n"
    "/.gitignore\n/.ignore\n/tasks/\n/worktrees/\n/state.db*\n/mailboxes/\n/settings.local.json\n"
)


def catui_home() -> Path:
    """The user's catui home folder (``$CATUI_HOME`` or ``~/.catui``)."""
    env = os.environ.get("CATUI_HOME")
    return Path(env).expanduser() if env else Path.home() / ".catui"


def project_config_dirs(cwd: Path, name: str) -> list[Path]:
    """``.claude/<name>`` and ``.catui/<name>`` of every folder from the project root down to ``cwd``.

    Outermost first, so that a folder nearer ``cwd`` (loaded later) wins; agents and skills both use it.
    """
    cwd = cwd.resolve()
    root = find_project_root(cwd)
    chain = [cwd]
    if root != cwd and root in cwd.parents:
        for parent in cwd.parents:
            chain.append(parent)
            if parent == root:
                break
    dirs: list[Path] = []
    for folder in reversed(chain):
        dirs.extend((folder / ".claude" / name, folder / ".catui" / name))
    return dirs


def user_config_dirs(home: Path | None = None) -> tuple[Path, Path]:
    """(Claude Code's user folder, catui's user folder) whose settings, memory and agents apply everywhere.

    ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, and :func:`catui_home`. A given ``home`` stands in for ``~``
    and the two variables are not consulted (tests pass a temporary folder).
    """
    if home is not None:
        return home / ".claude", home / ".catui"
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    claude_dir = Path(config_dir).expanduser() if config_dir else Path.home() / ".claude"
    return claude_dir, catui_home()


def project_slug(cwd: Path) -> str:
    """The folder name a project gets under the catui home: its absolute path with separators replaced."""
    return re.sub(r"[/\\_:]", "-", str(cwd.resolve()))


def sessions_dir(cwd: Path) -> Path:
    """Where session transcripts of the project at ``cwd`` are written."""
    return catui_home() / "projects" / project_slug(cwd)


STATE_DB_FILENAME = "state.db"


def state_db_file(project_root: Path) -> Path:
    """``<project>/.catui/state.db`` (which may not exist; nothing is created)."""
    return project_root / ".catui" / STATE_DB_FILENAME


def project_runtime_dir(project_root: Path) -> Path:
    """``<project>/.catui``, created with its ``.gitignore`` on first use."""
    d = project_root / ".catui"
    d.mkdir(parents=True, exist_ok=True)
    # `.gitignore` keeps run-time state out of git; `.ignore` (read by rg and catui's Glob/Grep even outside
    # git) keeps agents' output files out of searches.
    for name in (".gitignore", ".ignore"):
        ignore = d / name
        if not ignore.exists():
            try:
                ignore.write_text(RUNTIME_GITIGNORE, encoding="utf-8")
            except OSError:
                pass
    return d


def find_project_root(cwd: Path) -> Path:
    """The git top-level folder containing ``cwd``, or ``cwd`` itself outside git."""
    cur = cwd.resolve()
    for candidate in (cur, *cur.parents):
        if (candidate / ".git").exists():
            return candidate
    return cur
