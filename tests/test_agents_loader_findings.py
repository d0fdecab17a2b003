"""Loader findings from real agent files (issue 15): ` #` comments, warnings that name their line, the colour
warning, the unknown-tools sentence, and `catui agents validate` on a folder of several plugins.

Every test writes real files in a temp project and loads them through the registry or the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catui.agents.registry import AgentRegistry, load_agent_registry


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return root


def write_agent(project: Path, filename: str, frontmatter: str, body: str = "You help.") -> Path:
    path = project / ".claude" / "agents" / filename
    path.write_text(f"---\n{frontmatter}---\n{body}\n", encoding="utf-8")
    return path


def registry_for(project: Path) -> AgentRegistry:
    return load_agent_registry(project, home=project.parent / "home")


def warnings_for(registry: AgentRegistry, path: Path) -> list[str]:
    return [w.message for w in registry.warnings if w.path is not None and Path(w.path).name == path.name]


def run_agents_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    home = project.parent / "home"
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    return subprocess.run([sys.executable, "-m", "catui", "agents", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_comment_after_model_and_tools_never_becomes_a_model_id_or_tool_names(project: Path) -> None:
    path = write_agent(project, "commented.md", (
        "name: commented\n"
        "description: Reviews code\n"
        "model: sonnet  # a comment\n"
        "tools: Read, Grep  # only these\n"
        "disallowedTools: Bash # never the shell\n"
        "color: blue # team colour\n"
    ))
    registry = registry_for(project)
    agent = registry.get("commented")
    assert agent is not None
    assert (agent.model, agent.tools, agent.disallowed_tools, agent.color) == ("sonnet", ["Read", "Grep"],
                                                                                ["Bash"], "blue")
    assert warnings_for(registry, path) == []  # no "unknown model", no "unknown tools", no bad colour


def test_hash_in_a_prose_field_stays_text_and_an_ambiguous_one_is_reported_with_its_line(project: Path) -> None:
    clear = write_agent(project, "issue.md", "name: issue\ndescription: Fixes issue #12 and #13\n")
    ambiguous = write_agent(project, "noted.md",
                            "name: noted\nmodel: haiku\ndescription: Reviews code  # internal note\n")
    registry = registry_for(project)
    issue, noted = registry.get("issue"), registry.get("noted")
    assert issue is not None and issue.description == "Fixes issue #12 and #13"
    assert warnings_for(registry, clear) == []
    assert noted is not None and noted.description == "Reviews code  # internal note"
    [warning] = warnings_for(registry, ambiguous)
    assert warning.startswith("line 4: the ' # …' in 'description' is read as part of its text, not as a comment")
    assert "quote the value" in warning


def test_quoting_the_prose_value_settles_the_ambiguity(project: Path) -> None:
    path = write_agent(project, "quoted.md", 'name: quoted\ndescription: "Reviews code  # kept as text"\n')
    registry = registry_for(project)
    agent = registry.get("quoted")
    assert agent is not None and agent.description == "Reviews code  # kept as text"
    assert warnings_for(registry, path) == []


def test_colour_warning_says_matching_is_case_sensitive(project: Path) -> None:
    path = write_agent(project, "red.md", "name: red\ndescription: Red agent\ncolor: Red\n")
    registry = registry_for(project)
    agent = registry.get("red")
    assert agent is not None and agent.color is None
    [warning] = warnings_for(registry, path)
    assert warning.startswith("line 4: color 'Red' is not one of") and "matching is case-sensitive" in warning


def test_field_warnings_name_the_line_the_field_is_written_on(project: Path) -> None:
    path = write_agent(project, "lines.md", (
        "name: lines\n"
        "description: Several problems\n"
        "\n"
        "model: fable  # typo\n"
        "maxTurns: many\n"
        "allowed-tools: Read\n"
    ))
    messages = warnings_for(registry_for(project), path)
    assert "line 5: model 'fable' is not a known model" in "\n".join(messages)
    assert any(m.startswith("line 6: maxTurns 'many' is not a positive integer") for m in messages)
    assert any(m.startswith("line 7: 'allowed-tools' is not an agent field") for m in messages)


def test_unknown_tools_warning_reads_as_a_sentence(project: Path) -> None:
    write_agent(project, "db.md", "name: db\ndescription: Queries\ntools: Read, psql, pgcli\n")
    [warning] = [w.message for w in registry_for(project).warnings if "does not know" in w.message]
    assert warning == ("agent 'db': its tools list names tools catui does not know: psql, pgcli. They are kept, "
                       "but match nothing unless an MCP server or plugin provides them.")


def make_plugin(root: Path, name: str, agent: str, extra: str = "") -> None:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    (root / "agents").mkdir()
    (root / "agents" / f"{agent}.md").write_text(f"---\nname: {agent}\ndescription: {agent} agent\n{extra}---\nGo.\n")


def test_validate_recognises_each_plugin_of_a_folder_of_plugins(project: Path, tmp_path: Path) -> None:
    market = tmp_path / "market"
    make_plugin(market / "plugins" / "alpha", "alpha", "scout")
    make_plugin(market / "plugins" / "beta", "beta", "fixer", extra="permissionMode: bypassPermissions\n")
    (market / "loose").mkdir()
    (market / "loose" / "solo.md").write_text("---\nname: solo\ndescription: Solo\n---\nSolo.\n")
    result = run_agents_cli(project, "validate", str(market))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "alpha:scout" in result.stdout and "beta:fixer" in result.stdout
    # beta's agent was checked by the plugin rules, and the warning names the line of the field
    assert "line 4: 'permissionMode' is ignored in plugin agents" in result.stdout
    assert "solo" in result.stdout
    assert "(plugin)" in result.stdout
