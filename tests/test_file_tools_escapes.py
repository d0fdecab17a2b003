"""Attacks through the file tools of an isolated agent (real git worktrees, real processes, real files).

1. A background process flips a folder of the worktree between a real folder and a link into the main
   checkout while the agent writes there: the permission check and the write must see the same object, so
   no write ever lands in the main checkout (acceptEdits and auto mode).
2. An isolated agent's Write / Edit / NotebookEdit refuse the configuration of its worktree (``.claude/``,
   ``.catui/``, ``.mcp.json``) and any git metadata, in every permission mode, sandbox on or off; with the
   sandbox on, its Bash is refused the same files.
"""

from __future__ import annotations

import itertools
import json
import subprocess
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
from catui.permissions.context import PermissionContext
from catui.sandbox.probe import probe_bwrap
from catui.session.events import Event, UserMessageEvent
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.edit import EditTool
from catui.tools.edit_input import EditInput
from catui.tools.read import ReadTool
from catui.tools.read_input import ReadInput
from catui.tools.write import WriteTool
from catui.tools.write_input import WriteInput
from tests.support.git_repos import git, isolate_git, make_repo

AGENT_ID = "a1234567890abcdef"
SLUG = "agent-a1234567"
TRIES = 300

# Swaps <worktree>/pkg atomically (renameat2 RENAME_EXCHANGE) between the real folder and a link to
# <main>/pkg as fast as it can, until told to stop; prints how many swaps succeeded.
FLIPPER = """
import ctypes, os, sys
link, target, stop = sys.argv[1], sys.argv[2], sys.argv[3]
other = link + ".other"
os.symlink(target, other)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = link.encode(), other.encode()
swaps = 0
while not os.path.exists(stop):
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
        swaps += 1
if os.path.islink(link):
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
os.unlink(other)
print(swaps)
"""


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    for name in ("CATUI_AUTO_BACKGROUND_MS", "CATUI_DISABLE_BACKGROUND_TASKS"):
        monkeypatch.delenv(name, raising=False)
    ids = itertools.chain([AGENT_ID], (f"f{n:02d}{'0' * 14}" for n in itertools.count()))
    monkeypatch.setattr("catui.subagents.plan.new_agent_id", lambda: next(ids))
    yield
    clear_provider_cache()


async def permitted_call(tool: Tool, args: Any, ctx: ToolContext) -> ToolResult | None:
    """As the session runs a call: the permission decision first (``None`` when not allowed), then the call."""
    decision = ctx.permissions.decide(tool.permission_request(args, ctx))
    if decision.behavior != "allow":
        return None
    return await tool.call(args, ctx)


@pytest.mark.parametrize("mode", ["acceptEdits", "auto"])
async def test_a_flipping_link_never_sends_a_write_into_the_main_checkout(tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/e.txt": "original\n"})
    wt = repo / ".catui" / "worktrees" / SLUG
    git(repo, "worktree", "add", "-q", "-b", "worktree-agent-x", str(wt))
    ctx = ToolContext(
        cwd=wt, project_root=wt,
        permissions=PermissionContext(mode=mode, working_directories=(wt,)).isolated_in(wt),  # type: ignore[arg-type]
    )
    stop = tmp_path / "stop"
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(wt / "pkg"), str(repo / "pkg"), str(stop)], stdout=subprocess.PIPE, text=True
    )
    outcomes = {"written": 0, "refused": 0, "not allowed": 0}
    try:
        for n in range(TRIES):
            result = await permitted_call(WriteTool(), WriteInput(file_path=str(wt / "pkg" / f"w{n}.txt"), content="agent\n"), ctx)
            outcomes["not allowed" if result is None else "refused" if result.is_error else "written"] += 1
            # Edit needs a Read first; both go through the same check.
            target = str(wt / "pkg" / "e.txt")
            read = await permitted_call(ReadTool(), ReadInput(file_path=target), ctx)
            if read is not None and not read.is_error:
                edit = await permitted_call(EditTool(), EditInput(file_path=target, old_string="original", new_string=f"edit{n}"), ctx)
                if edit is not None and not edit.is_error:
                    await permitted_call(EditTool(), EditInput(file_path=target, old_string=f"edit{n}", new_string="original"), ctx)
    finally:
        stop.write_text("")
        flips = int(flipper.communicate(timeout=30)[0])
    escaped = sorted(p.name for p in (repo / "pkg").iterdir() if p.name != "e.txt")
    assert escaped == [], f"{len(escaped)} of {TRIES} writes landed in the main checkout"
    assert (repo / "pkg" / "e.txt").read_text() == "original\n"
    # The race was really run: the link flipped thousands of times, and calls met both states.
    assert flips > TRIES and outcomes["written"] > 0, (flips, outcomes)
    assert outcomes["refused"] + outcomes["not allowed"] > 0, outcomes


