"""A Ray host process removes the checkouts that dead hosts left behind (the caller killed with -9 ends its Ray
job and Ray kills the hosts, so their children never finish and never clean up)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from catui.subagents.executors.remote_worker import SCRATCH_FOLDER, AgentHost, host_scratch_dir


def dead_pid() -> int:
    """The pid of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def leftover(root: Path, pid: int) -> Path:
    checkout = root / SCRATCH_FOLDER / f"host-{pid}" / "agent-a1-xyz" / "checkout"
    checkout.mkdir(parents=True)
    (checkout / "work.txt").write_text("left behind", encoding="utf-8")
    return checkout.parents[1]


def test_a_starting_host_sweeps_dead_hosts_and_keeps_live_ones(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = leftover(tmp_path, dead_pid())
    live = leftover(tmp_path, os.getppid())  # a running process (pytest's parent)
    own = leftover(tmp_path, os.getpid())  # a dead host had this process's pid: nothing of it is ours
    stranger = tmp_path / SCRATCH_FOLDER / "notes"
    stranger.mkdir()

    AgentHost()

    assert not dead.exists() and not own.exists()
    assert live.exists() and stranger.exists()
    assert host_scratch_dir() == tmp_path / SCRATCH_FOLDER / f"host-{os.getpid()}"
