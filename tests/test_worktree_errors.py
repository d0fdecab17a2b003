"""Every way worktree creation can fail: a clear one-line error and nothing half-made left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catui.errors import ConfigurationError
from catui.state import StateDB
from catui.worktree import (
    WorktreeError,
    create_worktree,
    ensure_inside,
    validate_agent_cwd,
    worktree_settings,
)
from tests.support.git_repos import branches, git, head, isolate_git, make_repo, worktree_paths

AGENT = "a0123456789abcdef"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return make_repo(tmp_path / "proj", {"README.md": "hello\n", "vendor": "a file in HEAD\n"})


def assert_nothing_left(repo: Path, state: StateDB | None = None) -> None:
    assert worktree_paths(repo) == [str(repo)]
    assert branches(repo) == ["main"]
    worktrees = repo / ".catui" / "worktrees"
    assert not worktrees.exists() or list(worktrees.iterdir()) == []
    if state is not None:
        assert state.list_worktrees() == []


def test_worktree_error_is_a_configuration_error() -> None:
    assert issubclass(WorktreeError, ConfigurationError)


async def test_not_a_git_repository_without_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match=r"needs a git repository.*not inside one.*WorktreeCreate"):
        await create_worktree(AGENT, repo_root=plain, settings={})
    assert not (plain / ".catui").exists()


async def test_git_missing(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    with pytest.raises(WorktreeError, match="`git` was not found on PATH"):
        await create_worktree(AGENT, repo_root=repo, settings={})
    monkeypatch.undo()
    isolate_git(monkeypatch, tmp_path / "home")
    assert_nothing_left(repo)


async def test_worktree_path_already_exists(repo: Path) -> None:
    state = StateDB(repo)
    squatter = repo / ".catui" / "worktrees" / "agent-a0123456"
    squatter.mkdir(parents=True)
    (squatter / "keep.txt").write_text("mine")
    with pytest.raises(WorktreeError, match=r"agent-a0123456 already exists.*catui worktrees rm"):
        await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    assert (squatter / "keep.txt").read_text() == "mine"  # untouched
    assert branches(repo) == ["main"]
    assert state.list_worktrees() == []
    state.close()


async def test_branch_name_taken(repo: Path) -> None:
    git(repo, "branch", "worktree-agent-a0123456")
    (repo / "extra.txt").write_text("x\n")
    git(repo, "add", "extra.txt")
    git(repo, "commit", "-q", "-m", "move main on")
    old_tip = git(repo, "rev-parse", "worktree-agent-a0123456").strip()
    with pytest.raises(WorktreeError, match=r"branch worktree-agent-a0123456 already exists.*git branch -D"):
        await create_worktree(AGENT, repo_root=repo, settings={})
    # The existing branch is left exactly as it was, and no folder was made.
    assert git(repo, "rev-parse", "worktree-agent-a0123456").strip() == old_tip != head(repo)
    assert worktree_paths(repo) == [str(repo)]
    assert not (repo / ".catui" / "worktrees" / "agent-a0123456").exists()


async def test_repository_without_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    with pytest.raises(WorktreeError, match="has no commits yet"):
        await create_worktree(AGENT, repo_root=empty, settings={})
    assert git(empty, "branch", "--list") == ""


async def test_file_system_error_mid_creation_rolls_back(repo: Path) -> None:
    # The main checkout has vendor/cache (a folder) where HEAD has a file `vendor`: linking it into the
    # fresh worktree fails after git has already made the worktree and its branch.
    (repo / "vendor").unlink()
    (repo / "vendor" / "cache").mkdir(parents=True)
    state = StateDB(repo)
    with pytest.raises(WorktreeError, match=r"could not create worktree .*agent-a0123456"):
        await create_worktree(
            AGENT,
            repo_root=repo,
            settings={"worktree": {"symlinkDirectories": ["vendor/cache"]}},
            state=state,
        )
    assert_nothing_left(repo, state)
    assert (repo / "vendor" / "cache").is_dir()
    state.close()


async def test_state_db_failure_after_git_rolls_back(repo: Path, tmp_path: Path) -> None:
    broken_path = tmp_path / "db-is-a-folder"
    broken_path.mkdir()
    state = StateDB(repo, path=broken_path)
    with pytest.raises(Exception, match="state database"):
        await create_worktree(AGENT, repo_root=repo, settings={}, state=state)
    assert_nothing_left(repo)


def _write_hook(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def _create_hook_settings(command: str, timeout: float | None = None) -> dict[str, object]:
    hook: dict[str, object] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {"hooks": {"WorktreeCreate": [{"hooks": [hook]}]}}


async def test_failing_hook_reports_its_stderr_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    project = tmp_path / "p"
    project.mkdir()
    command = _write_hook(
        tmp_path, "bad.sh", "cat >/dev/null\necho 'line one' >&2\necho 'quota exceeded' >&2\nexit 3\n"
    )
    state = StateDB(project)
    with pytest.raises(
        WorktreeError, match=r"WorktreeCreate hook .* failed with exit status 3: line one / quota exceeded"
    ):
        await create_worktree(AGENT, repo_root=project, settings=_create_hook_settings(command), state=state)
    assert state.list_worktrees() == []
    state.close()


async def test_hook_that_prints_no_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    command = _write_hook(tmp_path, "silent.sh", "cat >/dev/null\n")
    with pytest.raises(WorktreeError, match="printed no path"):
        await create_worktree(AGENT, repo_root=tmp_path, settings=_create_hook_settings(command))


async def test_hook_that_prints_a_missing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    command = _write_hook(tmp_path, "liar.sh", "cat >/dev/null\necho /nonexistent/worktree\n")
    with pytest.raises(WorktreeError, match="'/nonexistent/worktree', which is not an existing folder"):
        await create_worktree(AGENT, repo_root=tmp_path, settings=_create_hook_settings(command))


async def test_hook_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    command = _write_hook(tmp_path, "slow.sh", "sleep 30\n")
    with pytest.raises(WorktreeError, match=r"did not finish within 0.3s"):
        await create_worktree(AGENT, repo_root=tmp_path, settings=_create_hook_settings(command, timeout=0.3))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"worktree": ["node_modules"]}, "`worktree` must be an object"),
        ({"worktree": {"sparsePaths": "src"}}, r"`worktree.sparsePaths` must be a list"),
        ({"worktree": {"symlinkDirectories": ["../outside"]}}, "must be relative to the repository"),
        ({"worktree": {"sparsePaths": ["/abs"]}}, "must be relative to the repository"),
        ({"hooks": {"WorktreeCreate": {"command": "x"}}}, r"`hooks.WorktreeCreate` must be a list"),
        ({"hooks": {"WorktreeCreate": [{"hooks": [{"type": "command"}]}]}}, r"hooks\[0\].command` must be"),
        ({"hooks": {"WorktreeCreate": [{"hooks": [{"command": "x", "timeout": -1}]}]}}, "positive number"),
    ],
)
async def test_bad_settings_are_named(repo: Path, settings: dict[str, object], message: str) -> None:
    with pytest.raises(WorktreeError, match=message):
        await create_worktree(AGENT, repo_root=repo, settings=settings)
    assert_nothing_left(repo)


def test_worktree_settings_normalises_paths() -> None:
    links, sparse = worktree_settings(
        {"worktree": {"symlinkDirectories": ["node_modules/", "./.venv"], "sparsePaths": ["a/b"]}}
    )
    assert links == ("node_modules", ".venv")
    assert sparse == ("a/b",)


def test_ensure_inside(tmp_path: Path) -> None:
    root = tmp_path / "repo" / ".catui" / "worktrees" / "agent-1"
    root.mkdir(parents=True)
    (root / "src").mkdir()
    assert ensure_inside(root / "src" / "new.py", root)
    assert ensure_inside("src/../README.md", root)
    assert not ensure_inside("../../../../repo/README.md", root)
    assert not ensure_inside(root / ".." / "agent-2" / "x", root)
    assert not ensure_inside("/etc/passwd", root)
    os.symlink(tmp_path / "repo", root / "escape")
    assert not ensure_inside(root / "escape" / "README.md", root)


def test_validate_agent_cwd(tmp_path: Path) -> None:
    assert validate_agent_cwd(str(tmp_path), None) == tmp_path.resolve()
    with pytest.raises(WorktreeError, match="cannot be used together"):
        validate_agent_cwd(str(tmp_path), "worktree")
    with pytest.raises(WorktreeError, match="must be an absolute path, got 'src'"):
        validate_agent_cwd("src", None)
    with pytest.raises(WorktreeError, match="does not exist"):
        validate_agent_cwd(str(tmp_path / "missing"), None)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WorktreeError, match="is a file, not a folder"):
        validate_agent_cwd(str(tmp_path / "file.txt"), None)
    with pytest.raises(WorktreeError, match="non-empty"):
        validate_agent_cwd("  ", None)


async def test_cancelled_creation_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    isolate_git(monkeypatch, tmp_path / "home")
    repo = make_repo(tmp_path / "big", count=3000)
    state = StateDB(repo)
    task = asyncio.ensure_future(create_worktree(AGENT, repo_root=repo, settings={}, state=state))
    admin = repo / ".git" / "worktrees" / "agent-a0123456"
    while not admin.exists() and not task.done():
        await asyncio.sleep(0.001)
    if task.done():
        pytest.skip("git finished before the test could cancel it")
    task.cancel()  # git is mid-way through `worktree add`
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_nothing_left(repo, state)
    state.close()


async def test_a_git_cancelled_while_it_starts_is_left_to_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel landing while the subprocess's pipes are being connected must not kill the running git.

    asyncio kills such a child; a `worktree add` killed that way left its entry locked
    ("initializing") and the rollback could not remove it (test_cancelled_creation_leaves_nothing
    failed that way under load).
    """
    import asyncio

    from catui.worktree.gitcmd import run_git

    isolate_git(monkeypatch, tmp_path / "home")
    repo = make_repo(tmp_path / "proj")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nsleep 0.3\n", encoding="utf-8")  # git is still running when the cancel lands
    hook.chmod(0o755)
    task = asyncio.ensure_future(run_git("commit", "-q", "--allow-empty", "-m", "second", cwd=repo))
    await asyncio.sleep(0)  # the task has started git and waits for its pipes to connect
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert git(repo, "log", "--format=%s").split() == ["second", "initial"], "git was left to finish"


async def test_a_failing_second_create_hook_undoes_what_the_first_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    made = tmp_path / "made-by-first"
    first = _write_hook(tmp_path, "first.sh", f"cat >/dev/null\nmkdir -p {made}\necho {made}\n")
    second = _write_hook(tmp_path, "second.sh", "cat >/dev/null\necho 'disk full' >&2\nexit 1\n")
    remove = _write_hook(tmp_path, "remove.sh",
                         "python3 -c 'import json,shutil,sys; shutil.rmtree(json.load(sys.stdin)[\"worktree_path\"])'\n")
    settings = {"hooks": {
        "WorktreeCreate": [{"hooks": [{"type": "command", "command": first}]},
                           {"hooks": [{"type": "command", "command": second}]}],
        "WorktreeRemove": [{"hooks": [{"type": "command", "command": remove}]}],
    }}
    with pytest.raises(WorktreeError, match="disk full"):
        await create_worktree(AGENT, repo_root=tmp_path, settings=settings)
    assert not made.exists(), "the first hook's folder was removed through the WorktreeRemove hook"
