"""Skills discovered from every source (plugin, user, project), precedence, bad files, and the CLI commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catui.agents.markdown import load_markdown_agent
from catui.skills.registry import load_skill_registry

PLUGIN_MANIFEST = '{"name": "toolkit"}'


def write_skill(folder: Path, name: str, text: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    sub = project / "pkg" / "sub"
    sub.mkdir(parents=True)
    (project / ".git").mkdir()
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(PLUGIN_MANIFEST)
    write_skill(plugin / "skills", "lint", "---\ndescription: Lint from the plugin\n---\nRun the linter.\n")
    write_skill(home / ".claude" / "skills", "deploy", "---\ndescription: Deploy (user, Claude folder)\n---\nd1\n")
    write_skill(home / ".catui" / "skills", "deploy", "---\ndescription: Deploy (user, catui folder)\n---\nd2\n")
    write_skill(home / ".catui" / "skills", "notes", "---\ndescription: Take notes\n---\nn\n")
    write_skill(project / ".claude" / "skills", "notes", "---\ndescription: Project notes\n---\nproject n\n")
    write_skill(project / ".catui" / "skills", "review", "# Review a pull request\n\nSteps follow.\n")
    write_skill(sub / ".claude" / "skills", "review", "---\ndescription: Review, nearer folder\n---\nnear\n")
    write_skill(
        project / ".claude" / "skills", "tagged",
        "---\nname: tagged\ndescription: Fix issue #12 quickly  # a comment?\nallowed-tools: Read, Grep\n"
        "argument-hint: <file>\n---\nbody\n",
    )
    write_skill(project / ".claude" / "skills", "broken", "---\nname: broken\ndescription: \"never closed\n---\nb\n")
    write_skill(project / ".claude" / "skills", "renamed", "---\nname: other\ndescription: Renamed\n---\nr\n")
    (project / ".claude" / "skills" / "empty-folder").mkdir()
    return {"home": home, "project": project, "sub": sub, "plugin": plugin}


def test_every_source_and_precedence(sources: dict[str, Path]) -> None:
    registry = load_skill_registry(sources["sub"], home=sources["home"], plugin_dirs=[str(sources["plugin"])])
    assert registry.names() == ["deploy", "notes", "renamed", "review", "tagged", "toolkit:lint"]
    lint = registry.get("toolkit:lint")
    assert lint is not None and lint.source == "plugin" and lint.description == "Lint from the plugin"
    deploy = registry.get("deploy")
    assert deploy is not None and deploy.description == "Deploy (user, catui folder)" and deploy.source == "userSettings"
    notes = registry.get("notes")
    assert notes is not None and notes.source == "projectSettings" and notes.body == "project n"
    review = registry.get("review")  # the folder nearer the working directory wins
    assert review is not None and review.description == "Review, nearer folder"
    assert review.base_dir == str(sources["sub"] / ".claude" / "skills" / "review")
    assert registry.get("/notes") is notes  # typed the way people type them


def test_frontmatter_read_by_the_agent_rules(sources: dict[str, Path]) -> None:
    registry = load_skill_registry(sources["project"], home=sources["home"])
    tagged = registry.get("tagged")
    assert tagged is not None
    # " #" is pre-quoted as Claude Code does, so the text after it stays part of the description.
    assert tagged.description == "Fix issue #12 quickly  # a comment?"
    assert tagged.allowed_tools == ("Read", "Grep") and tagged.argument_hint == "<file>"
    review = registry.get("review")  # no frontmatter: described by its first line
    assert review is not None and review.description == "Review a pull request"
    [failed] = registry.failed_files
    assert failed.path.endswith("broken/SKILL.md")
    # The same report, word for word, as an agent file with that frontmatter gets.
    as_agent = load_markdown_agent(Path(failed.path).read_text(), path=failed.path, source="projectSettings")
    assert as_agent.error is not None and failed.error == as_agent.error and "line 4" in failed.error
    assert any("renamed" in str(w) and "'other'" in str(w) for w in registry.warnings)


def test_no_skills_anywhere(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    registry = load_skill_registry(tmp_path, home=tmp_path / "home")
    assert registry.skills == {} and registry.reminder_text() is None


def run_catui(sources: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(HOME=str(sources["home"]), CATUI_HOME=str(sources["home"] / ".catui"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "catui", *args], cwd=sources["project"], env=env, capture_output=True, text=True,
        timeout=60,
    )


def test_skills_list_and_show_commands(sources: dict[str, Path]) -> None:
    listed = run_catui(sources, "skills", "list", "--plugin-dir", str(sources["plugin"]))
    assert listed.returncode == 0, listed.stderr
    assert "toolkit:lint" in listed.stdout and "[plugin]" in listed.stdout
    assert "Failed to load:" in listed.stdout and "broken/SKILL.md" in listed.stdout
    as_json = json.loads(run_catui(sources, "skills", "--json").stdout)
    assert {s["name"] for s in as_json["skills"]} == {"deploy", "notes", "renamed", "review", "tagged"}
    shown = run_catui(sources, "skills", "show", "notes")
    assert shown.returncode == 0 and "Source: project" in shown.stdout and "project n" in shown.stdout
    missing = run_catui(sources, "skills", "show", "nope")
    assert missing.returncode == 1 and "no skill named 'nope'" in missing.stderr


def test_agents_validate_ignores_skill_files(sources: dict[str, Path]) -> None:
    claude = sources["project"] / ".claude"
    (claude / "agents").mkdir()
    (claude / "agents" / "ok.md").write_text("---\nname: ok\ndescription: Fine\n---\nDo it.\n")
    done = run_catui(sources, "agents", "validate", str(claude))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKILL.md" not in done.stdout + done.stderr and "ok" in done.stdout
