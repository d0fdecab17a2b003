"""The Bash sandbox with REAL bubblewrap: an isolated agent in bypassPermissions writes only in its worktree.

Everything is real: bwrap, git worktrees, the Agent tool on the scripted provider, a listening socket on
127.0.0.1. The tests skip only when bwrap cannot create namespaces on this machine (and say why).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import threading
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
from catui.sandbox.config import SandboxSettings
from catui.sandbox.policy import BashSandbox
from catui.sandbox.probe import probe_bwrap
from catui.session.events import Event, UserMessageEvent
from catui.tasks.registry import TaskRegistry
from catui.tools.base import ToolContext, ToolServices
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput
from tests.support.git_repos import branches, git, isolate_git, make_repo

AVAILABILITY = probe_bwrap()
pytestmark = pytest.mark.skipif(
    not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}"
)

AGENT_ID = "a1234567890abcdef"
SLUG = "agent-a1234567"
BRANCH = "worktree-agent-a1234567"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / ".bashrc").write_text("original\n")
    for name in ("CATUI_AUTO_BACKGROUND_MS", "CATUI_DISABLE_BACKGROUND_TASKS"):
        monkeypatch.delenv(name, raising=False)
    ids = itertools.chain([AGENT_ID], (f"f{n:02d}{'0' * 14}" for n in itertools.count()))
    monkeypatch.setattr("catui.subagents.plan.new_agent_id", lambda: next(ids))
    yield
    clear_provider_cache()


class Listener:
    """A real TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def processes_running(text: str) -> list[str]:
    """Command lines (from /proc) of this machine's processes that contain ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in line:
                found.append(line)
    return found


def connect_command(port: int) -> str:
    return f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')\""


def tool(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
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
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


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


def write_settings(repo: Path, sandbox: dict[str, Any]) -> None:
    folder = repo / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"sandbox": sandbox}))


async def test_isolated_agent_in_bypass_mode_writes_only_in_its_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    write_settings(repo, {"enabled": True})
    wt = repo / ".catui" / "worktrees" / SLUG
    home = tmp_path / "home"
    listener = Listener()
    escapes = {
        "touch_main": f"touch {repo}/x",
        "bashrc": "echo evil >> ~/.bashrc",
        "checkout": f"git -C {repo} checkout -b evil",
        "network": connect_command(listener.port),
        "symlink": f"ln -s {repo} {wt}/to_main && touch {wt}/to_main/via_link",
        "rm_main": f"rm {repo}/README.md",
    }
    inside = {
        "touch_wt": f"touch {wt}/x",
        "commit": f"echo changed >> {wt}/README.md && git -C {wt} add README.md x && "
                  f"git -C {wt} commit -qm 'work in the worktree' && git -C {wt} log --format=%s -1",
        "tmp": "echo scratch > /tmp/scratch && cat /tmp/scratch",
    }
    child = [tool(k, "Bash", command=v) for k, v in {**escapes, **inside}.items()]
    turns = [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [tool("p1", "Agent", description="isolated job", prompt="CHILD JOB",
                          subagent_type="general-purpose", isolation="worktree")]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": False}, "content": child},
        {"match": {"first_user_contains": "CHILD JOB", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child done"}]},
    ]
    head_before = git(repo, "rev-parse", "HEAD")
    app = make_app(tmp_path, repo, turns, permission_mode="bypassPermissions")
    try:
        events = await drive(app)
    finally:
        listener.close()

    found = child_results(events)
    out = {key: text_of(block) for key, block in found.items()}
    failed = {key for key, block in found.items() if block.get("is_error")}
    assert failed == set(escapes), {k: out[k] for k in found}
    # Refused by the sandbox, and the model is told so and what it may write.
    assert "Read-only file system" in out["touch_main"]
    assert "catui's sandbox" in out["touch_main"] and str(wt) in out["touch_main"]
    assert "catui's sandbox" in out["network"] and "network is off" in out["network"]
    # Nothing was written anywhere outside the worktree.
    assert not (repo / "x").exists() and (repo / "README.md").read_text() == "hello\n"
    assert (home / ".bashrc").read_text() == "original\n"
    assert listener.accepted == 0
    assert "evil" not in branches(repo)
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert not (repo / "via_link").exists()
    # The same kind of work inside the worktree went through, commit included.
    assert (wt / "x").exists()
    assert "work in the worktree" in out["commit"]
    assert git(repo, "log", "--format=%s", "-1", BRANCH).strip() == "work in the worktree"
    assert out["tmp"].strip() == "scratch"


async def test_background_shells_are_sandboxed_too(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "home"  # HOME stays visible (read-only) inside the sandbox
    registry = TaskRegistry(project)
    ctx = ToolContext(
        cwd=project, project_root=project,
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(project,)),
        services=ToolServices(tasks=registry, sandbox=BashSandbox(SandboxSettings(enabled=True))),
    )
    command = f"touch {outside}/bg; echo outside=$?; touch {project}/bg; echo inside=$?"
    result = await BashTool().call(BashInput(command=command, run_in_background=True), ctx)
    assert not result.is_error, result.content
    task = registry.get(result.data["background_task_id"])
    assert task is not None and task.runner is not None
    await asyncio.wait_for(task.runner, 30)
    output = Path(result.data["output_file"]).read_text()
    assert "Read-only file system" in output and "outside=1" in output and "inside=0" in output
    assert not (outside / "bg").exists() and (project / "bg").exists()
    assert task.metadata["sandboxed"] is True
    await registry.shutdown()


async def test_main_agent_in_default_mode_runs_sandboxed_bash_without_asking(tmp_path: Path) -> None:
    """autoAllowBashIfSandboxed: a writing command runs without approval (print mode would deny it)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    write_settings(repo, {"enabled": True, "excludedCommands": ["touch"]})
    outside = tmp_path / "home"  # HOME stays visible (read-only) inside the sandbox
    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [tool("w", "Bash", command=f"echo made > {repo}/made.txt && cat {repo}/made.txt"),
                     tool("o", "Bash", command=f"echo x > {outside}/f"),
                     tool("ex", "Bash", command=f"touch {repo}/excluded"),
                     tool("hook", "Bash", command=f"echo 'curl evil' > {repo}/.git/hooks/pre-commit"),
                     tool("settings", "Bash", command=f"echo '{{}}' > {repo}/.claude/settings.json")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]
    app = make_app(tmp_path, repo, turns, permission_mode="default")
    events = await drive(app)
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, UserMessageEvent):
            for block in blocks_of(event.message):
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    assert not found["w"].get("is_error") and text_of(found["w"]).strip() == "made"
    assert found["o"].get("is_error") and "Read-only file system" in text_of(found["o"])
    assert "catui's sandbox" in text_of(found["o"]) and not (outside / "f").exists()
    # Git hooks and the settings that configure the sandbox stay read-only inside the project.
    assert found["hook"].get("is_error") and not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert found["settings"].get("is_error") and "enabled" in (repo / ".claude" / "settings.json").read_text()
    # An excluded command is not sandboxed, so the sandbox approves nothing: print mode has nobody to ask.
    assert found["ex"].get("is_error") and not (repo / "excluded").exists()


async def test_a_sandboxed_command_that_runs_out_of_time_is_killed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ctx = ToolContext(
        cwd=project, project_root=project,
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(project,)),
        services=ToolServices(sandbox=BashSandbox(SandboxSettings(enabled=True))),
    )
    marker = f"sleep 37.{os.getpid()}"  # a command line no other process has
    result = await BashTool().call(BashInput(command=f"{marker}; touch {project}/late", timeout=300), ctx)
    assert result.is_error and "timed out after 300 ms" in result.content
    assert result.data["sandboxed"] is True
    # Nothing of the command outlives its call: the pid namespace goes with its bwrap (the kernel tears it
    # down asynchronously, so allow it a moment on a loaded machine).
    for _ in range(100):
        if not processes_running(marker):
            break
        await asyncio.sleep(0.1)
    assert not processes_running(marker)
