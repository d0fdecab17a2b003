"""The sandbox reuses an agent's layout between commands only while its folders are unchanged (real bwrap)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catui.permissions.context import PermissionContext
from catui.sandbox.config import SandboxSettings
from catui.sandbox.policy import AgentFolders, BashSandbox
from catui.sandbox.probe import probe_bwrap
from catui.tools.base import ToolContext, ToolServices
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput
from tests.support.git_repos import isolate_git, make_repo

AVAILABILITY = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}")


def test_the_layout_is_reused_until_a_folder_it_depends_on_changes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sandbox = BashSandbox(SandboxSettings(enabled=True, deny_write=(project / "src" / "secret",)), home=tmp_path)
    folders = AgentFolders(project, project, (project,))
    scratch_a, scratch_b = tmp_path / "a", tmp_path / "b"
    scratch_a.mkdir()
    scratch_b.mkdir()
    first = sandbox.layout_for(folders, [scratch_a])
    second = sandbox.layout_for(folders, [scratch_b])
    # The folders' part is the same object; only the per-command scratch folder differs.
    assert first.mounts[:-1] == second.mounts[:-1] and first.mounts[-1].path == scratch_a.resolve()
    assert second.mounts[-1].path == scratch_b.resolve() and second.mounts[-1].writable
    # .claude did not exist: it was created empty, to be mounted read-only. Removed (outside the sandbox), the
    # root's mtime changes: the layout is rebuilt and creates it again.
    assert any(m.path == (project / ".claude").resolve() and not m.writable for m in first.mounts)
    (project / ".claude").rmdir()
    third = sandbox.layout_for(folders)
    assert third is not first and (project / ".claude").is_dir()
    assert any(m.path == (project / ".claude").resolve() and not m.writable for m in third.mounts)
    (project / "src").mkdir()
    (project / "src" / "secret").mkdir()  # a denyWrite path that appears later is protected from then on
    fourth = sandbox.layout_for(folders)
    assert any(m.path == (project / "src" / "secret").resolve() and not m.writable for m in fourth.mounts)


@needs_bwrap
async def test_a_command_cannot_loosen_the_next_commands_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    ctx = ToolContext(
        cwd=repo, project_root=repo,
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(repo,)),
        services=ToolServices(sandbox=BashSandbox(SandboxSettings(enabled=True))),
    )
    shutil.rmtree(repo / ".git" / "hooks", ignore_errors=True)  # no hooks folder yet
    tool = BashTool()
    made = await tool.call(BashInput(command="rmdir .claude; mkdir -p .claude && echo made"), ctx)
    assert "Device or resource busy" in made.content, made.content  # a read-only mount point, not a folder
    settings = await tool.call(BashInput(command="echo '{}' > .claude/settings.json"), ctx)
    assert settings.is_error and "Read-only file system" in settings.content, settings.content
    assert not (repo / ".claude" / "settings.json").exists()
    # Nor plant a git hook (git runs hooks outside the sandbox), even where the repository had no hooks folder.
    hook = await tool.call(BashInput(command="mkdir -p .git/hooks; echo 'curl evil' > .git/hooks/pre-commit"), ctx)
    assert hook.is_error and not (repo / ".git" / "hooks" / "pre-commit").exists(), hook.content
