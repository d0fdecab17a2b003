"""What ``catui tasks`` and ``catui worktrees`` share: looking at a project never creates anything in it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from catui.cli.commands.project_state import format_age, open_state
from catui.cli.commands.tasks import command as tasks_command
from catui.cli.commands.worktrees import command as worktrees_command


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_listing_a_project_without_state_creates_nothing(repo: Path) -> None:
    tasks = CliRunner().invoke(tasks_command, ["-C", str(repo)])
    worktrees = CliRunner().invoke(worktrees_command, ["-C", str(repo)])
    assert (tasks.exit_code, tasks.output) == (0, "No background tasks.\n")
    assert (worktrees.exit_code, worktrees.output) == (0, "No kept worktrees.\n")
    assert open_state(repo) is None
    assert not (repo / ".catui").exists()


def test_format_age_uses_the_largest_whole_unit() -> None:
    now = 1_000_000.0
    assert format_age(None, now) == "?"
    assert format_age(now - 42, now) == "42s"
    assert format_age(now - 3 * 60 - 5, now) == "3m"
    assert format_age(now - 5 * 3600, now) == "5h"
    assert format_age(now - 2 * 86_400 - 7000, now) == "2d"
    assert format_age(now + 30, now) == "0s"  # a clock step backwards is not a negative age
