"""Worktree creation, change detection and clean-up with real git in temporary repositories."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from catui.state import StateDB
from catui.worktree import (
    WorktreeInfo,
    change_summary,
    cleanup_worktree,
    create_worktree,
    finish_worktree,
    remove_worktree,
    sweep_stale_worktrees,
    worktree_has_changes,
)
from tests.support.git_repos import branches, git, head, isolate_git, make_repo, worktree_paths

AGENT = "a1b2c3d4e5f60718"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return make_repo(tmp_path / "proj", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})


@pytest.fixture
def state(repo: Path) -> StateDB:
    db = StateDB(repo)
    yield db
    db.close()


async def test_creates_worktree_on_new_branch_from_head(repo: Path, state: StateDB) -> None:
    # A dirty main checkout is fine: the worktree starts from HEAD, not from the uncommitted file.
    (repo / "README.md").write_text("uncommitted\n")
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)

    assert info.path == repo / ".catui" / "worktrees" / "agent-a1b2c3d4"
    assert info.branch == "worktree-agent-a1b2c3d4"
    assert info.head_commit == head(repo)
    assert info.git_root == repo
    assert not info.hook_based
    assert (info.path / "src" / "app.py").read_text() == "print('hi')\n"
    assert (info.path / "README.md").read_text() == "hello\n"
    assert git(info.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == info.branch
    assert str(info.path) in worktree_paths(repo)
    # Recorded before returning, as active, owned by this process.
    row = state.get_worktree(AGENT)
    assert row is not None
    assert (row["status"], row["path"], row["branch"], row["pid"]) == (
        "active",
        str(info.path),
        info.branch,
        os.getpid(),
    )
    # The worktrees folder never shows up in the main checkout's status.
    assert "worktrees" not in git(repo, "status", "--porcelain", "--untracked-files=all")
    assert WorktreeInfo.from_row(row) == info


async def test_unchanged_worktree_and_branch_are_removed(repo: Path, state: StateDB) -> None:
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    assert await worktree_has_changes(info) is False

    outcome = await finish_worktree(info, state)

    assert outcome.kept is False and outcome.trailer_lines() == []
    assert not info.path.exists()
    assert info.branch not in branches(repo)
    assert str(info.path) not in worktree_paths(repo)
    assert state.get_worktree(AGENT)["status"] == "removed"


async def test_uncommitted_changes_keep_the_worktree(repo: Path, state: StateDB) -> None:
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    (info.path / "src" / "app.py").write_text("print('changed')\nprint('more')\n")
    (info.path / "new.txt").write_text("one\ntwo\nthree\n")

    assert await worktree_has_changes(info) is True
    assert await change_summary(info) == (2, 5, 1)
    outcome = await finish_worktree(info, state)

    assert (outcome.kept, outcome.path, outcome.branch) == (True, info.path, info.branch)
    assert outcome.trailer_lines() == [f"worktreePath: {info.path}", f"worktreeBranch: {info.branch}"]
    assert (info.path / "new.txt").exists()
    assert info.branch in branches(repo)
    assert state.get_worktree(AGENT)["status"] == "kept"


async def test_untracked_file_alone_keeps_the_worktree(repo: Path, state: StateDB) -> None:
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    (info.path / "notes.md").write_text("x\n")
    assert await cleanup_worktree(info, state) is False
    assert (info.path / "notes.md").exists()


async def test_committed_changes_keep_the_worktree(repo: Path, state: StateDB) -> None:
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    (info.path / "feature.py").write_text("x = 1\n")
    git(info.path, "add", "feature.py")
    git(info.path, "commit", "-q", "-m", "feature")
    assert git(info.path, "status", "--porcelain") == ""

    assert await worktree_has_changes(info) is True
    assert await change_summary(info) == (1, 1, 0)
    outcome = await finish_worktree(info, state)

    assert outcome.kept is True
    assert info.path.is_dir()
    assert git(repo, "log", "-1", "--format=%s", info.branch or "").strip() == "feature"


async def test_ignored_files_do_not_count_as_changes(repo: Path, state: StateDB) -> None:
    (repo / ".gitignore").write_text("build/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build")
    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    (info.path / "build").mkdir()
    (info.path / "build" / "out.bin").write_text("artifact")
    assert await worktree_has_changes(info) is False
    assert await cleanup_worktree(info, state) is True
    assert not info.path.exists()


async def test_sparse_paths_check_out_only_those_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    files = {
        "top.txt": "t\n",
        "a/x/one.txt": "1\n",
        "a/y/two.txt": "2\n",
        "b/three.txt": "3\n",
        "c/four.txt": "4\n",
    }
    repo = make_repo(tmp_path / "proj", files)
    db = StateDB(repo)
    info = await create_worktree(
        AGENT, repo_root=repo, settings={"worktree": {"sparsePaths": ["a/x", "b"]}}, state=db
    )

    present = sorted(
        str(p.relative_to(info.path)) for p in info.path.rglob("*") if p.is_file() and ".git" not in p.parts
    )
    assert present == ["a/x/one.txt", "b/three.txt", "top.txt"]
    # Paths outside the cone are not "deleted" changes.
    assert await worktree_has_changes(info) is False
    assert (await finish_worktree(info, db)).kept is False
    assert not info.path.exists()
    assert info.branch not in branches(repo)
    db.close()


async def test_symlinked_directories_are_linked_and_survive_removal(repo: Path, state: StateDB) -> None:
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    (repo / ".venv").mkdir()
    settings = {"worktree": {"symlinkDirectories": ["node_modules", ".venv", "absent_dir", "src"]}}

    info = await create_worktree(AGENT, repo_root=repo, settings=settings, state=state)

    link = info.path / "node_modules"
    assert link.is_symlink() and link.resolve() == (repo / "node_modules").resolve()
    assert (link / "pkg" / "index.js").read_text() == "module.exports = 1\n"
    assert (info.path / ".venv").is_symlink()
    assert not os.path.lexists(info.path / "absent_dir")  # missing in the main checkout: skipped
    assert not (info.path / "src").is_symlink()  # present in the worktree already: left alone
    assert set(info.symlinks) == {"node_modules", ".venv"}
    # Our own links are not the agent's changes, and removal never follows them.
    assert await worktree_has_changes(info) is False
    assert (await finish_worktree(info, state)).kept is False
    assert not info.path.exists()
    assert (repo / "node_modules" / "pkg" / "index.js").exists()
    assert (repo / ".venv").is_dir()


async def test_kept_worktree_keeps_its_symlinks(repo: Path, state: StateDB) -> None:
    (repo / "node_modules").mkdir()
    info = await create_worktree(
        AGENT, repo_root=repo, settings={"worktree": {"symlinkDirectories": ["node_modules"]}}, state=state
    )
    (info.path / "README.md").write_text("edited\n")
    assert (await finish_worktree(info, state)).kept is True
    assert (info.path / "node_modules").is_symlink()


HOOK_CREATE = """#!/bin/sh
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name": "\\([^"]*\\)".*/\\1/p')
dir="$HOOK_BASE/$name"
mkdir -p "$dir"
printf '%s' "$input" > "$dir.create.json"
echo "preparing $name" >&2
echo "$dir"
"""

HOOK_REMOVE = """#!/bin/sh
input=$(cat)
path=$(printf '%s' "$input" | sed -n 's/.*"worktree_path": "\\([^"]*\\)".*/\\1/p')
printf '%s' "$input" > "$path.remove.json"
rm -rf "$path"
"""


def _hook_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    base = tmp_path / "hook-worktrees"
    base.mkdir()
    monkeypatch.setenv("HOOK_BASE", str(base))
    create = tmp_path / "create.sh"
    remove = tmp_path / "remove.sh"
    create.write_text(HOOK_CREATE)
    remove.write_text(HOOK_REMOVE)
    create.chmod(0o755)
    remove.chmod(0o755)
    return {
        "hooks": {
            "WorktreeCreate": [{"hooks": [{"type": "command", "command": str(create)}]}],
            "WorktreeRemove": [{"hooks": [{"type": "command", "command": str(remove), "timeout": 10}]}],
        }
    }


async def test_hook_based_create_and_remove_outside_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    isolate_git(monkeypatch, tmp_path / "home")
    project = tmp_path / "plain-project"
    project.mkdir()
    settings = _hook_settings(tmp_path, monkeypatch)
    db = StateDB(project)

    info = await create_worktree(AGENT, repo_root=project, settings=settings, state=db, session_id="sess-1")

    assert info.hook_based and info.branch is None and info.head_commit is None
    assert info.path == (tmp_path / "hook-worktrees" / "agent-a1b2c3d4").resolve()
    assert info.path.is_dir()
    sent = json.loads(Path(f"{info.path}.create.json").read_text())
    assert sent["hook_event_name"] == "WorktreeCreate"
    assert sent["name"] == "agent-a1b2c3d4" and sent["session_id"] == "sess-1"
    assert sent["cwd"] == str(project.resolve())
    row = db.get_worktree(AGENT)
    assert row is not None and row["hook_based"] is True and row["status"] == "active"

    # The remove hook is remembered in state.db, so a later process can call it without settings.
    restored = WorktreeInfo.from_row(row)
    assert (await finish_worktree(restored, db)).kept is False
    assert not info.path.exists()
    removed = json.loads(Path(f"{info.path}.remove.json").read_text())
    assert removed["hook_event_name"] == "WorktreeRemove" and removed["worktree_path"] == str(info.path)
    assert db.get_worktree(AGENT)["status"] == "removed"
    db.close()


async def test_hook_based_without_remove_hook_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    project = tmp_path / "p"
    project.mkdir()
    settings = _hook_settings(tmp_path, monkeypatch)
    del settings["hooks"]["WorktreeRemove"]  # type: ignore[index]
    db = StateDB(project)
    info = await create_worktree(AGENT, repo_root=project, settings=settings, state=db)
    outcome = await finish_worktree(info, db)
    assert outcome.kept is True and outcome.path == info.path and info.path.is_dir()
    db.close()


async def test_twenty_agents_in_parallel_get_distinct_worktrees(repo: Path, state: StateDB) -> None:
    ids = [f"a{index:02d}{'0' * 14}" for index in range(20)]
    infos = await asyncio.gather(*(create_worktree(i, repo_root=repo, settings={}, state=state) for i in ids))

    assert len({info.path for info in infos}) == 20
    assert len({info.branch for info in infos}) == 20
    assert all((info.path / "src" / "app.py").exists() for info in infos)
    assert len(worktree_paths(repo)) == 21
    (infos[3].path / "README.md").write_text("agent 3 worked\n")

    outcomes = await asyncio.gather(*(finish_worktree(info, state) for info in infos))

    assert [o.kept for o in outcomes] == [index == 3 for index in range(20)]
    assert worktree_paths(repo) == [str(repo), str(infos[3].path)]
    assert [b for b in branches(repo) if b.startswith("worktree-")] == [infos[3].branch]
    await remove_worktree(infos[3], state)
    assert worktree_paths(repo) == [str(repo)]
    assert branches(repo) == ["main"]


async def test_twenty_sparse_agents_in_parallel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # sparse-checkout writes the shared config: the retries on git's lock files must absorb contention.
    isolate_git(monkeypatch, tmp_path / "home")
    repo = make_repo(tmp_path / "proj", {"a/one.txt": "1\n", "b/two.txt": "2\n"})
    db = StateDB(repo)
    settings = {"worktree": {"sparsePaths": ["a"]}}
    infos = await asyncio.gather(
        *(
            create_worktree(f"b{index:02d}{'1' * 14}", repo_root=repo, settings=settings, state=db)
            for index in range(20)
        )
    )
    assert all((i.path / "a" / "one.txt").exists() and not (i.path / "b").exists() for i in infos)
    outcomes = await asyncio.gather(*(finish_worktree(info, db) for info in infos))
    assert not any(o.kept for o in outcomes)
    assert worktree_paths(repo) == [str(repo)]
    db.close()


async def test_startup_sweep_removes_unchanged_worktrees_of_dead_agents(repo: Path, state: StateDB) -> None:
    dead_clean = await create_worktree("c" * 16, repo_root=repo, settings={}, state=state)
    dead_dirty = await create_worktree("d" * 16, repo_root=repo, settings={}, state=state)
    alive = await create_worktree("e" * 16, repo_root=repo, settings={}, state=state)
    (dead_dirty.path / "wip.txt").write_text("unfinished\n")
    dead_pid = 999_999_999
    for info in (dead_clean, dead_dirty):
        row = state.get_worktree(info.agent_id)
        assert row is not None
        state.record_worktree(
            info.agent_id, path=info.path, branch=info.branch, head_commit=info.head_commit,
            git_root=info.git_root, hook_based=False, pid=dead_pid, meta=row["meta"],
        )  # fmt: skip

    result = await sweep_stale_worktrees(repo, state)

    assert result.removed == (dead_clean.agent_id,)
    assert result.kept == (dead_dirty.agent_id,)
    assert not dead_clean.path.exists() and dead_clean.branch not in branches(repo)
    assert dead_dirty.path.is_dir() and state.get_worktree(dead_dirty.agent_id)["status"] == "kept"
    assert alive.path.is_dir() and state.get_worktree(alive.agent_id)["status"] == "active"


async def test_cleanup_of_a_worktree_whose_folder_was_deleted(repo: Path, state: StateDB) -> None:
    import shutil

    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    shutil.rmtree(info.path)
    assert await cleanup_worktree(info, state) is True
    assert str(info.path) not in worktree_paths(repo)
    assert info.branch not in branches(repo)


async def test_sweep_at_startup_touches_nothing_without_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catui.worktree import sweep_at_startup

    isolate_git(monkeypatch, tmp_path / "home")
    fresh = make_repo(tmp_path / "fresh")
    assert await sweep_at_startup(fresh) is None
    assert not (fresh / ".catui").exists()


async def test_sweep_at_startup_cleans_a_dead_agents_worktree(repo: Path, state: StateDB) -> None:
    from catui.worktree import sweep_at_startup

    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    row = state.get_worktree(AGENT)
    assert row is not None
    state.record_worktree(
        AGENT, path=info.path, branch=info.branch, head_commit=info.head_commit, git_root=info.git_root,
        hook_based=False, pid=999_999_997, meta=row["meta"],
    )  # fmt: skip
    result = await sweep_at_startup(repo)
    assert result is not None and result.removed == (AGENT,)
    assert not info.path.exists() and info.branch not in branches(repo)


async def test_catui_runtime_files_inside_the_worktree_are_not_changes(repo: Path, state: StateDB) -> None:
    from catui.paths import project_runtime_dir

    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    runtime = project_runtime_dir(info.path)  # what a catui session running in the worktree writes
    (runtime / "tasks").mkdir()
    (runtime / "tasks" / "b1.output").write_text("{}\n")
    assert await worktree_has_changes(info) is False
    assert (await finish_worktree(info, state)).kept is False
    assert not info.path.exists()


async def test_agent_files_under_catui_folder_are_changes(repo: Path, state: StateDB) -> None:
    from catui.paths import project_runtime_dir

    info = await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    runtime = project_runtime_dir(info.path)
    (runtime / "agents").mkdir()
    (runtime / "agents" / "reviewer.md").write_text("---\nname: reviewer\n---\n")
    assert await worktree_has_changes(info) is True
    assert (await finish_worktree(info, state)).kept is True
    assert (runtime / "agents" / "reviewer.md").exists()
