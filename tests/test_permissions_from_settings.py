"""The PermissionContext built from settings files and command-line lists."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from catui.config.settings import load_settings
from catui.errors import ConfigurationError
from catui.permissions.context import PermissionRequest
from catui.permissions.from_settings import permission_context_from_settings
from tests.support.user_home import home_fixture  # noqa: F401 - provides the home fixture


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo.resolve()


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def bash(command: str) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command})


def test_rules_keep_their_sources_and_deny_wins_across_levels(home: Path, repo: Path) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(npm publish:*)"]}})
    write(repo / ".catui" / "settings.json", {"permissions": {"allow": ["Bash(npm:*)"]}})
    write(repo / ".catui" / "settings.local.json", {"permissions": {"ask": ["Bash(npm install:*)"]}})
    settings = load_settings(repo)
    ctx = permission_context_from_settings(
        settings, cwd=repo, allowed_tools=["Read,Grep"], disallowed_tools="WebFetch Bash(rm:*)"
    )
    sources = {(str(r), r.behavior, r.source) for r in ctx.rules}
    assert ("Bash(npm publish:*)", "deny", "userSettings") in sources
    assert ("Bash(npm:*)", "allow", "projectSettings") in sources
    assert ("Bash(npm install:*)", "ask", "localSettings") in sources
    assert {("Read", "allow", "cliArg"), ("Grep", "allow", "cliArg"), ("WebFetch", "deny", "cliArg"),
            ("Bash(rm:*)", "deny", "cliArg")} <= sources
    assert ctx.decide(bash("npm test")).behavior == "allow"
    assert ctx.decide(bash("npm install left-pad")).behavior == "ask"
    denied = ctx.decide(bash("npm publish"))
    assert denied.behavior == "deny"
    assert str(home / ".claude" / "settings.json") in denied.reason
    assert ctx.decide(bash("rm -rf x")).behavior == "deny"


def test_settings_flag_rules_have_flag_source(home: Path, repo: Path) -> None:
    settings = load_settings(repo, extra='{"permissions": {"deny": ["Edit"]}}')
    ctx = permission_context_from_settings(settings, cwd=repo)
    assert [(r.tool_name, r.source) for r in ctx.rules] == [("Edit", "flagSettings")]


def test_malformed_rule_is_reported_with_file_and_ignored(home: Path, repo: Path) -> None:
    settings_file = write(
        repo / ".catui" / "settings.json",
        {"permissions": {"allow": ["Bash(git push", "Read", 7], "deny": ["Edit(src/**"]}},
    )
    settings = load_settings(repo)
    ctx = permission_context_from_settings(settings, cwd=repo, allowed_tools=["Bash(ls"])
    assert [str(r) for r in ctx.rules] == ["Read"]
    joined = "\n".join(settings.warnings)
    assert f"{settings_file}: ignoring permissions.allow entry 'Bash(git push'" in joined
    assert "unbalanced parentheses" in joined
    assert "ignoring permissions.allow entry 7" in joined
    assert "Edit(src/**" in joined and "NOT in effect" in joined
    assert "--allowedTools: ignoring 'Bash(ls'" in joined
    # The broken allow rule did not turn into a broader one: git push is still asked.
    assert ctx.decide(bash("git push")).behavior == "ask"


def test_mode_from_settings_and_cli(home: Path, repo: Path) -> None:
    write(repo / ".catui" / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    settings = load_settings(repo)
    assert permission_context_from_settings(settings, cwd=repo).mode == "acceptEdits"
    assert permission_context_from_settings(settings, cwd=repo, mode="plan").mode == "plan"
    with pytest.raises(ConfigurationError, match="unknown permission mode 'yolo'"):
        permission_context_from_settings(settings, cwd=repo, mode="yolo")


def test_bad_default_mode_is_a_warning(home: Path, repo: Path) -> None:
    path = write(repo / ".claude" / "settings.json", {"permissions": {"defaultMode": "sometimes"}})
    settings = load_settings(repo)
    assert permission_context_from_settings(settings, cwd=repo).mode == "default"
    assert any(str(path) in w and "sometimes" in w for w in settings.warnings)


def test_bypass_can_be_disabled_by_settings(home: Path, repo: Path) -> None:
    write(repo / ".catui" / "settings.json", {"permissions": {"disableBypassPermissionsMode": "disable"}})
    settings = load_settings(repo)
    with pytest.raises(ConfigurationError, match="disabled"):
        permission_context_from_settings(settings, cwd=repo, mode="bypassPermissions")


def test_additional_directories(home: Path, repo: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    extra = tmp_path / "extra"
    extra.mkdir()
    write(repo / ".catui" / "settings.json", {"permissions": {"additionalDirectories": [str(shared), "../nope"]}})
    settings = load_settings(repo)
    ctx = permission_context_from_settings(settings, cwd=repo, add_dirs=[str(extra)])
    assert ctx.working_directories == (repo, shared.resolve(), extra.resolve())
    assert any("nope" in w and "no such folder" in w for w in settings.warnings)
    inside_shared = PermissionRequest("Read", {}, read_only=True, file_path=shared / "a.txt")
    assert ctx.decide(inside_shared).behavior == "allow"
    outside = PermissionRequest("Read", {}, read_only=True, file_path=tmp_path / "a.txt")
    assert ctx.decide(outside).behavior == "ask"


def test_slash_rule_in_project_settings_is_relative_to_the_project(home: Path, repo: Path) -> None:
    write(repo / ".catui" / "settings.json", {"permissions": {"allow": ["Edit(/src/**)"]}})
    sub = repo / "src"
    ctx = permission_context_from_settings(load_settings(sub), cwd=sub)
    edit = PermissionRequest("Edit", {}, is_edit=True, file_path=repo / "src" / "a.py")
    assert ctx.decide(edit).behavior == "allow"


def test_no_settings_at_all() -> None:
    ctx = permission_context_from_settings(None, cwd=Path("/tmp"), allowed_tools=None)
    assert ctx.rules == () and ctx.mode == "default"
