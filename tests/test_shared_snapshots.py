"""Remote agents of one workflow share one snapshot of the repository while they run (no Ray needed: the
object store's ``put`` is given; a real git repository in a temp folder)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from catui.subagents.executors.repo_bundle import RepoBundleError
from catui.subagents.executors.shared_snapshots import SharedSnapshots
from tests.support.git_repos import git, isolate_git, make_repo


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def refs(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/catui").split()


async def test_agents_that_run_together_share_one_snapshot_and_the_last_drops_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    (repo / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    stored: list[bytes] = []
    shared = SharedSnapshots(lambda bundle: stored.append(bundle) or f"object-{len(stored)}")

    taken = await asyncio.gather(*(shared.take("wf_run", repo) for _ in range(5)))
    assert len(stored) == 1  # one snapshot, one bundle in the object store, for five agents
    assert {id(snapshot) for snapshot, _ in taken} == {id(taken[0][0])}
    assert {reference for _, reference in taken} == {"object-1"}
    snapshot = taken[0][0]
    assert snapshot is not None and refs(repo) == ["refs/catui/remote/wf_run"]
    assert git(repo, "show", f"{snapshot.commit}:a.txt") == "one\ntwo\n"  # the caller's uncommitted work

    for _ in range(4):
        await shared.give_back("wf_run", repo)
    assert refs(repo) == ["refs/catui/remote/wf_run"]  # one agent still runs on it
    await shared.give_back("wf_run", repo)
    assert refs(repo) == []

    # an agent that starts after the others have ended gets a fresh snapshot of the folder as it is now
    (repo / "a.txt").write_text("three\n", encoding="utf-8")
    later, _ = await shared.take("wf_run", repo)
    assert len(stored) == 2 and later is not None and git(repo, "show", f"{later.commit}:a.txt") == "three\n"
    await shared.give_back("wf_run", repo)
    assert refs(repo) == []


async def test_outside_git_there_is_nothing_to_share(tmp_path: Path) -> None:
    shared = SharedSnapshots(lambda bundle: pytest.fail("nothing to store"))
    assert await shared.take("wf_run", tmp_path) == (None, None)
    await shared.give_back("wf_run", tmp_path)


async def test_a_snapshot_that_cannot_be_made_fails_every_agent_that_waits_for_it(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")  # no commit yet
    shared = SharedSnapshots(lambda bundle: bundle)
    outcomes = await asyncio.gather(*(shared.take("wf_run", repo) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(o, RepoBundleError) and "no commit yet" in str(o) for o in outcomes)
    # nothing is left in use: the next agent tries again
    with pytest.raises(RepoBundleError):
        await shared.take("wf_run", repo)
