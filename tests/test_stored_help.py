"""``catui --help`` is printed from a stored copy of click's rendering (catui.cli.stored_help)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from catui.cli.stored_help import HELP_FILE, render_help

CATUI = str(Path(sys.executable).with_name("catui"))


def test_the_stored_help_is_what_click_renders() -> None:
    # Fails when an option changes without `python -m catui.cli.stored_help --write`.
    assert HELP_FILE.read_text(encoding="utf-8") == render_help()


def help_run(*args: str, columns: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    probe = ("import sys\nfrom catui.cli.entry import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
             "print('click' in sys.modules, file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env,
                          timeout=120, check=True)


def test_help_prints_the_stored_text_without_click() -> None:
    for flag in ("--help", "-h"):
        done = help_run(flag, columns=None)
        assert done.stdout == HELP_FILE.read_text(encoding="utf-8")
        assert done.stderr.strip() == "False"


def test_a_narrow_terminal_or_more_arguments_get_clicks_own_rendering() -> None:
    narrow = help_run("--help", columns="60")
    assert narrow.stderr.strip() == "True" and narrow.stdout.startswith("Usage: catui")
    assert narrow.stdout != HELP_FILE.read_text(encoding="utf-8")  # wrapped at 60 columns
    done = subprocess.run([CATUI, "--help", "--model", "x"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == HELP_FILE.read_text(encoding="utf-8")