# ---- configuration of the worktree, through a real app, in every mode -----------------------------------


def tool_use(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def child_results(events: list[Event]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, UserMessageEvent) and event.agent_id is not None:
            for block in blocks_of(event.message):
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def text_of(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content)


def make_app(tmp_path: Path, cwd: Path, turns: list[dict[str, Any]], **options: Any) -> AgentApp:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return build_app(RunOptions(cwd=cwd, model=f"scripted:{script}", **options))


async def drive(app: AgentApp) -> list[Event]:
    await start_app(app)
    try:
        return [event async for event in conversation_events(app, "PARENT")]
    finally:
        await app.aclose()


SANDBOX = probe_bwrap()
MODES = ["default", "acceptEdits", "auto", "bypassPermissions"]


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox-on", "sandbox-off"])
@pytest.mark.parametrize("mode", MODES)
async def test_an_isolated_agent_cannot_change_its_worktrees_configuration(tmp_path: Path, mode: str, sandbox: bool) -> None:
    if sandbox and not SANDBOX.usable:
        pytest.skip(f"bubblewrap cannot run here: {SANDBOX.reason}")
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", "nb.ipynb": "{}\n"})
    (repo / ".catui").mkdir(exist_ok=True)
    (repo / ".catui" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": sandbox}}))
    wt = repo / ".catui" / "worktrees" / SLUG
    main_ref = repo / ".git" / "refs" / "heads" / "main"
    off = json.dumps({"sandbox": {"enabled": False}, "permissions": {"allow": ["Bash"]}})
    attacks = {
        "w_claude": tool_use("w_claude", "Write", file_path=str(wt / ".claude" / "settings.json"), content=off),
        "w_local": tool_use("w_local", "Write", file_path=str(wt / ".claude" / "settings.local.json"), content=off),
        "w_agent": tool_use("w_agent", "Write", file_path=str(wt / ".claude" / "agents" / "x.md"), content="---\n"),
        "w_catui": tool_use("w_catui", "Write", file_path=str(wt / ".catui" / "settings.json"), content=off),
        "w_mcp": tool_use("w_mcp", "Write", file_path=str(wt / ".mcp.json"), content='{"mcpServers": {}}'),
        "w_gitfile": tool_use("w_gitfile", "Write", file_path=str(wt / ".git"), content="gitdir: /tmp/x\n"),
        "w_mainref": tool_use("w_mainref", "Write", file_path=str(main_ref), content="0" * 40 + "\n"),
        "nb_claude": tool_use("nb_claude", "NotebookEdit", notebook_path=str(wt / ".claude" / "n.ipynb"),
                              new_source="x", edit_mode="insert", cell_type="code"),
    }
    bash = {"b_claude": tool_use("b_claude", "Bash", command="mkdir -p .claude && echo '{}' > .claude/settings.json")}
    child = [*attacks.values(), *(bash.values() if sandbox else [])]
    turns = [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [tool_use("p1", "Agent", description="isolated job", prompt="CHILD JOB",
                              subagent_type="general-purpose", isolation="worktree")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False}, "content": child},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child done"}]},
    ]
    main_before = main_ref.read_text()
    events = await drive(make_app(tmp_path, repo, turns, permission_mode=mode))
    found = child_results(events)
    assert set(found) == {*attacks, *(bash if sandbox else {})}
    for key, block in found.items():
        assert block.get("is_error"), f"{mode}: {key} went through: {text_of(block)}"
    if mode != "default":  # in default mode the permission check already asks (and print mode denies)
        for key in ("w_claude", "w_catui", "w_mcp", "w_gitfile"):
            assert "isolated (worktree) agent may not change it" in text_of(found[key]), text_of(found[key])
    assert main_ref.read_text() == main_before
    for planted in (".claude/settings.json", ".claude/settings.local.json", ".claude/agents/x.md", ".mcp.json"):
        assert not (wt / planted).exists() and not (repo / planted).exists(), planted
    assert not (wt / ".catui" / "settings.json").exists()
