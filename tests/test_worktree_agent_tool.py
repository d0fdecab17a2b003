"""Worktree isolation through the real Agent tool: a whole app (build_app) driven like print mode.

Agent ids are made deterministic (so scripted turns can name the worktree's
absolute path); everything else is real: git, settings files, hooks, file
tools, Bash, state.db.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.app import AgentApp, RunOptions, build_app, start_app
from catui.cli.run import conversation_events
from catui.messages import blocks_of
from catui.models.resolve import clear_provider_cache
from catui.session.events import Event, UserMessageEvent
from catui.state.db import StateDB
from tests.support.git_repos import branches, isolate_git, make_repo, worktree_paths

AGENT_ID = "a1234567890abcdef"
SLUG = "agent-a1234567"
BRANCH = "worktree-agent-a1234567"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate_git(monkeypatch, tmp_path / "home")
    for name in ("CATUI_AUTO_BACKGROUND_MS", "CATUI_DISABLE_BACKGROUND_TASKS"):
        monkeypatch.delenv(name, raising=False)
    ids = itertools.chain([AGENT_ID, "b1234567890abcdef", "c1234567890abcdef"],
                          (f"f{n:02d}{'0' * 14}" for n in itertools.count()))
    monkeypatch.setattr("catui.subagents.plan.new_agent_id", lambda: next(ids))
    yield
    clear_provider_cache()


def status_of(db: StateDB, agent_id: str) -> str:
    row = db.get_worktree(agent_id)
    assert row is not None, f"no state.db row for {agent_id}"
    return str(row["status"])


def make_app(tmp_path: Path, cwd: Path, turns: list[dict[str, Any]], **options: Any) -> AgentApp:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return build_app(RunOptions(cwd=cwd, model=f"scripted:{script}", **options))


async def drive(app: AgentApp, prompt: str = "PARENT") -> list[Event]:
    await start_app(app)
    try:
        return [event async for event in conversation_events(app, prompt)]
    finally:
        await app.aclose()


def results(events: list[Event], *, parent: bool) -> dict[str, dict[str, Any]]:
    """tool_result blocks by tool_use id: the main agent's (parent=True) or its children's."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, UserMessageEvent) and (event.agent_id is None) == parent:
            for block in blocks_of(event.message):
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def text_of(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def agent_call(tool_id: str, prompt: str, agent_type: str = "general-purpose", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Agent",
            "input": {"description": f"job {tool_id}", "prompt": prompt, "subagent_type": agent_type, **extra}}


def tool(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def parent_turns(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False}, "content": list(calls)},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
    ]


