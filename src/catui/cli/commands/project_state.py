"""What ``catui tasks`` and ``catui worktrees`` share: the project they act on, its state.db, ages.

Only ``catui tasks`` and ``catui worktrees`` import this module (``cli/main.py`` loads subcommands
when they run), so ``catui --help`` never loads the state database module.
"""

from __future__ import annotations

from pathlib import Path

import click

from catui.paths import find_project_root
from catui.state.db import DB_FILENAME, StateDB

project_option = click.option(
    "-C",
    "--project",
    "project",
    metavar="DIR",
    help="The project folder (default: the git root of the current folder).",
)


def project_root(project: str | None) -> Path:
    """The project a command acts on: the git root of ``--project`` or of the current folder."""
    return find_project_root(Path(project) if project else Path.cwd())


def open_state(root: Path) -> StateDB | None:
    """The project's state.db, or ``None`` when catui never recorded anything there.

    Looking must not create anything: neither the database nor the ``.catui`` folder.
    """
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
