"""Moving a repository to a remote agent and its changes back as git bundles, with real git (no Ray needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.subagents.executors.repo_bundle import (
    RepoBundleError,
    apply_changes,
    bundle_changes,
    drop_snapshot_ref,
    open_checkout,
    snapshot_repository,
)
from tests.support.git_repos import git, head, isolate_git, make_repo


@pytest.fixture(autouse=True)
def _git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")


def test_round_trip_carries_uncommitted_work_and_brings_back_only_new_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": "*.log\n"})
    (repo / "a.txt").write_text("one\ntwo (uncommitted)\n", encoding="utf-8")
    (repo / "new.txt").write_text("untracked\n", encoding="utf-8")
    (repo / "noise.log").write_text("ignored\n", encoding="utf-8")
    git(repo, "add", "new.txt")  # one staged change too
    status_before = git(repo, "status", "--porcelain")

    snapshot = snapshot_repository(repo, "a1234567890abcdef")
    assert snapshot is not None and snapshot.commit != head(repo)
    assert git(repo, "status", "--porcelain") == status_before  # the caller's index is untouched

    checkout = open_checkout(snapshot.bundle, snapshot.ref, tmp_path / "worker" / "checkout")
    assert (checkout / "a.txt").read_text(encoding="utf-8") == "one\ntwo (uncommitted)\n"
    assert (checkout / "new.txt").exists() and not (checkout / "noise.log").exists()
    assert bundle_changes(checkout, snapshot.commit, "nothing") is None  # no change, nothing back

    (checkout / "a.txt").write_text("changed by the agent\n", encoding="utf-8")
    changes = bundle_changes(checkout, snapshot.commit, "agent work")
    assert changes is not None

    git(repo, "worktree", "add", "-q", "-b", "agent-branch", str(tmp_path / "wt"), "HEAD")
    apply_changes(tmp_path / "wt", changes)
    assert (tmp_path / "wt" / "a.txt").read_text(encoding="utf-8") == "changed by the agent\n"
    log = git(repo, "log", "--format=%s", "agent-branch").splitlines()
    assert log == ["agent work", "catui: uncommitted changes of the caller", "initial"]

    drop_snapshot_ref(snapshot)
    assert git(repo, "for-each-ref", "refs/catui") == ""


def test_clean_repository_sends_head_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    snapshot = snapshot_repository(repo, "aclean")
    assert snapshot is not None and snapshot.commit == head(repo)


def test_outside_git_there_is_nothing_to_send(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert snapshot_repository(folder, "aplain") is None


def test_repository_without_commits_gets_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    git(folder, "init", "-q")
    with pytest.raises(RepoBundleError, match="has no commit yet; commit once so a remote agent can get a copy"):
        snapshot_repository(folder, "aempty")
