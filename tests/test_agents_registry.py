"""The registry: sources, precedence, reload, plugins, --agents JSON and SDK agents."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from catui.agents.definition import AgentDefinition
from catui.agents.plugins import load_plugin
from catui.agents.registry import load_agent_registry

BUILT_IN = ["general-purpose", "statusline-setup", "Explore", "Plan"]


def write_agent(
    folder: Path, name: str, *, body: str = "", extra: str = "", filename: str | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{filename or name}.md"
    path.write_text(f"---\nname: {name}\ndescription: {name} agent\n{extra}---\n{body or name + ' prompt'}\n")
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CATUI_HOME", str(home / ".catui"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CATUI_GUIDE_AGENT", raising=False)
    return {"home": home, "project": project}


def make_plugin(root: Path, name: str, manifest_extra: dict[str, object] | None = None) -> Path:
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, **(manifest_extra or {})}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    return root


def test_built_ins_only(env: dict[str, Path]) -> None:
    registry = load_agent_registry(env["project"])
    assert registry.names() == BUILT_IN
    assert registry.failed_files == [] and registry.warnings == []
    assert registry.get("claude-code-guide") is None  # not interactive


def test_guide_is_active_interactively_and_resolves_its_alias(env: dict[str, Path]) -> None:
    registry = load_agent_registry(env["project"], interactive=True)
    assert registry.names() == [*BUILT_IN, "catui-guide"]
    guide = registry.get("claude-code-guide")
    assert guide is not None and guide is registry.get("catui-guide")


def test_precedence_builtin_plugin_user_project_flag(env: dict[str, Path], tmp_path: Path) -> None:
    home, project = env["home"], env["project"]
    plugin = make_plugin(
        tmp_path / "plug", "plug", {"agents": {"shared": {"description": "p", "prompt": "plugin"}}}
    )
    write_agent(home / ".claude" / "agents", "shared", body="user-claude")
    write_agent(home / ".catui" / "agents", "shared", body="user-catui")
    write_agent(project / ".claude" / "agents", "shared", body="project-claude")
    write_agent(project / ".catui" / "agents", "shared", body="project-catui")
    write_agent(project / ".claude" / "agents", "Explore", body="my explore")
    write_agent(home / ".catui" / "agents", "only-user")

    registry = load_agent_registry(project, plugin_dirs=[str(plugin)])
    # The plugin's agent is namespaced, so it does not collide with "shared".
    assert registry.get("plug:shared") is not None
    assert registry.get("shared").get_system_prompt() == "project-catui"  # type: ignore[union-attr]
    # A custom Explore overrides the built-in but keeps its place in the order (map semantics).
    assert registry.names()[:4] == BUILT_IN
    assert registry.get("Explore").source == "projectSettings"  # type: ignore[union-attr]
    shared = [a for a in registry.all if a.agent_type == "shared"]
    assert [a.get_system_prompt() for a in shared] == [
        "user-claude",
        "user-catui",
        "project-claude",
        "project-catui",
    ]
    assert all(registry.shadowed_by(a) is registry.get("shared") for a in shared[:-1])

    flagged = load_agent_registry(project, flag_agents={"shared": {"description": "f", "prompt": "flag"}})
    assert flagged.get("shared").get_system_prompt() == "flag"  # type: ignore[union-attr]
    assert flagged.get("shared").source == "flagSettings"  # type: ignore[union-attr]
    assert flagged.get("only-user").source == "userSettings"  # type: ignore[union-attr]


def test_nearer_project_folder_wins(env: dict[str, Path]) -> None:
    project = env["project"]
    sub = project / "pkg" / "inner"
    sub.mkdir(parents=True)
    write_agent(project / ".claude" / "agents", "x", body="root")
    write_agent(sub / ".claude" / "agents", "x", body="nested")
    registry = load_agent_registry(sub)
    assert registry.get("x").get_system_prompt() == "nested"  # type: ignore[union-attr]


def test_order_is_builtins_then_custom_in_load_order(env: dict[str, Path], tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "p", "p")
    write_agent(plugin / "agents", "pa")
    write_agent(env["home"] / ".claude" / "agents", "u1")
    write_agent(env["project"] / ".claude" / "agents", "b-proj")
    write_agent(env["project"] / ".claude" / "agents", "a-proj")
    registry = load_agent_registry(
        env["project"], plugin_dirs=[str(plugin)], flag_agents={"f": {"description": "f", "prompt": "f"}}
    )
    assert registry.names() == [*BUILT_IN, "p:pa", "u1", "a-proj", "b-proj", "f"]


def test_include_flags_skip_sources(env: dict[str, Path]) -> None:
    write_agent(env["home"] / ".claude" / "agents", "u")
    write_agent(env["project"] / ".claude" / "agents", "p")
    assert "u" not in load_agent_registry(env["project"], include_user=False).names()
    assert "p" not in load_agent_registry(env["project"], include_project=False).names()


def test_home_parameter_overrides_the_environment(env: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    write_agent(other / ".catui" / "agents", "elsewhere")
    assert "elsewhere" in load_agent_registry(env["project"], home=other).names()
    assert "elsewhere" not in load_agent_registry(env["project"]).names()


# -- reload ----------------------------------------------------------------------------------------


def test_reload_after_changes_on_disk(env: dict[str, Path]) -> None:
    folder = env["project"] / ".claude" / "agents"
    path = write_agent(folder, "a", body="v1")
    registry = load_agent_registry(env["project"])
    assert registry.version == 0
    assert registry.reload_if_changed() is False and registry.version == 0

    path.write_text(path.read_text().replace("v1", "version two"))
    assert registry.reload_if_changed() is True
    assert registry.version == 1 and registry.get("a").get_system_prompt() == "version two"  # type: ignore[union-attr]
    assert registry.reload_if_changed() is False

    write_agent(folder / "nested", "b")  # a new sub-folder and file
    assert registry.reload_if_changed() is True and registry.get("b") is not None

    (folder / "nested" / "b.md").unlink()
    assert registry.reload_if_changed() is True and registry.get("b") is None
    assert registry.version == 3


def test_reload_notices_a_folder_created_later(env: dict[str, Path]) -> None:
    registry = load_agent_registry(env["project"])
    write_agent(env["home"] / ".catui" / "agents", "late")
    assert registry.reload_if_changed() is True and registry.get("late") is not None


def test_reload_notices_plugin_manifest_changes(env: dict[str, Path], tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "p", "first")
    write_agent(plugin / "agents", "x")
    registry = load_agent_registry(env["project"], plugin_dirs=[str(plugin)])
    assert registry.get("first:x") is not None
    manifest = plugin / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({"name": "renamed"}))
    os.utime(manifest, ns=(1, 1))  # make sure the change is visible even on coarse clocks
    assert registry.reload_if_changed() is True
    assert registry.get("renamed:x") is not None and registry.get("first:x") is None


# -- plugins ---------------------------------------------------------------------------------------


def test_plugin_namespacing_subfolders_and_lax_loading(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "plug", "tools-plugin")
    write_agent(plugin / "agents", "reviewer")
    write_agent(plugin / "agents" / "team" / "lead", "boss")
    (plugin / "agents" / "no-header.md").write_text("Just a prompt.\n")
    (plugin / "agents" / "no-description.md").write_text("---\nname: nd\n---\nPrompt.\n")
    result = load_plugin(plugin)
    types = {a.agent_type: a for a in result.agents}
    assert set(types) == {
        "tools-plugin:reviewer",
        "tools-plugin:team:lead:boss",
        "tools-plugin:no-header",
        "tools-plugin:nd",
    }
    assert types["tools-plugin:no-header"].description == "Agent from tools-plugin plugin"
    assert types["tools-plugin:nd"].description == "Agent from tools-plugin plugin"
    assert all(a.source == "plugin" and a.plugin_name == "tools-plugin" for a in result.agents)


def test_plugin_safety_stripping(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "plug", "p")
    extra = (
        "permissionMode: bypassPermissions\nmcpServers:\n  - evil\nhooks:\n  PreToolUse: []\n"
        "tools: Read\nmodel: haiku\n"
    )
    write_agent(plugin / "agents", "risky", extra=extra, body="Root is ${CLAUDE_PLUGIN_ROOT}.")
    result = load_plugin(plugin)
    agent = result.agents[0]
    assert agent.permission_mode is None and agent.mcp_servers is None and agent.hooks is None
    assert agent.tools == ["Read"] and agent.model == "haiku"
    assert agent.get_system_prompt() == f"Root is {plugin}."
    ignored = [w.message for w in result.warnings if "ignored in plugin agents" in w.message]
    assert len(ignored) == 3


def test_plugin_manifest_agent_shapes(tmp_path: Path) -> None:
    as_list = make_plugin(tmp_path / "list", "l", {"agents": ["./x.md", "./more"]})
    write_agent(as_list, "x")
    write_agent(as_list / "more", "y")
    assert {a.agent_type for a in load_plugin(as_list).agents} == {"l:x", "l:y"}

    as_dir = make_plugin(tmp_path / "dir", "d", {"agents": "./custom/"})
    write_agent(as_dir / "custom", "z")
    write_agent(as_dir / "agents", "default-too")
    assert {a.agent_type for a in load_plugin(as_dir).agents} == {"d:z", "d:default-too"}

    listed_twice = make_plugin(tmp_path / "twice", "t", {"agents": ["./agents/a.md"]})
    write_agent(listed_twice / "agents", "a")
    assert [a.agent_type for a in load_plugin(listed_twice).agents] == ["t:a"]

    inline = make_plugin(
        tmp_path / "inline",
        "i",
        {
            "agents": {
                "helper": {"description": "h", "prompt": "p", "tools": ["Read"], "permissionMode": "plan"}
            }
        },
    )
    [agent] = load_plugin(inline).agents
    assert agent.agent_type == "i:helper" and agent.tools == ["Read"] and agent.permission_mode is None


def test_plugin_problems_are_reported(tmp_path: Path, env: dict[str, Path]) -> None:
    bad_json = tmp_path / "bad"
    (bad_json / ".claude-plugin").mkdir(parents=True)
    (bad_json / ".claude-plugin" / "plugin.json").write_text("{nope")
    missing_file = make_plugin(tmp_path / "missing", "m", {"agents": ["./gone.md"]})
    escaping = make_plugin(tmp_path / "escape", "e", {"agents": ["../../etc"]})
    registry = load_agent_registry(
        env["project"],
        plugin_dirs=[str(bad_json), str(missing_file), str(escaping), str(tmp_path / "absent")],
    )
    errors = " | ".join(f"{f.path}: {f.error}" for f in registry.failed_files)
    assert "not valid JSON" in errors and "line 1" in errors
    assert "gone.md" in errors and "does not exist" in errors
    assert "plugin folder not found" in errors
    assert any("outside the plugin folder" in w.message for w in registry.warnings)
    assert registry.names() == BUILT_IN


# -- --agents JSON and SDK agents ------------------------------------------------------------------


def test_flag_agents_json(env: dict[str, Path]) -> None:
    flag = json.loads(
        '{"reviewer": {"description": "Reviews", "prompt": "You review.", "tools": ["Read", "Grep"],'
        ' "disallowedTools": ["Write"], "model": "opus", "maxTurns": 3, "permissionMode": "plan"},'
        ' "broken": {"description": "no prompt"}, "odd": {"description": "d", "prompt": "p", "colour": "red"},'
        ' "notobj": 5}'
    )
    registry = load_agent_registry(env["project"], flag_agents=flag)
    agent = registry.get("reviewer")
    assert agent is not None and agent.source == "flagSettings"
    assert (agent.tools, agent.disallowed_tools, agent.model, agent.max_turns, agent.permission_mode) == (
        ["Read", "Grep"],
        ["Write"],
        "opus",
        3,
        "plan",
    )
    errors = [f.error for f in registry.failed_files if f.path == "--agents"]
    assert any("'broken'" in e and "'prompt'" in e for e in errors)
    assert any("'notobj'" in e for e in errors)
    assert any("colour" in w.message for w in registry.warnings)
    assert registry.origin(agent) == "--agents"


def test_sdk_agents_accept_definitions_and_dicts(env: dict[str, Path]) -> None:
    sdk = {
        "sdk-def": AgentDefinition(
            description="From SDK", prompt="p", tools=["Read"], disallowedTools=["Bash"]
        ),
        "sdk-dict": {"description": "Dict", "prompt": "p", "disallowed_tools": ["Bash"], "max_turns": 2},
    }
    registry = load_agent_registry(
        env["project"], sdk_agents=sdk, flag_agents={"sdk-def": {"description": "f", "prompt": "flag"}}
    )
    agent = registry.get("sdk-def")
    assert agent is not None and agent.agent_type == "sdk-def" and agent.source == "sdk"
    assert agent.get_system_prompt() == "p"  # SDK wins over the flag for the same name
    as_dict = registry.get("sdk-dict")
    assert as_dict is not None and as_dict.disallowed_tools == ["Bash"] and as_dict.max_turns == 2


def test_json_shape_is_stable(env: dict[str, Path]) -> None:
    write_agent(env["project"] / ".claude" / "agents", "Plan", extra="model: opus\n")
    (env["project"] / ".claude" / "agents" / "bad.md").write_text("---\nname: bad\n---\n")
    data = load_agent_registry(env["project"]).to_json()
    assert set(data) == {"active", "all", "failed_files", "warnings"}
    assert [a["name"] for a in data["active"]] == BUILT_IN
    plan_entries = [a for a in data["all"] if a["name"] == "Plan"]
    assert [a["active"] for a in plan_entries] == [False, True]
    assert plan_entries[0]["shadowedBy"].endswith("Plan.md")
    assert set(data["active"][0]) == {
        "name",
        "source",
        "model",
        "tools",
        "disallowedTools",
        "description",
        "path",
        "active",
        "shadowedBy",
    }
    assert (
        data["failed_files"][0]["path"].endswith("bad.md")
        and "description" in data["failed_files"][0]["error"]
    )
    json.dumps(data)  # serialisable


def test_reload_reparses_only_changed_files(env: dict[str, Path]) -> None:
    folder = env["project"] / ".claude" / "agents"
    write_agent(folder, "stable")
    changing = write_agent(folder, "changing", body="v1")
    registry = load_agent_registry(env["project"])
    stable_before = registry.get("stable")
    changing.write_text(changing.read_text().replace("v1", "v2, longer"))
    assert registry.reload_if_changed() is True
    assert registry.get("stable") is stable_before  # reused, not parsed again
    assert registry.get("changing").get_system_prompt() == "v2, longer"  # type: ignore[union-attr]


def test_settings_change_reloads_plugin_folders(env: dict[str, Path], tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "p", "p")
    write_agent(plugin / "agents", "x")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"plugins": []}))

    def plugin_dirs() -> list[str]:
        return [entry["path"] for entry in json.loads(settings.read_text())["plugins"]]

    registry = load_agent_registry(env["project"], settings_plugin_dirs=plugin_dirs, watch_files=[settings])
    assert registry.get("p:x") is None
    settings.write_text(json.dumps({"plugins": [{"path": str(plugin)}]}))
    os.utime(settings, ns=(1, 1))
    assert registry.reload_if_changed() is True and registry.get("p:x") is not None

    settings.write_text("{broken")
    os.utime(settings, ns=(2, 2))
    assert registry.reload_if_changed() is True
    assert registry.get("p:x") is None and any("settings" in w.message for w in registry.warnings)


def test_origins_name_the_defining_file(env: dict[str, Path], tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "p", "p", {"agents": {"inline": {"description": "i", "prompt": "p"}}})
    file_agent = write_agent(plugin / "agents", "file")
    project_agent = write_agent(env["project"] / ".claude" / "agents", "proj")
    registry = load_agent_registry(
        env["project"], plugin_dirs=[str(plugin)], sdk_agents={"s": {"description": "s", "prompt": "p"}}
    )
    assert registry.origin(registry.get("p:file")) == str(file_agent)  # type: ignore[arg-type]
    assert registry.origin(registry.get("p:inline")).endswith("plugin.json")  # type: ignore[arg-type]
    assert registry.origin(registry.get("proj")) == str(project_agent)  # type: ignore[arg-type]
    assert registry.origin(registry.get("s")) == "agents= (SDK options)"  # type: ignore[arg-type]
    assert registry.origin(registry.get("Plan")) == "built-in"  # type: ignore[arg-type]


def test_empty_plugin_agent_file_is_reported(tmp_path: Path) -> None:
    """Deliberate difference: Claude Code would register 'p:empty' with an empty prompt."""
    plugin = make_plugin(tmp_path / "p", "p")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "empty.md").write_text("")
    result = load_plugin(plugin)
    assert result.agents == []
    assert [Path(f.path).name for f in result.failed_files] == ["empty.md"]
