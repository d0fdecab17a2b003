"""``catui --help`` printed from a stored copy of what click renders, so that it starts no CLI machinery.

Rendering the root command's help means importing click and building every option of the root command: about
20 ms on a ~40 ms start. The text only changes when an option does, so it is rendered once, stored beside this
module (``help.txt``) and printed as it is; ``tests/test_stored_help.py`` fails when the stored copy and
click's rendering differ. Regenerate it with ``python -m catui.cli.stored_help --write``.

click wraps to the terminal's width up to 80 columns, so a narrower terminal gets click's own rendering.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HELP_FILE = Path(__file__).with_name("help.txt")
HELP_FLAGS = ("-h", "--help")
STORED_WIDTH = 80
"""click renders the same text at any width from this up."""


def answer_help(args: list[str]) -> bool:
    """Print the stored help when ``args`` asks only for it and the terminal is wide enough; whether it did."""
    if len(args) != 1 or args[0] not in HELP_FLAGS or _columns() < STORED_WIDTH:
        return False
    try:
        text = HELP_FILE.read_text(encoding="utf-8")
    except OSError:  # an installation without the file: click renders it
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    return True


def _columns() -> int:
    # shutil.get_terminal_size's order, which click follows: COLUMNS, then the terminal, then 80.
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ is not None else 80
    except (AttributeError, ValueError, OSError):
        return 80


def render_help() -> str:
    """The root command's help as click prints it on a terminal at least :data:`STORED_WIDTH` wide."""
    import click

    from catui.cli.main import root

    context = click.Context(root, info_name="catui", terminal_width=STORED_WIDTH - 2, **root.context_settings)
    return root.get_help(context) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        HELP_FILE.write_text(render_help(), encoding="utf-8")
        print(f"wrote {HELP_FILE}")
    else:
        sys.stdout.write(render_help())
