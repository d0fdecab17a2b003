"""What ``catui tasks`` and ``catui worktrees`` share: the project they act on, its state.db, ages.

Only click is imported at module level; paths and state are imported when a command runs, so
``catui --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from catui.state.db import StateDB

project_option = click.option(
    "-C",
    "--project",
    "project",
    metavar="DIR",
    help="The project folder (default: the git root of the current folder).",
)


def project_root(project: str | None) -> Path:
    """The project a command acts on: the git root of ``--project`` or of the current folder."""
    from catui.paths import find_project_root

    return find_project_root(Path(project) if project else Path.cwd())


def open_state(root: Path) -> StateDB | None:
    """The project's state.db, or ``None`` when catui never recorded anything there.

    Looking must not create anything: neither the database nor the ``.catui`` folder.
    """
    from catui.state.db import DB_FILENAME, StateDB

    if not (root / ".catui" / DB_FILENAME).is_file():
        return None
    return StateDB(root)


def format_age(created_at: float | None, now: float) -> str:
    """How long ago ``created_at`` was, in its largest whole unit (``3d``, ``5h``, ``12m``, ``40s``); ``?`` if unknown."""
    if not created_at:
        return "?"
    seconds = max(0, int(now - created_at))
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
