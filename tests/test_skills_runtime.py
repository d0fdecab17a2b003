"""Skills at run time: ``allowed-tools`` granted while the run that loaded the skill lasts, and skill files read
again when they change. A whole app (``build_app``) on the scripted provider, real files, real shell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.app import RunOptions, build_app, start_app
from catui.cli.run import conversation_events
from catui.messages import blocks_of
from catui.session.events import Event, UserMessageEvent


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def write_skill(project: Path, body: str, allowed: str | None = "Bash(touch:*)") -> Path:
    folder = project / ".claude" / "skills" / "greeter"
    folder.mkdir(parents=True, exist_ok=True)
    extra = f"allowed-tools: {allowed}\n" if allowed else ""
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: greeter\ndescription: Greets.\n{extra}---\n{body}\n")
    return path


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


async def run_prompts(project: Path, turns: list[dict[str, Any]], prompts: list[str]) -> list[list[Event]]:
    script = project.parent / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}"))
    await start_app(app)
    runs = []
    try:
        for prompt in prompts:
            runs.append([event async for event in conversation_events(app, prompt)])
    finally:
        await app.aclose()
    return runs


def tool_results(events: list[Event]) -> list[dict[str, Any]]:
    return [b for e in events if isinstance(e, UserMessageEvent) for b in blocks_of(e.message)
            if b.get("type") == "tool_result"]


def text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


async def test_allowed_tools_are_granted_for_the_run_that_loaded_the_skill(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_skill(project, "Say hello with Bash.")
    turns = [
        {"match": {"last_user_contains": "FIRST"}, "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "touch before.txt"}}]},
        {"match": {"last_user_contains": "needs approval"}, "content": [
            {"type": "tool_use", "name": "Skill", "input": {"skill": "greeter"}}]},
        {"match": {"last_user_contains": "Launching skill"}, "content": [bash("touch now.txt")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "first done"}]},
        {"match": {"last_user_contains": "SECOND"}, "content": [bash("touch later.txt")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "second done"}]},
    ]
    first, second = await run_prompts(project, turns, ["FIRST", "SECOND"])
    before, launched, during = tool_results(first)
    assert before.get("is_error") and "needs approval" in text(before)  # print mode: nobody to ask
    assert text(launched) == "Launching skill: greeter"
    assert not during.get("is_error") and (project / "now.txt").exists()
    assert not (project / "before.txt").exists()
    [after] = tool_results(second)
    assert after.get("is_error") and not (project / "later.txt").exists()  # the run ended: the grant with it


async def test_a_changed_skill_file_is_read_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = write_skill(project, "OLD INSTRUCTIONS", allowed=None)
    turns = [
        {"match": {"last_is_tool_result": False}, "repeat": True, "content": [
            {"type": "tool_use", "name": "Skill", "input": {"skill": "greeter"}}]},
        {"match": {"last_is_tool_result": True}, "repeat": True, "content": [{"type": "text", "text": "ok"}]},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}"))
    await start_app(app)
    try:
        first = [e async for e in conversation_events(app, "one")]
        path.write_text("---\nname: greeter\ndescription: Greets.\n---\nNEW INSTRUCTIONS, longer than before\n")
        second = [e async for e in conversation_events(app, "two")]
    finally:
        await app.aclose()

    def follow_up(events: list[Event]) -> str:
        return " ".join(b.get("text", "") for e in events if isinstance(e, UserMessageEvent)
                        for b in blocks_of(e.message) if b.get("type") == "text")

    assert "OLD INSTRUCTIONS" in follow_up(first)
    assert "NEW INSTRUCTIONS" in follow_up(second) and "OLD INSTRUCTIONS" not in follow_up(second)
