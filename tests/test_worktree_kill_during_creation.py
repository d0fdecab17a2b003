"""kill -9 at random moments of a worktree's creation never leaves anything unrecorded (real git, real processes).

A child process creates an agent's worktree (as the Agent tool does) and is killed with SIGKILL after a random
delay, landing before, during or after ``git worktree add``: in half the trials catui alone (its git goes on as
an orphan and finishes), in the other half its whole process group (git dies half-way, leaving a worktree
locked "initializing"). Once no process of the group is left, the start-up sweep runs, as the next catui
start would. Every trial must end with nothing left: no worktree (locked or not), no branch, no folder, no
row still ``creating`` or ``active``. The trials must also show that kills really landed mid-creation (a row
still ``creating`` found before the sweep), or the test proves nothing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catui.state.db import StateDB
from catui.worktree.cleanup import sweep_stale_worktrees
from tests.support.git_repos import git, isolate_git, make_repo

TRIALS = 40

CHILD = """
import asyncio, sys
from pathlib import Path
from catui.state.db import StateDB
from catui.worktree.create import create_worktree

repo, agent_id = Path(sys.argv[1]), sys.argv[2]
state = StateDB(repo)

async def main():
    print("ready", flush=True)
    await create_worktree(agent_id, repo_root=repo, state=state, session_id="s")
    print("created", flush=True)
    await asyncio.sleep(60)  # the agent would run now

asyncio.run(main())
"""


def wait_until_group_gone(pgid: int) -> None:
    """Until no live process of the process group ``pgid`` is left (an orphaned git finishing its work)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive = True
                break
        if not alive:
            return
        time.sleep(0.01)
    raise AssertionError(f"process group {pgid} still running after 30 s")


def leftovers(repo: Path) -> list[str]:
    found = []
    listing = git(repo, "worktree", "list", "--porcelain")
    found += [line for line in listing.splitlines() if line.startswith("worktree ") and line != f"worktree {repo}"]
    found += [b for b in git(repo, "branch", "--format=%(refname:short)").split() if b.startswith("worktree-")]
    folder = repo / ".catui" / "worktrees"
    if folder.is_dir():
        found += [str(p) for p in folder.iterdir()]
    return found


async def test_a_kill_during_creation_leaves_nothing_the_next_start_does_not_remove(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    repo = make_repo(tmp_path / "repo", {f"src/f{n}.txt": f"{n}\n" * 50 for n in range(200)})
    rng = random.Random(26)
    mid_creation = 0
    locked = 0
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for trial in range(TRIALS):
        agent_id = f"a{trial:02d}{rng.getrandbits(56):014x}"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(repo), agent_id], stdout=subprocess.PIPE, text=True, env=env,
            start_new_session=True,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0, 0.08))  # creation takes a few tens of milliseconds here
        if trial % 2:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        wait_until_group_gone(child.pid)
        state = StateDB(repo)
        try:
            row = state.get_worktree(agent_id)
            if row is not None and row["status"] == "creating":
                mid_creation += 1
                # git itself may fail here: an admin folder whose `commondir` was being written is unreadable.
                listing = subprocess.run(["git", "-C", str(repo), "worktree", "list", "--porcelain"],
                                         capture_output=True, text=True)
                locked += "locked" in listing.stdout or listing.returncode != 0
            else:
                # Not recorded yet means nothing was made yet.
                assert row is not None or leftovers(repo) == [], (trial, leftovers(repo))
            await sweep_stale_worktrees(repo, state)
            assert leftovers(repo) == [], (trial, row and row["status"], leftovers(repo))
            assert not state.list_worktrees(status="creating") and not state.list_worktrees(status="active")
        finally:
            state.close()
    assert mid_creation > 0, "no kill landed during the creation; the delays do not cover it"
    print(f"{TRIALS} trials: {mid_creation} killed mid-creation, {locked} of them with a locked or unreadable worktree")