async def test_definition_isolation_confines_every_tool_to_the_worktree(tmp_path: Path) -> None:
    """isolation from a definition; the parent runs in a sub-folder of the main checkout (acceptEdits)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})
    (repo / "README.md").write_text("uncommitted in main\n")  # a dirty main checkout is fine
    wt = repo / ".catui" / "worktrees" / SLUG
    child = [
        tool("c_pwd", "Bash", command="pwd"),
        tool("c_glob", "Glob", pattern="**/*.py"),
        tool("c_grep", "Grep", pattern="print", output_mode="files_with_matches"),
        tool("c_read", "Read", file_path=str(wt / "README.md")),
        tool("c_write", "Write", file_path=str(wt / "new.txt"), content="made in the worktree\n"),
        tool("c_read_app", "Read", file_path=str(wt / "src" / "app.py")),
        tool("c_dotdot", "Write", file_path=f"{wt}/../../../src/escape.txt", content="x\n"),
        tool("c_main", "Write", file_path=str(repo / "src" / "leak.txt"), content="x\n"),
        tool("c_bash_up", "Bash", command="touch ../../../bash_escape.txt"),
    ]
    turns = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", "isolated")),
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False}, "content": child},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True, "last_user_contains": "outside"},
         "content": [tool("c_edit", "Edit", file_path=str(wt / "src" / "app.py"), old_string="hi", new_string="bye")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child done"}]},
    ]
    agents = {"isolated": {"description": "Works alone.", "prompt": "ISOLATED AGENT", "isolation": "worktree"}}
    app = make_app(tmp_path, repo / "src", turns, permission_mode="acceptEdits", flag_agents=agents)
    engine = app.session.config.provider.engine  # type: ignore[attr-defined]
    events = await drive(app)

    out = {key: text_of(block) for key, block in results(events, parent=False).items()}
    errors = {key for key, block in results(events, parent=False).items() if block.get("is_error")}
    assert out["c_pwd"].strip() == str(wt)
    assert out["c_glob"].strip() == str(wt / "src" / "app.py")
    assert str(wt / "src" / "app.py") in out["c_grep"] and str(repo / "src") not in out["c_grep"].replace(str(wt), "")
    assert "hello" in out["c_read"] and "uncommitted" not in out["c_read"]  # started from HEAD
    assert errors == {"c_dotdot", "c_main", "c_bash_up"}, {k: out[k] for k in errors}
    assert "outside the working directories" in out["c_dotdot"] and str(repo / "src" / "escape.txt") in out["c_dotdot"]
    assert "outside the working directories" in out["c_main"]
    # Nothing reached the main checkout; the worktree has the child's work.
    assert not (repo / "src" / "escape.txt").exists() and not (repo / "src" / "leak.txt").exists()
    assert not (repo / "bash_escape.txt").exists()
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"
    assert (wt / "new.txt").read_text() == "made in the worktree\n"
    assert (wt / "src" / "app.py").read_text() == "print('bye')\n"
    # Kept with changes: the trailer names path and branch before <usage>.
    trailer = results(events, parent=True)["toolu_p1"]["content"][1]["text"]
    assert f"\nworktreePath: {wt}\nworktreeBranch: {BRANCH}\nmergeBack: " in trailer
    # then how the work gets back (catui's own line, issue 18), before <usage>
    hint = trailer.split("\nmergeBack: ", 1)[1].split("\n<usage>", 1)[0]
    agent_id = trailer.split()[1]
    assert f"`catui worktrees diff {agent_id}`" in hint and f"`catui worktrees merge {agent_id} --commit`" in hint
    assert "WorktreeMerge" not in hint  # the tool is not offered without the setting
    # The environment block names the worktree.
    child_view = next(view for view, _turn in engine.history if "CHILD JOB" in view.first_user_text)
    assert f"Working directory: {wt}" in child_view.system_text
    state = StateDB(repo)
    assert status_of(state, AGENT_ID) == "kept"
    state.close()


async def test_metadata_is_recorded_before_the_child_starts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    turns = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", isolation="worktree")),
        {"match": {"first_user_contains": "CHILD JOB"}, "content": [{"type": "text", "text": "nothing to do"}]},
    ]
    app = make_app(tmp_path, repo, turns)
    foreground = app.services.subagents.runtime.foreground
    seen: list[dict[str, Any] | None] = []
    original = foreground.run_to_completion

    async def check_first(run: Any) -> Any:
        db = StateDB(repo)  # what another process (a later start-up sweep) would read
        seen.append(db.get_worktree(run.agent_id))
        db.close()
        return await original(run)

    foreground.run_to_completion = check_first  # type: ignore[method-assign]
    events = await drive(app)

    [row] = seen
    assert row is not None and row["status"] == "active" and row["path"] == str(repo / ".catui" / "worktrees" / SLUG)
    assert row["branch"] == BRANCH and row["git_root"] == str(repo) and not row["hook_based"]
    assert len(row["head_commit"]) == 40
    # No changes: removed with its branch, and no worktree lines in the trailer.
    trailer = results(events, parent=True)["toolu_p1"]["content"][1]["text"]
    assert "worktreePath" not in trailer
    assert worktree_paths(repo) == [str(repo)] and branches(repo) == ["main"]
    db = StateDB(repo)
    assert status_of(db, AGENT_ID) == "removed"
    db.close()


async def test_settings_symlink_and_sparse_paths_reach_the_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"api/a.py": "a\n", "web/w.js": "w\n", ".gitignore": "deps/\n"})
    (repo / "deps").mkdir()
    (repo / "deps" / "lib.txt").write_text("dependency\n")
    (repo / ".catui").mkdir()
    (repo / ".catui" / "settings.json").write_text(
        json.dumps({"worktree": {"symlinkDirectories": ["deps"], "sparsePaths": ["api"]}})
    )
    turns = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", isolation="worktree")),
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False},
         "content": [tool("c_ls", "Bash", command="ls; cat deps/lib.txt")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "looked"}]},
    ]
    events = await drive(make_app(tmp_path, repo, turns))
    listing = text_of(results(events, parent=False)["c_ls"]).split()
    assert "api" in listing and "deps" in listing and "web" not in listing and "dependency" in listing
    # The link is not a change: the worktree was removed, and the linked folder survived.
    assert "worktreePath" not in results(events, parent=True)["toolu_p1"]["content"][1]["text"]
    assert worktree_paths(repo) == [str(repo)] and (repo / "deps" / "lib.txt").is_file()


async def test_hook_based_worktree_outside_git_through_the_agent_tool(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "data.txt").write_text("data\n")
    copies = tmp_path / "copies"
    log = tmp_path / "hooks.log"
    create = (
        f"{sys.executable} -c \"import json,shutil,sys; p=json.load(sys.stdin); d='{copies}/'+p['name']; "
        f"shutil.copytree('{project}', d); open('{log}','a').write('create '+p['agent_id']+chr(10)); print(d)\""
    )
    remove = (
        f"{sys.executable} -c \"import json,shutil,sys; p=json.load(sys.stdin); shutil.rmtree(p['worktree_path']); "
        f"open('{log}','a').write('remove '+p['worktree_path']+chr(10))\""
    )
    (project / ".catui").mkdir()
    (project / ".catui" / "settings.json").write_text(json.dumps({"hooks": {
        "WorktreeCreate": [{"hooks": [{"type": "command", "command": create}]}],
        "WorktreeRemove": [{"hooks": [{"type": "command", "command": remove}]}],
    }}))
    turns = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", isolation="worktree")),
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False},
         "content": [tool("c_pwd", "Bash", command="pwd; ls")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "looked"}]},
    ]
    events = await drive(make_app(tmp_path, project, turns))
    made = copies / SLUG
    assert text_of(results(events, parent=False)["c_pwd"]).split() == [str(made), "data.txt"]
    assert log.read_text().splitlines() == [f"create {AGENT_ID}", f"remove {made}"]
    assert not made.exists() and (project / "data.txt").exists()
    db = StateDB(project)
    row = db.get_worktree(AGENT_ID)
    assert row is not None and row["hook_based"] and row["status"] == "removed"
    db.close()


async def test_not_a_git_repository_is_refused_before_the_child_starts(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    turns = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", isolation="worktree")),
        {"match": {"first_user_contains": "CHILD JOB"}, "content": [{"type": "text", "text": "must not run"}]},
    ]
    app = make_app(tmp_path, project, turns)
    engine = app.session.config.provider.engine  # type: ignore[attr-defined]
    events = await drive(app)
    block = results(events, parent=True)["toolu_p1"]
    assert block["is_error"] is True
    assert "needs a git repository" in text_of(block) and "WorktreeCreate" in text_of(block)
    assert not any("CHILD JOB" in view.first_user_text for view, _turn in engine.history)
    assert not (project / ".catui" / "worktrees").exists()


async def test_definition_cwd_runs_the_agent_there_and_excludes_isolation(tmp_path: Path) -> None:
    from catui.agents.definition import AgentDefinition

    repo = make_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    turns = [
        *parent_turns(agent_call("toolu_p1", "CWD JOB", "placed"),
                      agent_call("toolu_p2", "BOTH JOB", "placed", isolation="worktree")),
        {"match": {"first_user_contains": "CWD JOB", "last_is_tool_result": False},
         "content": [tool("c_pwd", "Bash", command="pwd")]},
        {"match": {"first_user_contains": "CWD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "there"}]},
    ]
    placed = AgentDefinition(description="Runs elsewhere.", prompt="PLACED", cwd=str(elsewhere))
    events = await drive(make_app(tmp_path, repo, turns, sdk_agents={"placed": placed}))
    assert text_of(results(events, parent=False)["c_pwd"]).strip() == str(elsewhere.resolve())
    refused = results(events, parent=True)["toolu_p2"]
    assert refused["is_error"] is True and "cannot be used together" in text_of(refused)
    assert not (repo / ".catui" / "worktrees").exists() or not any((repo / ".catui" / "worktrees").iterdir())


async def dead_agents_worktrees(repo: Path) -> tuple[Path, Path]:
    """A clean and a changed worktree recorded as active by a process that no longer exists."""
    from catui.worktree import create_worktree

    db = StateDB(repo)
    made = []
    for agent_id in ("d" * 16, "e" * 16):
        info = await create_worktree(agent_id, repo_root=repo, state=db)
        row = db.get_worktree(agent_id)
        assert row is not None
        db.record_worktree(agent_id, path=info.path, branch=info.branch, head_commit=info.head_commit,
                           git_root=info.git_root, hook_based=False, pid=999_999_991, meta=row["meta"])
        made.append(info.path)
    db.close()
    (made[1] / "wip.txt").write_text("unfinished\n")
    return made[0], made[1]


@pytest.mark.parametrize("front_end", ["print", "sdk", "interactive"])
async def test_every_front_end_sweeps_dead_agents_worktrees_at_start(tmp_path: Path, front_end: str) -> None:
    import os
    import subprocess

    repo = make_repo(tmp_path / "repo")
    clean, changed = await dead_agents_worktrees(repo)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]}))
    if front_end == "print":
        await drive(build_app(RunOptions(cwd=repo, model=f"scripted:{script}")))
    elif front_end == "sdk":
        import catui

        async with catui.CatuiClient(catui.CatuiOptions(cwd=repo, model=f"scripted:{script}")):
            pass
    else:
        done = subprocess.run([sys.executable, "-m", "catui", "--model", f"scripted:{script}"], input="",
                              cwd=repo, env=dict(os.environ), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert not clean.exists() and changed.is_dir()
    assert [b for b in branches(repo) if b.startswith("worktree-")] == ["worktree-agent-eeeeeeee"]
    db = StateDB(repo)
    assert [status_of(db, a) for a in ("d" * 16, "e" * 16)] == ["removed", "kept"]
    db.close()


async def test_background_agents_settle_their_worktrees_like_foreground_ones(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    ids = {"CLEAN": AGENT_ID, "WRITE": "b1234567890abcdef", "FAIL": "c1234567890abcdef"}
    calls = [agent_call(f"toolu_{key}", f"{key} JOB", isolation="worktree", run_in_background=True) for key in ids]
    turns = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        *parent_turns(*calls),
        {"match": {"first_user_contains": "CLEAN JOB"}, "content": [{"type": "text", "text": "nothing to do"}]},
        {"match": {"first_user_contains": ["WRITE JOB"], "last_is_tool_result": False},
         "content": [tool("w_touch", "Bash", command="touch work.txt")]},
        {"match": {"first_user_contains": "WRITE JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "wrote"}]},
        {"match": {"first_user_contains": "FAIL JOB", "last_is_tool_result": False},
         "content": [tool("f_touch", "Bash", command="touch half.txt")]},
        {"match": {"first_user_contains": "FAIL JOB", "last_is_tool_result": True},
         "error": {"status": 400, "type": "invalid_request_error", "message": "scripted failure"}},
    ]
    app = make_app(tmp_path, repo, turns, permission_mode="bypassPermissions")
    await drive(app)

    notes = {
        key: next(text for m in app.session.messages for text in [json.dumps(m)]
                  if "<task-notification>" in text and f"<task-id>{agent_id}</task-id>" in text)
        for key, agent_id in ids.items()
    }
    worktrees = repo / ".catui" / "worktrees"
    assert "<status>completed</status>" in notes["CLEAN"] and "<worktree>" not in notes["CLEAN"]
    assert not (worktrees / "agent-a1234567").exists() and "worktree-agent-a1234567" not in branches(repo)
    assert "<status>completed</status>" in notes["WRITE"]
    assert (f"<worktree><worktreePath>{worktrees / 'agent-b1234567'}</worktreePath>"
            "<worktreeBranch>worktree-agent-b1234567</worktreeBranch></worktree>") in notes["WRITE"]
    assert (worktrees / "agent-b1234567" / "work.txt").exists()
    # A failed agent's changes are kept too (never thrown away unseen); `catui worktrees` lists it.
    assert "<status>failed</status>" in notes["FAIL"]
    assert f"<worktreePath>{worktrees / 'agent-c1234567'}</worktreePath>" in notes["FAIL"]
    assert (worktrees / "agent-c1234567" / "half.txt").exists()
    db = StateDB(repo)
    assert [status_of(db, i) for i in ids.values()] == ["removed", "kept", "kept"]
    db.close()


async def test_a_failed_foreground_agent_names_the_worktree_it_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    turns = [
        *parent_turns(agent_call("toolu_p1", "FAIL JOB", isolation="worktree")),
        {"match": {"first_user_contains": "FAIL JOB", "last_is_tool_result": False},
         "content": [tool("f_touch", "Bash", command="touch half.txt")]},
        {"match": {"first_user_contains": "FAIL JOB", "last_is_tool_result": True},
         "error": {"status": 400, "type": "invalid_request_error", "message": "scripted failure"}},
    ]
    events = await drive(make_app(tmp_path, repo, turns, permission_mode="bypassPermissions"))
    block = results(events, parent=True)["toolu_p1"]
    wt = repo / ".catui" / "worktrees" / SLUG
    assert block["is_error"] is True
    assert text_of(block).endswith(f"\nworktreePath: {wt}\nworktreeBranch: {BRANCH}")
    assert (wt / "half.txt").exists()


async def test_twenty_isolated_agents_in_parallel(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", count=200)
    calls = [agent_call(f"toolu_{n:02d}", f"JOB{n:02d}.", isolation="worktree") for n in range(20)]
    turns = [*parent_turns(*calls)]
    for n in range(20):
        if n % 4 == 0:  # every fourth agent leaves a file behind
            turns += [
                {"match": {"first_user_contains": f"JOB{n:02d}.", "last_is_tool_result": False},
                 "content": [tool(f"t{n:02d}", "Bash", command=f"touch out{n:02d}.txt")]},
                {"match": {"first_user_contains": f"JOB{n:02d}.", "last_is_tool_result": True},
                 "content": [{"type": "text", "text": "left a file"}]},
            ]
        else:
            turns.append({"match": {"first_user_contains": f"JOB{n:02d}."},
                          "content": [{"type": "text", "text": "nothing to do"}]})
    events = await drive(make_app(tmp_path, repo, turns, permission_mode="bypassPermissions"))
    found = results(events, parent=True)
    assert not any(found[f"toolu_{n:02d}"].get("is_error") for n in range(20))
    kept = sorted(
        line.removeprefix("worktreePath: ")
        for block in found.values() for line in block["content"][1]["text"].splitlines()
        if line.startswith("worktreePath: ")
    )
    # Each kept worktree holds exactly its own agent's file: no agent saw another's folder.
    left = sorted(name for path in kept for name in (p.name for p in Path(path).glob("out*.txt")))
    assert left == [f"out{n:02d}.txt" for n in range(0, 20, 4)]
    assert all(len(list(Path(path).glob("out*.txt"))) == 1 for path in kept)
    assert sorted(worktree_paths(repo)) == sorted([str(repo), *kept])
    assert len([b for b in branches(repo) if b.startswith("worktree-")]) == 5


async def test_continuing_an_agent_whose_worktree_was_removed(tmp_path: Path) -> None:
    """SendMessage to a finished agent that changed nothing: its worktree is gone, so it works in the parent's folder."""
    repo = make_repo(tmp_path / "repo")
    turns: list[dict[str, Any]] = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("toolu_p1", "CHILD JOB", isolation="worktree")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True, "last_user_contains": "agentId"},
         "content": [tool("toolu_p2", "SendMessage", to=AGENT_ID, message="AGAIN please")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB", "last_user_contains": "AGAIN", "last_is_tool_result": False},
         "content": [tool("c_again", "Bash", command="pwd")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "again done"}]},
        {"match": {"first_user_contains": "CHILD JOB"}, "content": [{"type": "text", "text": "nothing to do"}]},
    ]
    events = await drive(make_app(tmp_path, repo, turns))
    again = results(events, parent=False)["c_again"]
    assert not again.get("is_error") and text_of(again).strip() == str(repo)
    assert worktree_paths(repo) == [str(repo)]


