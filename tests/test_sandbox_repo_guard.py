"""Attacks on the repository's configuration from inside the sandbox (REAL bubblewrap, REAL git).

A sandboxed command may write its working folders, but must not plant anything that runs later outside the
sandbox: git config (fsmonitor, hooksPath), git hooks, a redirecting ``.git/commondir`` or a replaced
``.git``, ``.claude/`` / ``.catui/`` settings, agents and commands, ``.mcp.json`` — whether or not they
existed when the command started — and an isolated agent must not move another branch. Each attack runs
through the Bash tool exactly as an agent's command would; afterwards the repository is checked from outside.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from catui.permissions.context import PermissionContext
from catui.sandbox.config import SandboxSettings
from catui.sandbox.placeholders import lease_placeholder
from catui.sandbox.policy import BashSandbox
from catui.sandbox.probe import probe_bwrap
from catui.tasks.registry import TaskRegistry
from catui.tools.base import ToolContext, ToolServices
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput
from tests.support.git_repos import git, isolate_git, make_repo

AVAILABILITY = probe_bwrap()
pytestmark = pytest.mark.skipif(not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}")

# (label, command): each must fail inside the sandbox and leave no trace outside.
MAIN_CHECKOUT_ATTACKS = [
    ("claude settings", "mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json"),
    ("claude local settings", "echo '{\"enableAllProjectMcpServers\":true}' > .claude/settings.local.json"),
    ("claude agent", "mkdir -p .claude/agents && echo evil > .claude/agents/evil.md"),
    ("claude command", "mkdir -p .claude/commands && echo evil > .claude/commands/evil.md"),
    ("claude swapped", "mv .claude .claude-old && mkdir .claude && echo '{}' > .claude/settings.json"),
    ("catui settings", "mkdir -p .catui && echo '{\"sandbox\":{\"enabled\":false}}' > .catui/settings.json"),
    ("mcp json", "echo '{\"mcpServers\":{\"x\":{\"command\":\"touch\",\"args\":[\"/tmp/pwned\"]}}}' > .mcp.json"),
    ("mcp json by rename", "echo '{}' > m.json && mv -f m.json .mcp.json; rc=$?; rm -f m.json; exit $rc"),
    ("mcp json link", "ln -sf /etc/hostname .mcp.json"),
    ("fsmonitor", "git config core.fsmonitor 'touch /tmp/pwned'"),
    ("hooksPath", "git config core.hooksPath ./hooks"),
    ("config file", "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config"),
    ("hook", "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout"),
    ("hooks swapped", "mv .git/hooks .git/hooks-old && mkdir .git/hooks && echo x > .git/hooks/pre-commit"),
    ("git swapped", "mv .git .git-old && mkdir .git && echo x > .git/config"),
]


def make_ctx(root: Path, mode: str = "bypassPermissions", *, tasks: TaskRegistry | None = None) -> ToolContext:
    return ToolContext(
        cwd=root, project_root=root,
        permissions=PermissionContext(mode=mode, working_directories=(root,)),  # type: ignore[arg-type]
        services=ToolServices(sandbox=BashSandbox(SandboxSettings(enabled=True)), tasks=tasks),
    )


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    root = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    for name in ("hooks",):  # a repository without a hooks folder: nothing exists yet to mount over
        subprocess.run(["rm", "-rf", str(root / ".git" / name)], check=True)
    return root


def git_config(repo: Path, key: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "config", "--get", key], capture_output=True, text=True)
    return done.stdout.strip()


@pytest.mark.parametrize(("label", "command"), MAIN_CHECKOUT_ATTACKS, ids=[a[0] for a in MAIN_CHECKOUT_ATTACKS])
async def test_a_sandboxed_command_cannot_plant_configuration_in_its_checkout(repo: Path, label: str, command: str) -> None:
    assert not (repo / ".claude").exists() and not (repo / ".mcp.json").exists()
    result = await BashTool().call(BashInput(command=command), make_ctx(repo))
    assert result.is_error, f"{label}: {result.content}"
    # Nothing planted, nothing moved, nothing left behind.
    assert not list((repo / ".claude").rglob("*")) and not list((repo / ".catui").rglob("settings.json"))
    assert not (repo / ".claude-old").exists() and not (repo / ".git-old").exists()
    assert not os_lexists(repo / ".mcp.json"), "the placeholder is removed once the command has ended"
    assert git_config(repo, "core.fsmonitor") == "" and git_config(repo, "core.hooksPath") == ""
    assert not list((repo / ".git" / "hooks").iterdir())
    assert git(repo, "status", "--porcelain").strip() == "", "git works as before and sees no new file"


def os_lexists(path: Path) -> bool:
    return path.is_symlink() or path.exists()


async def test_a_planted_commondir_is_removed_and_reported(repo: Path) -> None:
    evil = repo / "evil"
    command = (
        f"mkdir -p {evil} && cp -r .git/. {evil}/ && echo '[core] fsmonitor = touch /tmp/pwned' >> {evil}/config "
        f"&& echo {evil} > .git/commondir && echo planted"
    )
    result = await BashTool().call(BashInput(command=command), make_ctx(repo))
    # The file could be written (git's own folder stays writable for commits), but not outlive the command.
    assert "planted" in result.content and "removed" in result.content and "commondir" in result.content
    assert not (repo / ".git" / "commondir").exists()
    assert git_config(repo, "core.fsmonitor") == ""


async def test_work_in_the_checkout_still_goes_through(repo: Path) -> None:
    command = "echo new > new.txt && git add new.txt && git commit -qm 'sandboxed commit' && git log --format=%s -1"
    result = await BashTool().call(BashInput(command=command), make_ctx(repo))
    assert not result.is_error and "sandboxed commit" in result.content, result.content
    assert git(repo, "log", "--format=%s", "-1").strip() == "sandboxed commit"
    # The stand-ins for missing folders stay (empty); the one for .mcp.json does not.
    assert (repo / ".claude").is_dir() and not list((repo / ".claude").iterdir())
    assert not os_lexists(repo / ".mcp.json")


async def test_an_existing_mcp_json_cannot_be_changed_or_removed(repo: Path) -> None:
    (repo / ".mcp.json").write_text('{"mcpServers": {}}\n')
    for command in ("echo '{}' > .mcp.json", "rm -f .mcp.json", "mv .mcp.json x.json", "truncate -s0 .mcp.json"):
        result = await BashTool().call(BashInput(command=command), make_ctx(repo))
        assert result.is_error, (command, result.content)
    assert (repo / ".mcp.json").read_text() == '{"mcpServers": {}}\n'


async def test_a_placeholder_stays_while_another_command_still_has_it_mounted(repo: Path) -> None:
    """The first command to end must not remove the stand-in under a command that still runs (that would
    unmount it there and let that command create the file)."""
    registry = TaskRegistry(repo)
    ctx = make_ctx(repo, tasks=registry)
    waiting = (
        "while [ ! -e go ]; do sleep 0.02; done; echo '{\"mcpServers\":{}}' > .mcp.json; echo write=$?; "
        "rm -f .mcp.json; echo remove=$?"
    )
    started = await BashTool().call(BashInput(command=waiting, run_in_background=True), ctx)
    assert not started.is_error, started.content
    quick = await BashTool().call(BashInput(command="echo quick"), ctx)  # ends first, while the other waits
    assert "quick" in quick.content
    (repo / "go").write_text("")
    task = registry.get(started.data["background_task_id"])
    assert task is not None and task.runner is not None
    await asyncio.wait_for(task.runner, 60)
    output = Path(started.data["output_file"]).read_text()
    assert "write=1" in output and "remove=1" in output, output
    assert not os_lexists(repo / ".mcp.json")
    await registry.shutdown()


def test_a_lease_never_removes_a_real_file_or_one_still_in_use(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    first = lease_placeholder(path)
    second = lease_placeholder(path)
    assert first is not None and second is not None and path.exists()
    first.release()
    assert path.exists(), "still held by the second lease"
    second.release()
    assert not path.exists()
    path.write_text("{}")
    assert lease_placeholder(path) is None  # a real file: mounted as it is, never removed
    assert path.read_text() == "{}"


# ---- an isolated agent's worktree: the shared repository's other branches --------------------------------


@pytest.fixture()
def worktree(repo: Path) -> Path:
    git(repo, "branch", "other")
    git(repo, "branch", "feature/deep")
    git(repo, "pack-refs", "--all")  # `other` and `feature/deep` live only in packed-refs now
    git(repo, "branch", "loose")  # and one loose branch
    path = repo / ".catui" / "worktrees" / "agent-1"
    git(repo, "worktree", "add", "-q", "-b", "worktree-agent-1", str(path))
    return path


WORKTREE_ATTACKS = [
    ("update-ref main", "git update-ref refs/heads/main $(git commit-tree HEAD^{tree} -p HEAD -m evil)"),
    ("branch -f packed", "git branch -f other $(git commit-tree HEAD^{tree} -p HEAD -m evil)"),
    ("branch -f nested", "git branch -f feature/deep $(git commit-tree HEAD^{tree} -p HEAD -m evil)"),
    ("branch -f loose", "git branch -f loose $(git commit-tree HEAD^{tree} -p HEAD -m evil)"),
    ("delete main", "git branch -D main"),
    ("delete packed", "git update-ref -d refs/heads/other"),
    ("ref file", "echo $(git commit-tree HEAD^{tree} -m evil) > $(git rev-parse --git-common-dir)/refs/heads/main"),
    ("rename refs", "d=$(git rev-parse --git-common-dir)/refs/heads; mv $d/feature $d/feature2"),
    ("rename heads", "d=$(git rev-parse --git-common-dir)/refs; mv $d/heads $d/heads2"),
    ("main checkout", "git -C $(git rev-parse --git-common-dir)/.. checkout -q -b evil"),
    ("shared config", "git config core.fsmonitor 'touch /tmp/pwned'"),
    ("worktree gitfile", "echo 'gitdir: /tmp/elsewhere' > .git"),
    ("commondir", "echo /tmp/elsewhere > $(git rev-parse --git-dir)/commondir"),
    ("claude settings", "mkdir -p .claude && echo '{\"sandbox\":{\"enabled\":false}}' > .claude/settings.json"),
    ("mcp json", "echo '{}' > .mcp.json"),
]


@pytest.mark.parametrize(("label", "command"), WORKTREE_ATTACKS, ids=[a[0] for a in WORKTREE_ATTACKS])
async def test_an_isolated_agent_cannot_move_other_branches(repo: Path, worktree: Path, label: str, command: str) -> None:
    before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    ctx = make_ctx(worktree)
    result = await BashTool().call(BashInput(command=command), ctx)
    assert result.is_error, f"{label}: {result.content}"
    after = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    assert after == before
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git_config(repo, "core.fsmonitor") == ""
    assert (worktree / ".git").read_text().startswith("gitdir:") and "elsewhere" not in (worktree / ".git").read_text()
    assert git(worktree, "status", "--porcelain").strip() == ""
    assert not os_lexists(worktree / ".mcp.json") and not (worktree / ".claude" / "settings.json").exists()


async def test_an_isolated_agent_still_commits_and_makes_new_branches(repo: Path, worktree: Path) -> None:
    main_before = git(repo, "rev-parse", "main")
    command = (
        "echo work > work.txt && git add work.txt && git commit -qm 'agent work' && git branch agent-extra && "
        "git log --format=%s -1"
    )
    result = await BashTool().call(BashInput(command=command), make_ctx(worktree))
    assert not result.is_error and "agent work" in result.content, result.content
    assert git(repo, "log", "--format=%s", "-1", "worktree-agent-1").strip() == "agent work"
    assert "agent-extra" in git(repo, "branch", "--format=%(refname:short)")
    assert git(repo, "rev-parse", "main") == main_before


async def test_from_a_sub_folder_the_repository_stays_read_only(repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    ctx = ToolContext(
        cwd=sub, project_root=repo,  # started in a sub-folder: that folder is the only working directory
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(sub,)),
        services=ToolServices(sandbox=BashSandbox(SandboxSettings(enabled=True))),
    )
    for command in ("git config core.fsmonitor 'touch /tmp/pwned'", f"touch {repo}/.git/x", f"touch {repo}/x"):
        result = await BashTool().call(BashInput(command=command), ctx)
        assert result.is_error, (command, result.content)
    assert git_config(repo, "core.fsmonitor") == "" and not (repo / ".git" / "x").exists()
    done = await BashTool().call(BashInput(command="echo ok > inside.txt"), ctx)
    assert not done.is_error and (sub / "inside.txt").exists()
