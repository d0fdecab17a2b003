"""A repository's agent files cannot widen where an agent may write: ``cwd`` stays inside the project.

Real files, the real registry and app (scripted model): a project agent naming ``/`` (or a link out of the
project) as its ``cwd`` loses the field with a warning naming the file and the field, said at start; its
Write outside the project is then refused like any other agent's in acceptEdits mode. The user's own
agents keep any folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.agents.registry import load_agent_registry
from catui.app import RunOptions, build_app, start_app
from catui.cli.run import conversation_events
from catui.messages import blocks_of
from catui.models.resolve import clear_provider_cache
from catui.session.events import UserMessageEvent
from tests.support.git_repos import isolate_git, make_repo


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def write_agent(folder: Path, name: str, cwd: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: Runs in {cwd}.\ncwd: {cwd}\n---\nPROMPT\n")
    return path


@pytest.mark.parametrize("where", [".claude/agents", ".catui/agents"])
def test_a_project_agent_naming_a_folder_outside_the_project_loses_cwd(tmp_path: Path, where: str) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "escape").symlink_to(outside)  # inside by name, outside once resolved
    inside = repo / "pkg"
    inside.mkdir()
    files = {
        "root": write_agent(repo / where, "root", "/"),
        "sibling": write_agent(repo / where, "sibling", str(outside)),
        "link": write_agent(repo / where, "link", str(repo / "escape")),
        "dotdot": write_agent(repo / where, "dotdot", f"{repo}/../outside"),
        "inside": write_agent(repo / where, "inside", str(inside)),
    }
    registry = load_agent_registry(repo, home=tmp_path / "home")
    for name in ("root", "sibling", "link", "dotdot"):
        agent = registry.get(name)
        assert agent is not None and agent.cwd is None, name
        said = [w for w in registry.warnings if str(files[name]) in str(w)]
        assert len(said) == 1 and "field 'cwd'" in str(said[0]) and "outside the project" in str(said[0])
        assert said[0].at_start
    kept = registry.get("inside")
    assert kept is not None and kept.cwd == str(inside)


def test_the_users_own_agents_keep_any_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    write_agent(tmp_path / "home" / ".claude" / "agents", "mine", str(outside))
    registry = load_agent_registry(repo, home=tmp_path / "home")
    agent = registry.get("mine")
    assert agent is not None and agent.cwd == str(outside)
    assert not [w for w in registry.warnings if "cwd" in str(w)]


async def test_a_repository_agent_with_cwd_slash_cannot_write_outside_in_accept_edits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    target = tmp_path / "outside" / "planted.txt"
    target.parent.mkdir()
    agent_file = write_agent(repo / ".claude" / "agents", "wide", "/")

    def tool_use(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": name, "input": args}

    turns = [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [tool_use("p1", "Agent", description="job", prompt="CHILD JOB", subagent_type="wide")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False},
         "content": [tool_use("c_write", "Write", file_path=str(target), content="x\n"),
                     tool_use("c_pwd", "Bash", command="pwd")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child done"}]},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    app = build_app(RunOptions(cwd=repo, model=f"scripted:{script}", permission_mode="acceptEdits"))
    await start_app(app)
    try:
        events = [event async for event in conversation_events(app, "PARENT")]
        warnings = list(app.services.startup_warnings)
    finally:
        await app.aclose()
        clear_provider_cache()
    found = {
        block["tool_use_id"]: block
        for event in events if isinstance(event, UserMessageEvent) and event.agent_id is not None
        for block in blocks_of(event.message) if block.get("type") == "tool_result"
    }
    assert found["c_write"].get("is_error") and not target.exists()
    assert "outside the working directories" in str(found["c_write"]["content"])
    assert any(str(agent_file) in w and "field 'cwd'" in w for w in warnings), warnings


async def test_a_cwd_that_becomes_a_link_out_of_the_project_after_loading_is_refused_at_spawn(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    later = repo / "later"
    later.mkdir()
    agent_file = write_agent(repo / ".claude" / "agents", "later", str(later))
    turns = [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "p1", "name": "Agent",
                      "input": {"description": "job", "prompt": "CHILD JOB", "subagent_type": "later"}}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB"}, "content": [{"type": "text", "text": "child ran"}]},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    app = build_app(RunOptions(cwd=repo, model=f"scripted:{script}", permission_mode="acceptEdits"))
    later.rmdir()
    later.symlink_to(tmp_path)  # swapped for a link out of the project once the definition was loaded
    await start_app(app)
    try:
        events = [event async for event in conversation_events(app, "PARENT")]
    finally:
        await app.aclose()
        clear_provider_cache()
    results = [
        block for event in events if isinstance(event, UserMessageEvent) and event.agent_id is None
        for block in blocks_of(event.message) if block.get("type") == "tool_result"
    ]
    assert len(results) == 1 and results[0].get("is_error"), results
    text = str(results[0]["content"])
    assert str(agent_file) in text and "field 'cwd'" in text and "is refused" in text