async def test_a_markdown_definition_can_set_cwd(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    elsewhere = repo / "elsewhere"  # a project agent file may name folders inside the project only
    elsewhere.mkdir()
    (repo / ".catui" / "agents").mkdir(parents=True)
    (repo / ".catui" / "agents" / "placed.md").write_text(
        f"---\nname: placed\ndescription: Runs elsewhere.\ncwd: {elsewhere}\n---\nPLACED\n"
    )
    turns = [
        *parent_turns(agent_call("toolu_p1", "CWD JOB", "placed")),
        {"match": {"first_user_contains": "CWD JOB", "last_is_tool_result": False},
         "content": [tool("c_pwd", "Bash", command="pwd"),
                     tool("c_write", "Write", file_path=str(elsewhere / "made.txt"), content="x\n")]},
        {"match": {"first_user_contains": "CWD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "there"}]},
    ]
    events = await drive(make_app(tmp_path, repo, turns, permission_mode="acceptEdits"))
    found = results(events, parent=False)
    assert text_of(found["c_pwd"]).strip() == str(elsewhere.resolve())
    assert not found["c_write"].get("is_error") and (elsewhere / "made.txt").exists()  # its folder is a working dir


def test_definition_cwd_must_be_absolute_and_plugins_cannot_set_it() -> None:
    from catui.agents.json_agents import agents_from_json_mapping

    def load(cwd: object, **where: Any) -> tuple[str | None, list[str]]:
        agents, _failed, warnings = agents_from_json_mapping(
            {"x": {"description": "d", "prompt": "p", "cwd": cwd}}, **{"source": "flagSettings", "origin": "--agents",
                                                                         **where})
        return agents[0].cwd, [w.message for w in warnings]

    assert load("/srv/data") == ("/srv/data", [])
    assert load("data") == (None, ["agent 'x': cwd 'data' must be an absolute folder path; ignored"])
    cwd, warnings = load("/srv/data", source="plugin", origin="plug", plugin_name="plug")
    assert cwd is None and "'cwd' is ignored in plugin agents" in warnings[0]


async def test_an_agent_resumed_after_a_restart_in_its_kept_worktree_stays_confined(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wt = repo / ".catui" / "worktrees" / SLUG
    first: list[dict[str, Any]] = [
        *parent_turns(agent_call("toolu_p1", "CHILD JOB", isolation="worktree")),
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False},
         "content": [tool("c_write", "Write", file_path=str(wt / "work.txt"), content="kept\n")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "wrote"}]},
    ]
    await drive(make_app(tmp_path, repo, first, permission_mode="acceptEdits"))
    assert (wt / "work.txt").exists()
    clear_provider_cache()
    second: list[dict[str, Any]] = [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        {"match": {"first_user_contains": "AGAIN PARENT", "last_is_tool_result": False},
         "content": [tool("toolu_s1", "SendMessage", to=AGENT_ID, message="AGAIN please")]},
        {"match": {"first_user_contains": "AGAIN PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB", "last_user_contains": "AGAIN", "last_is_tool_result": False},
         "content": [tool("r_pwd", "Bash", command="pwd"),
                     tool("r_main", "Write", file_path=str(repo / "leak.txt"), content="x\n")]},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "again done"}]},
    ]
    events = await drive(make_app(tmp_path, repo, second, permission_mode="acceptEdits"), "AGAIN PARENT")
    found = results(events, parent=False)
    assert text_of(found["r_pwd"]).strip() == str(wt)
    assert found["r_main"].get("is_error") and "outside the working directories" in text_of(found["r_main"])
    assert not (repo / "leak.txt").exists()
