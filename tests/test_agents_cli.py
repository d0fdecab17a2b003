"""`catui agents` run as a real subprocess with HOME / CATUI_HOME in a temp folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, psql\nmodel: sonnet\n---\nYou review.\n"
    )
    (agents / "Plan.md").write_text("---\nname: Plan\ndescription: My planner\nmodel: opus\n---\nPlan it.\n")
    (agents / "broken.md").write_text("---\nname: broken\n---\nNo description.\n")
    user = home / ".catui" / "agents"
    user.mkdir(parents=True)
    (user / "helper.md").write_text("---\nname: helper\ndescription: Helps\n---\nHelp.\n")
    return {"home": home, "project": project}


def run(workspace: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(HOME=str(workspace["home"]), CATUI_HOME=str(workspace["home"] / ".catui"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CATUI_GUIDE_AGENT", None)
    return subprocess.run(
        [sys.executable, "-m", "catui", "agents", *args],
        cwd=workspace["project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_list_groups_models_shadowing_and_failures(workspace: dict[str, Path]) -> None:
    for args in ((), ("list",)):
        result = run(workspace, *args)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        assert out.splitlines()[0] == "7 active agents"
        assert out.index("Project agents:") < out.index("User agents:") < out.index("Built-in agents:")
        assert "  reviewer · sonnet" in out
        assert "  Plan · opus" in out
        assert "  helper · inherit" in out
        assert "  Explore · haiku" in out
        assert "  catui-guide · haiku" in out
        built_in_plan = [line for line in out.splitlines() if line.startswith("  Plan · inherit")]
        assert built_in_plan and "shadowed by project" in built_in_plan[0] and "Plan.md" in built_in_plan[0]
        assert "Failed to load (1):" in out and "broken.md" in out and "'description'" in out
        assert "warning" in out  # psql is not a known tool


def test_list_json(workspace: dict[str, Path]) -> None:
    result = run(workspace, "list", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [a["name"] for a in data["active"]] == [
        "general-purpose",
        "statusline-setup",
        "Explore",
        "Plan",
        "catui-guide",
        "helper",
        "reviewer",
    ]
    assert next(a for a in data["active"] if a["name"] == "Plan")["source"] == "projectSettings"
    assert [f["path"].endswith("broken.md") for f in data["failed_files"]] == [True]


def test_show(workspace: dict[str, Path]) -> None:
    result = run(workspace, "show", "reviewer")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Name:" in out and "reviewer" in out
    assert str(workspace["project"] / ".claude" / "agents" / "reviewer.md") in out
    assert "Model:" in out and "sonnet" in out
    final = next(line for line in out.splitlines() if line.startswith("Final tools:"))
    assert final.split(":", 1)[1].strip() == "Read, Grep"
    assert "psql" in next(line for line in out.splitlines() if line.startswith("Unavailable:"))
    assert "You review." in out

    explore = run(workspace, "show", "Explore").stdout
    final = next(line for line in explore.splitlines() if line.startswith("Final tools:"))
    for denied in ("Edit", "Write", "NotebookEdit", "Agent", "ExitPlanMode"):
        assert denied not in final.split(", ")
    assert "Read" in final

    guide = run(workspace, "show", "claude-code-guide")
    assert guide.returncode == 0 and "catui-guide" in guide.stdout and "helper: Helps" in guide.stdout


def test_a_memory_agents_final_tools_include_what_it_gets_at_run_time(workspace: dict[str, Path]) -> None:
    agents = workspace["project"] / ".claude" / "agents"
    (agents / "scribe.md").write_text("---\nname: scribe\ndescription: Keeps notes\ntools: Read, Grep\n"
                                      "memory: project\n---\nYou keep notes.\n")
    (agents / "archivist.md").write_text("---\nname: archivist\ndescription: Files notes\ntools: Grep\n"
                                         "disallowedTools: Edit\nmemory: user\n---\nYou file notes.\n")
    for name, expected in (("scribe", "Read, Grep, Write, Edit"), ("archivist", "Grep, Read, Write")):
        out = run(workspace, "show", name).stdout
        assert next(line for line in out.splitlines() if line.startswith("Final tools:")).split(":", 1)[1].strip() \
            == expected
    data = json.loads(run(workspace, "list", "--json").stdout)
    by_name = {a["name"]: a for a in data["active"]}
    assert by_name["scribe"]["finalTools"] == ["Read", "Grep", "Write", "Edit"]
    assert by_name["scribe"]["tools"] == ["Read", "Grep"]  # the declared list stays as written
    assert by_name["reviewer"]["finalTools"] == ["Read", "Grep"]
    assert all("finalTools" in a for a in data["all"])


def test_show_unknown_agent(workspace: dict[str, Path]) -> None:
    result = run(workspace, "show", "nope")
    assert result.returncode == 1
    assert "no active agent named 'nope'" in result.stderr and "general-purpose" in result.stderr
    assert "Traceback" not in result.stderr


def test_validate_paths_and_exit_status(workspace: dict[str, Path], tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("---\nname: good\ndescription: Good\n---\nBody.\n")
    ok = run(workspace, "validate", str(good))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "ok      good" in ok.stdout and "1 agent valid, 0 failed" in ok.stdout

    folder = run(workspace, "validate", str(workspace["project"] / ".claude" / "agents"))
    assert folder.returncode == 1
    assert (
        "FAILED" in folder.stdout
        and "broken.md" in folder.stdout
        and "2 agents valid, 1 failed" in folder.stdout
    )

    readme = tmp_path / "README.md"
    readme.write_text("# docs\n")
    not_agent = run(workspace, "validate", str(readme), str(tmp_path / "missing.md"))
    assert not_agent.returncode == 1
    assert "not an agent definition" in not_agent.stdout and "no such file" in not_agent.stdout

    everything = run(workspace, "validate")
    assert everything.returncode == 1 and "broken.md" in everything.stdout and "helper" in everything.stdout


def test_validate_plugin_folder_and_json_file(workspace: dict[str, Path], tmp_path: Path) -> None:
    plugin = tmp_path / "plug"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "plug"}')
    (plugin / "agents").mkdir()
    (plugin / "agents" / "a.md").write_text(
        "---\nname: a\ndescription: A\npermissionMode: bypassPermissions\n---\nA.\n"
    )
    result = run(workspace, "validate", str(plugin))
    assert (
        result.returncode == 0 and "plug:a" in result.stdout and "ignored in plugin agents" in result.stdout
    )

    agents_json = tmp_path / "agents.json"
    agents_json.write_text('{"x": {"description": "X", "prompt": "p"}, "y": {"prompt": "p"}}')
    result = run(workspace, "validate", str(agents_json))
    assert result.returncode == 1 and "ok      x" in result.stdout and "'description'" in result.stdout


def test_flag_and_plugin_options(workspace: dict[str, Path], tmp_path: Path) -> None:
    plugin = tmp_path / "plug"
    (plugin / "agents").mkdir(parents=True)
    (plugin / "agents" / "p.md").write_text("---\nname: p\ndescription: P\n---\nP.\n")
    result = run(
        workspace,
        "list",
        "--plugin-dir",
        str(plugin),
        "--agents",
        '{"f": {"description": "F", "prompt": "f"}}',
    )
    assert result.returncode == 0, result.stderr
    assert "Flag agents:\n  f · inherit" in result.stdout
    assert "Plugin agents:\n  plug:p · inherit" in result.stdout

    bad = run(workspace, "list", "--agents", "{not json")
    assert bad.returncode == 2 and "--agents is not valid JSON" in bad.stderr


def test_settings_plugins_are_listed(workspace: dict[str, Path], tmp_path: Path) -> None:
    plugin = tmp_path / "from-settings"
    (plugin / "agents").mkdir(parents=True)
    (plugin / "agents" / "s.md").write_text("---\nname: s\ndescription: S\n---\nS.\n")
    settings = workspace["project"] / ".catui" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"plugins": [{"path": str(plugin)}]}))
    result = run(workspace, "list")
    assert "from-settings:s · inherit" in result.stdout


def test_agents_json_without_the_list_subcommand(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "CATUI_HOME": str(tmp_path / ".catui")}
    out = subprocess.run([sys.executable, "-m", "catui", "agents", "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    names = [a["name"] for a in json.loads(out.stdout)["active"]]
    assert names[:4] == ["general-purpose", "statusline-setup", "Explore", "Plan"]
