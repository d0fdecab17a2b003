"""The sub-agent runtime in process: a parent Session on the scripted provider spawning real child Sessions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.agents.builtin import builtin_agents
from catui.agents.definition import AgentDefinition
from catui.app import AgentApp, AppServices, RunOptions
from catui.config.settings import Settings
from catui.messages import blocks_of
from catui.models.resolve import create_provider, resolve_model
from catui.permissions.context import PermissionContext
from catui.session.events import Event, ResultEvent, SystemEvent, UserMessageEvent
from catui.session.session import Session, SessionConfig
from catui.session.transcript import TranscriptWriter
from catui.subagents.install import SubagentHandle, SubagentParts, install_subagents
from catui.tools.base import ToolContext, ToolServices
from catui.tools.registry import builtin_tools
from tests.support.static_registry import StaticRegistry


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "CLAUDE.md").write_text("Always answer in haiku.\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(path), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"],
                   check=True)
    return path


def build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]],
          extra_agents: list[AgentDefinition] = (), mode: str = "default") -> tuple[AgentApp, Any]:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    repo = git_repo(tmp_path / "repo")
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    resolved = resolve_model(f"scripted:{script}", {}, {})
    provider = create_provider(resolved, {}, {})
    handle = SubagentHandle(lambda: system)  # the sub-agent system is installed below, over the session
    ctx = ToolContext(cwd=repo, project_root=repo, services=ToolServices(subagents=handle, output_review=handle),
                      permissions=PermissionContext(mode=mode, working_directories=(repo,)))  # type: ignore[arg-type]
    transcript = TranscriptWriter([tmp_path / "home" / "main.jsonl"], session_id="s-1", cwd=repo)
    session = Session(SessionConfig(provider=provider, model=resolved.model_id, tools=builtin_tools(),
                                    tool_context=ctx, session_id="s-1", transcript=transcript))
    registry = StaticRegistry([*builtin_agents(), *extra_agents])
    system = install_subagents(SubagentParts(
        session=session, registry=registry, settings={}, env={}, project_root=repo, cwd=repo, tasks=None,
        resolved_model=resolved))
    app = AgentApp(session=session, options=RunOptions(cwd=repo), settings=Settings.from_dict({}),
                   registry=registry, tasks=None, project_root=repo,
                   transcript_path=None, model_display="scripted", resolved_model=resolved,
                   services=AppServices(env={}, subagents=system))
    return app, provider.engine  # type: ignore[attr-defined]


async def run(app: AgentApp, prompt: str) -> list[Event]:
    return [event async for event in app.session.run(prompt)]


def tool_results(events: list[Event]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, UserMessageEvent) and event.agent_id is None:
            for block in blocks_of(event.message):
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = block
    return out


def spawn(tool_id: str, prompt: str, subagent_type: str | None = None, name: str = "Agent",
          **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"description": f"task {tool_id}", "prompt": prompt, **extra}
    if subagent_type:
        args["subagent_type"] = subagent_type
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


async def test_parallel_explore_and_general_purpose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, engine = build(tmp_path, monkeypatch, [
        {"name": "parent", "match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_a", "EXPLORE JOB", "Explore"), spawn("toolu_b", "GP JOB", name="Task")]},
        {"name": "explore", "match": {"first_user_contains": "EXPLORE JOB"}, "delay_ms": 40,
         "content": [{"type": "text", "text": "explore answer"}]},
        {"name": "gp", "match": {"first_user_contains": "GP JOB"}, "content": [{"type": "text", "text": "gp answer"}]},
        {"name": "final", "match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ])
    events = await run(app, "PARENT task")
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "done"
    results = tool_results(events)
    assert list(results) == ["toolu_a", "toolu_b"]
    assert results["toolu_a"]["content"] == [{"type": "text", "text": "explore answer"}]
    gp = results["toolu_b"]["content"]
    assert gp[0] == {"type": "text", "text": "gp answer"}
    assert gp[1]["text"].startswith("agentId: a") and "<usage>total_tokens: " in gp[1]["text"]

    views = {turn.name: view for view, turn in engine.history}
    assert views["explore"].model == "claude-haiku-4-5-20251001"
    assert views["gp"].model == "scripted"
    assert "Agent" not in views["gp"].tool_names and "Edit" in views["gp"].tool_names
    assert "Edit" not in views["explore"].tool_names and "Read" in views["explore"].tool_names
    # general-purpose gets the git snapshot and CLAUDE.md, Explore neither.
    assert "gitStatus" in views["gp"].system_text and "gitStatus" not in views["explore"].system_text
    assert "Always answer in haiku." in views["gp"].first_user_text
    assert "Always answer in haiku." not in views["explore"].first_user_text
    # The gp child ran while the slower Explore child was still waiting: both started before either ended.
    order = [turn.name for _, turn in engine.history]
    assert order[:3] == ["parent", "explore", "gp"] or order[:3] == ["parent", "gp", "explore"]

    started = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "task_started"]
    assert {e.data["tool_use_id"] for e in started} == {"toolu_a", "toolu_b"}
    assert all(e.data["task_type"] == "local_agent" for e in started)
    child_events = [e for e in events if e.parent_tool_use_id == "toolu_b" and isinstance(e, UserMessageEvent)]
    assert child_events and child_events[0].agent_id is not None

    data = next(e.tool_use_results for e in events if isinstance(e, UserMessageEvent) and e.tool_use_results)
    assert data["toolu_b"]["status"] == "completed" and data["toolu_b"]["agentType"] == "general-purpose"

    # Each child has its transcript and meta file under the parent session's folder.
    agent_id = data["toolu_b"]["agentId"]
    folder = tmp_path / "home" / "projects"
    metas = list(folder.rglob(f"agent-{agent_id}.meta.json"))
    assert len(metas) == 1
    meta = json.loads(metas[0].read_text())
    assert (meta["agentType"], meta["description"]) == ("general-purpose", "task toolu_b")
    assert meta["model"] and meta["modelReason"]
    lines = metas[0].with_name(f"agent-{agent_id}.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["isSidechain"] is True and json.loads(lines[0])["agentId"] == agent_id
    telemetry = [json.loads(line) for line in (tmp_path / "home" / "telemetry.jsonl").read_text().splitlines()]
    assert [r["event"] for r in telemetry].count("catui_agent_tool_completed") == 2
    selected = [r for r in telemetry if r["event"] == "catui_agent_tool_selected"]
    assert {(r["agent_type"], r["model_reason"]) for r in selected} == {("Explore", "definition"),
                                                                         ("general-purpose", "parent")}


async def test_a_failing_child_does_not_disturb_its_sibling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "BROKEN JOB", "Plan"), spawn("toolu_2", "FINE JOB", "Plan"),
                     spawn("toolu_3", "x", "nope")]},
        {"match": {"first_user_contains": "BROKEN JOB"}, "error": {"status": 400, "type": "invalid_request_error",
                                                                   "message": "bad"}},
        {"match": {"first_user_contains": "FINE JOB"}, "content": [{"type": "text", "text": "plan ok"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ])
    events = await run(app, "PARENT")
    results = tool_results(events)
    assert results["toolu_1"]["is_error"] is True and "failed" in str(results["toolu_1"]["content"])
    assert results["toolu_2"]["content"] == [{"type": "text", "text": "plan ok"}]
    assert results["toolu_3"] == {
        "type": "tool_result", "tool_use_id": "toolu_3", "is_error": True,
        "content": "Agent type 'nope' not found. Available agents: general-purpose, statusline-setup, Explore, Plan",
    }
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "done"


async def test_max_turns_and_tool_less_agents_are_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    looper = AgentDefinition(agent_type="looper", description="loops", prompt="Loop.", max_turns=1,
                             tools=["Glob"], source="projectSettings")
    empty = AgentDefinition(agent_type="empty", description="nothing", prompt="x", tools=["NoSuchTool"],
                            source="projectSettings")
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "LOOP JOB", "looper"), spawn("toolu_2", "EMPTY JOB", "empty")]},
        {"match": {"first_user_contains": "LOOP JOB"}, "repeat": True,
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ], extra_agents=[looper, empty])
    results = tool_results(await run(app, "PARENT"))
    assert results["toolu_1"]["is_error"] is True and "limit of 1 turns" in results["toolu_1"]["content"]
    assert results["toolu_2"]["is_error"] is True and "'empty' has no tools" in results["toolu_2"]["content"]


async def test_child_mode_is_capped_by_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bold = AgentDefinition(agent_type="bold", description="d", prompt="p", permission_mode="bypassPermissions",
                           source="projectSettings")
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "BOLD JOB", "bold")]},
        {"match": {"first_user_contains": "BOLD JOB"}, "content": [{"type": "text", "text": "ok"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ], extra_agents=[bold], mode="acceptEdits")
    runtime = app.services.subagents.runtime
    seen: list[str] = []
    original = runtime.prepare

    async def spy(request: Any, ctx: ToolContext) -> Any:
        prepared = await original(request, ctx)
        seen.append(prepared.session.ctx.permissions.mode)
        return prepared

    runtime.prepare = spy
    await run(app, "PARENT")
    assert seen == ["acceptEdits"]


async def test_worktree_isolation_removes_clean_and_keeps_changed(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    app, engine = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "CLEAN JOB", isolation="worktree"),
                     spawn("toolu_2", "WRITE JOB", isolation="worktree")]},
        {"match": {"first_user_contains": "CLEAN JOB"}, "content": [{"type": "text", "text": "nothing to do"}]},
        {"match": {"first_user_contains": "WRITE JOB", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo hi > new.txt"}}]},
        {"match": {"first_user_contains": "WRITE JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "wrote it"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ], mode="bypassPermissions")
    events = await run(app, "PARENT")
    results = tool_results(events)
    clean_trailer = results["toolu_1"]["content"][1]["text"]
    assert "worktreePath" not in clean_trailer
    kept_trailer = results["toolu_2"]["content"][1]["text"]
    path_line = next(line for line in kept_trailer.splitlines() if line.startswith("worktreePath: "))
    kept = Path(path_line.removeprefix("worktreePath: "))
    assert kept.parent == tmp_path / "repo" / ".catui" / "worktrees" and (kept / "new.txt").read_text() == "hi\n"
    assert "\nworktreeBranch: worktree-agent-a" in kept_trailer
    assert kept_trailer.index("worktreeBranch") < kept_trailer.index("<usage>")
    remaining = [p.name for p in (tmp_path / "repo" / ".catui" / "worktrees").iterdir()]
    assert remaining == [kept.name]
    write_view = next(view for view, turn in engine.history if "WRITE JOB" in view.first_user_text)
    assert f"Working directory: {kept}" in write_view.system_text


async def test_cwd_with_isolation_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "JOB", isolation="worktree", cwd=str(tmp_path))]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ])
    results = tool_results(await run(app, "PARENT"))
    assert results["toolu_1"]["is_error"] is True and "cannot be used together" in results["toolu_1"]["content"]


async def test_aborting_the_parent_aborts_running_children(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "SLOW JOB", "Explore")]},
        {"match": {"first_user_contains": "SLOW JOB"}, "delay_ms": 2000,
         "content": [{"type": "text", "text": "late"}]},
    ])
    events: list[Event] = []

    async def consume() -> None:
        async for event in app.session.run("PARENT"):
            events.append(event)
            if isinstance(event, UserMessageEvent) and event.parent_tool_use_id == "toolu_1":
                # The child has sent its first request and waits for the slow answer.
                asyncio.get_running_loop().call_later(0.05, app.session.abort)

    await consume()
    # Had the abort waited for the slow answer, the child would have finished normally with "late".
    results = tool_results(events)
    assert results["toolu_1"]["is_error"] is True and "interrupted" in results["toolu_1"]["content"]
    assert isinstance(events[-1], ResultEvent) and events[-1].agent_id is None and events[-1].is_error


async def test_required_mcp_servers_must_be_connected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needy = AgentDefinition(agent_type="needy", description="d", prompt="p", required_mcp_servers=["github"],
                            source="projectSettings")
    app, _ = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "JOB", "needy")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ], extra_agents=[needy])
    results = tool_results(await run(app, "PARENT"))
    assert results["toolu_1"]["is_error"] is True and "MCP server(s) github" in results["toolu_1"]["content"]


async def test_auto_mode_handoff_review_prefixes_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, engine = build(tmp_path, monkeypatch, [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [spawn("toolu_1", "RISKY JOB", "general-purpose")]},
        {"match": {"first_user_contains": "RISKY JOB"}, "content": [{"type": "text", "text": "pushed --force"}]},
        {"name": "review", "match": {"system_contains": "security reviewer", "last_user_contains": "pushed --force"},
         "content": [{"type": "text", "text": "<block>yes</block><reason>it force-pushed main</reason>"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ], mode="auto")
    results = tool_results(await run(app, "PARENT"))
    content = results["toolu_1"]["content"]
    assert content[0]["text"].startswith("SECURITY WARNING: ") and "it force-pushed main" in content[0]["text"]
    assert content[1] == {"type": "text", "text": "pushed --force"}
    review = next(view for view, turn in engine.history if turn.name == "review")
    assert review.model == "claude-haiku-4-5-20251001"
