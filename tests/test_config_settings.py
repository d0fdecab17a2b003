"""Settings levels, precedence, merging and the errors a broken settings file produces."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from catui.config.settings import Settings, load_settings, merge_settings, settings_env
from catui.errors import ConfigurationError
from tests.support.user_home import home_fixture  # noqa: F401 - provides the home fixture


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg" / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


LEVEL_FILES = [
    ("home", ".claude/settings.json", "userSettings"),
    ("home", ".catui/settings.json", "userSettings"),
    ("repo", ".claude/settings.json", "projectSettings"),
    ("repo", ".catui/settings.json", "projectSettings"),
    ("repo", ".claude/settings.local.json", "localSettings"),
    ("repo", ".catui/settings.local.json", "localSettings"),
]


def test_each_level_overrides_the_one_before(home: Path, repo: Path) -> None:
    roots = {"home": home, "repo": repo}
    # Write the files from the highest level down; after each removal the next one must win.
    paths = []
    for index, (root, rel, _source) in enumerate(LEVEL_FILES):
        paths.append(write(roots[root] / rel, {"model": f"m{index}", f"only{index}": True}))
    extra = write(repo / "flags.json", {"model": "flag"})
    cwd = repo / "pkg" / "sub"
    settings = load_settings(cwd, extra=str(extra))
    assert settings.get("model") == "flag"
    assert all(settings.get(f"only{i}") for i in range(len(LEVEL_FILES)))
    assert [f.source for f in settings.files] == [s for _r, _p, s in LEVEL_FILES] + ["flagSettings"]
    assert settings.project_root == repo.resolve()
    for index in range(len(LEVEL_FILES) - 1, 0, -1):
        assert load_settings(cwd).get("model") == f"m{index}"
        paths[index].unlink()
    assert load_settings(cwd).get("model") == "m0"


def test_catui_file_beats_claude_file_at_the_same_level(home: Path, repo: Path) -> None:
    write(repo / ".claude" / "settings.json", {"model": "claude-level", "permissions": {"defaultMode": "plan"}})
    write(repo / ".catui" / "settings.json", {"model": "catui-level"})
    settings = load_settings(repo)
    assert settings.get("model") == "catui-level"
    assert settings.get("permissions.defaultMode") == "plan"  # deep merge keeps the other keys


def test_inline_json_settings_and_sources(home: Path, repo: Path) -> None:
    write(home / ".catui" / "settings.json", {"model": "user"})
    write(repo / ".catui" / "settings.json", {"model": "project"})
    assert load_settings(repo, sources=("user",)).get("model") == "user"
    assert load_settings(repo, sources=()).get("model") is None
    settings = load_settings(repo, extra='{"model": "inline"}')
    assert settings.get("model") == "inline"
    assert settings.files[-1].path is None and settings.files[-1].source == "flagSettings"
    with pytest.raises(ConfigurationError, match="unknown setting source 'team'"):
        load_settings(repo, sources=("team",))


def test_home_parameter_replaces_the_home_folder(tmp_path: Path, home: Path, repo: Path) -> None:
    other = tmp_path / "other-home"
    write(other / ".claude" / "settings.json", {"model": "other"})
    write(home / ".claude" / "settings.json", {"model": "real"})
    assert load_settings(repo, home=other).get("model") == "other"


def test_permission_lists_concatenate_with_sources(home: Path, repo: Path) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}})
    write(repo / ".catui" / "settings.json", {"permissions": {"allow": ["Bash(npm test:*)"]}})
    write(repo / ".catui" / "settings.local.json", {"permissions": {"allow": ["Edit(src/**)"], "ask": ["WebFetch"]}})
    settings = load_settings(repo)
    assert settings.get("permissions.allow") == ["Read", "Bash(npm test:*)", "Edit(src/**)"]
    entries = [(e.text, e.behavior, e.source) for e in settings.rule_entries()]
    assert entries == [
        ("Read", "allow", "userSettings"),
        ("Bash(rm:*)", "deny", "userSettings"),
        ("Bash(npm test:*)", "allow", "projectSettings"),
        ("Edit(src/**)", "allow", "localSettings"),
        ("WebFetch", "ask", "localSettings"),
    ]


def test_other_lists_are_replaced_and_objects_merged() -> None:
    merged = merge_settings({"a": {"x": 1, "l": [1]}, "b": [1, 2]}, {"a": {"y": 2, "l": [3]}, "b": [9]})
    assert merged == {"a": {"x": 1, "y": 2, "l": [3]}, "b": [9]}


def test_invalid_json_names_file_line_and_column(home: Path, repo: Path) -> None:
    bad = write(repo / ".catui" / "settings.json", '{\n  "model": "x",\n  "permissions": {,}\n}\n')
    with pytest.raises(ConfigurationError) as info:
        load_settings(repo)
    message = str(info.value)
    assert str(bad) in message
    assert "line 3" in message and "column 19" in message
    assert "Expecting property name" in message


def test_non_object_top_level_is_an_error(home: Path, repo: Path) -> None:
    bad = write(home / ".claude" / "settings.json", '["Read"]')
    with pytest.raises(ConfigurationError, match="must be a JSON object") as info:
        load_settings(repo)
    assert str(bad) in str(info.value) and "an array" in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file_is_an_error(home: Path, repo: Path) -> None:
    bad = write(repo / ".catui" / "settings.local.json", "{}")
    bad.chmod(0)
    try:
        with pytest.raises(ConfigurationError, match="cannot read settings file") as info:
            load_settings(repo)
        assert str(bad) in str(info.value)
    finally:
        bad.chmod(0o600)


def test_folder_in_place_of_a_file_is_an_error(home: Path, repo: Path) -> None:
    (repo / ".catui" / "settings.json").mkdir(parents=True)
    with pytest.raises(ConfigurationError, match="is a folder"):
        load_settings(repo)


def test_empty_file_counts_as_empty_object(home: Path, repo: Path) -> None:
    write(repo / ".catui" / "settings.json", "  \n")
    assert load_settings(repo).merged == {}


def test_settings_argument_errors(home: Path, repo: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_settings(repo, extra="missing.json")
    with pytest.raises(ConfigurationError, match=r"--settings \(inline JSON\), line 1, column"):
        load_settings(repo, extra='{"model": }')


def test_env_object_and_type_warnings(home: Path, repo: Path) -> None:
    write(repo / ".claude" / "settings.json", {"env": {"A": "1", "B": 2, "C": True, "D": ["x"]}})
    write(repo / ".catui" / "settings.json", {"env": {"A": "catui"}, "permissions": {"allow": "Read"}})
    settings = load_settings(repo)
    assert settings_env(settings) == {"A": "catui", "B": "2", "C": "true"}
    assert any("env.D must be a string" in w for w in settings.warnings)
    assert any("'permissions.allow' must be a list" in w for w in settings.warnings)


def test_settings_from_dict() -> None:
    settings = Settings.from_dict({"model": "x", "env": {"K": "v"}})
    assert settings.get("model") == "x" and settings_env(settings) == {"K": "v"}
    assert settings.get("missing", 5) == 5 and settings.get("model.sub") is None
