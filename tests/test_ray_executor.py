"""Background agents on a real local Ray cluster (one per module), driven through a real app on the scripted model.

The child's session loop runs in a Ray worker process (another pid, recorded
in its task meta); its repository travels as a git bundle and its changes come
back as a kept worktree. Agents that must stay running wait in a Bash loop on a
file the test creates, so no ordering here depends on timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml

from catui.app import AgentApp, RunOptions, build_app
from catui.cli.run import conversation_events
from catui.errors import ConfigurationError
from catui.messages import blocks_of
from catui.models.resolve import clear_provider_cache
from catui.sandbox.probe import probe_bwrap
from catui.session.events import ErrorEvent, Event
from catui.state.db import StateDB
from catui.subagents.executors.choice import RayOptions, executor_name, ray_options
from catui.subagents.send_message import SendMessageTool
from catui.subagents.send_message_input import SendMessageInput
from tests.support.cli_env import SRC
from tests.support.git_repos import branches, git, isolate_git, make_repo, worktree_paths

GUARD_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)
WORKER = {"description": "Does one job.", "prompt": "You are the worker agent.", "tools": ["Bash", "Read", "Write"]}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """One local cluster on 127.0.0.1 for the whole module (CLI children join it through RAY_ADDRESS)."""
    # No token file under the user's home: the CLI children run with a home of their own.
    os.environ["RAY_AUTH_MODE"] = "disabled"
    context = ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ray_cluster: str) -> Iterator[None]:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    for name in ("CATUI_AUTO_BACKGROUND_MS", "CATUI_DISABLE_BACKGROUND_TASKS", "CATUI_EXECUTOR"):
        monkeypatch.delenv(name, raising=False)
    yield
    clear_provider_cache()


OPEN_APPS: list[AgentApp] = []


@pytest.fixture(autouse=True)
async def _close_apps() -> Any:
    """Each test's apps are closed after it, which ends their host actors on the cluster."""
    yield
    while OPEN_APPS:
        await OPEN_APPS.pop().aclose()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "project", {"notes.txt": "hello\n", "src/app.py": "print('hi')\n"})
    (repo / "notes.txt").write_text("hello\nuncommitted line\n", encoding="utf-8")  # the caller's own edit
    return repo


def make_app(tmp_path: Path, project: Path, turns: list[dict[str, Any]], settings: dict[str, Any] | None = None,
             agent: dict[str, Any] | None = None, **env: str) -> AgentApp:
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    options = RunOptions(cwd=project, model=f"scripted:{script}", flag_agents={"worker": agent or WORKER},
                         env={"ANTHROPIC_API_KEY": "sk-test-secret-123", **env}, executor="ray",
                         permission_mode="bypassPermissions",
                         settings_arg=json.dumps(settings) if settings is not None else None)
    app = build_app(options)
    OPEN_APPS.append(app)
    return app


def agent_call(key: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Agent", "input": {
        "description": f"Job {key}", "prompt": f"Do {key}", "subagent_type": "worker", "run_in_background": True}}


def worker_turns(key: str, tool: dict[str, Any] | None, answer: str) -> list[dict[str, Any]]:
    """The worker's turns for job ``key``: one tool call (or none), then ``answer``."""
    match = {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}"}
    turns: list[dict[str, Any]] = []
    if tool is not None:
        turns.append({"match": {**match, "last_is_tool_result": False}, "content": [tool]})
    turns.append({"match": {**match, "last_is_tool_result": tool is not None}, "content": [{"type": "text", "text": answer}]})
    return turns


def parent_turns(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "Start", "last_is_tool_result": False}, "content": list(calls)},
        {"match": {"first_user_contains": "Start", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Launched."}]},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
    ]


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command, "description": "work"}}


def wait_for_file(path: Path) -> dict[str, Any]:
    return bash(f"while [ ! -e {path} ]; do sleep 0.05; done; echo released")


async def drive(app: AgentApp, prompt: str = "Start") -> list[Event]:
    events: list[Event] = []

    async def collect() -> None:
        async for event in conversation_events(app, prompt):
            events.append(event)

    await asyncio.wait_for(collect(), GUARD_S)
    return events


def notifications(app: AgentApp) -> list[str]:
    return [
        block["text"] for message in app.session.messages if message.get("role") == "user"
        for block in blocks_of(message) if block.get("type") == "text"
        and str(block.get("text", "")).startswith("<task-notification>")
    ]


def task_rows(project: Path) -> list[dict[str, Any]]:
    state = StateDB(project)
    try:
        return state.list_tasks()
    finally:
        state.close()


def placement_of(row: dict[str, Any]) -> dict[str, Any]:
    """Where a task's agent runs, from its state.db meta (``placement_<field>`` keys)."""
    return {k.removeprefix("placement_"): v for k, v in row["meta"].items() if k.startswith("placement_")}


async def until(predicate: Any) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), GUARD_S)


# -- the remote run ------------------------------------------------------------------------------------------


async def test_edit_comes_back_as_kept_worktree_and_no_change_leaves_nothing(tmp_path: Path, project: Path) -> None:
    edit = bash("echo 'added remotely' >> notes.txt && cat notes.txt")
    look = bash("cat notes.txt")
    turns = parent_turns(agent_call("edit"), agent_call("look"))
    turns += worker_turns("edit", edit, "Edited notes.") + worker_turns("look", look, "Looked only.")
    app = make_app(tmp_path, project, turns)
    await drive(app)

    texts = notifications(app)
    assert len(texts) == 2, texts  # one notification each, exactly once
    edited = next(t for t in texts if "Job edit" in t)
    looked = next(t for t in texts if "Job look" in t)
    assert "<status>completed</status>" in edited and "Edited notes." in edited
    assert "<worktree>" in edited and "<worktree>" not in looked

    kept = [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p]
    assert len(kept) == 1
    kept_notes = (Path(kept[0]) / "notes.txt").read_text(encoding="utf-8")
    # the worker saw the caller's uncommitted line, and its own edit came back
    assert kept_notes == "hello\nuncommitted line\nadded remotely\n"
    assert (project / "notes.txt").read_text(encoding="utf-8") == "hello\nuncommitted line\n"  # caller untouched
    assert sum(b.startswith("worktree-agent-") for b in branches(project)) == 1
    assert git(project, "for-each-ref", "refs/catui") == ""  # the snapshot ref is dropped

    rows = {r["description"]: r for r in task_rows(project)}
    for description in ("Job edit", "Job look"):
        placement = placement_of(rows[description])
        assert placement["executor"] == "ray" and placement["pid"] != os.getpid() and placement["node"]
    output = app.tasks.output_path(rows["Job edit"]["id"])
    lines = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert any("added remotely" in json.dumps(line) for line in lines)  # the tool result streamed back
    meta = json.loads(output.with_name(f"{rows['Job edit']['id']}.meta.json").read_text(encoding="utf-8"))
    assert meta["placement"] == placement_of(rows["Job edit"])
    # the key travelled only in the job's runtime environment
    assert "sk-test-secret-123" not in output.read_text(encoding="utf-8")


async def test_worker_runs_with_the_key_in_its_environment_only(tmp_path: Path, project: Path) -> None:
    show = bash("echo key=${ANTHROPIC_API_KEY:0:7}")
    app = make_app(tmp_path, project, parent_turns(agent_call("env")) + worker_turns("env", show, "Env shown."))
    await drive(app)
    row = task_rows(project)[0]
    text = app.tasks.output_path(row["id"]).read_text(encoding="utf-8")
    assert "key=sk-test" in text
    assert git(project, "log", "--all", "-p").find("sk-test-secret") == -1


async def test_stop_cancels_on_the_cluster(tmp_path: Path, project: Path) -> None:
    never = tmp_path / "never-created"
    turns = parent_turns(agent_call("hold")) + worker_turns("hold", wait_for_file(never), "unreachable")
    app = make_app(tmp_path, project, turns)
    driver = asyncio.ensure_future(drive(app))
    await until(lambda: any(r["meta"].get("placement_pid") for r in task_rows(project)))
    row = task_rows(project)[0]
    await until(lambda: bool(processes_mentioning(str(never))))  # its Bash loop runs on the worker
    await asyncio.wait_for(app.tasks.stop(row["id"]), GUARD_S)
    await driver
    assert task_rows(project)[0]["status"] == "stopped"
    texts = notifications(app)
    assert len(texts) == 1 and "<status>stopped</status>" in texts[0]
    await until(lambda: not processes_mentioning(str(never)))  # the child's work was cancelled there


async def test_killed_worker_fails_the_task_with_the_reason(tmp_path: Path, project: Path) -> None:
    never = tmp_path / "never-created"
    turns = parent_turns(agent_call("doomed")) + worker_turns("doomed", wait_for_file(never), "unreachable")
    app = make_app(tmp_path, project, turns)
    driver = asyncio.ensure_future(drive(app))
    await until(lambda: any(r["meta"].get("placement_pid") for r in task_rows(project)))
    pid = task_rows(project)[0]["meta"]["placement_pid"]
    os.kill(pid, signal.SIGKILL)
    try:
        await driver
    finally:
        # The killed worker's Bash loop outlives it (orphaned, polling 20 times a second): release it.
        never.touch()
    row = task_rows(project)[0]
    assert row["status"] == "failed"
    assert "RemoteWorkerDied" in str(row["error"]) and str(pid) in str(row["error"])
    texts = notifications(app)
    assert len(texts) == 1 and "<status>failed</status>" in texts[0]


async def test_killed_worker_is_retried_when_the_setting_allows(tmp_path: Path, project: Path) -> None:
    flag = tmp_path / "second-attempt"
    # The first attempt waits (and is killed); the retry finds the flag the test wrote and finishes.
    turns = parent_turns(agent_call("retry")) + worker_turns("retry", wait_for_file(flag), "Done on retry.")
    app = make_app(tmp_path, project, turns, CATUI_RAY_MAX_RETRIES="1")
    driver = asyncio.ensure_future(drive(app))
    await until(lambda: any(r["meta"].get("placement_pid") for r in task_rows(project)))
    first = placement_of(task_rows(project)[0])
    os.kill(first["pid"], signal.SIGKILL)
    await until(lambda: placement_of(task_rows(project)[0]).get("attempt") == 2)
    flag.write_text("go", encoding="utf-8")
    await driver
    row = task_rows(project)[0]
    assert row["status"] == "completed" and row["meta"]["placement_pid"] != first["pid"]
    texts = notifications(app)
    assert len(texts) == 1 and "Done on retry." in texts[0]


async def test_send_message_reaches_the_remote_agent(tmp_path: Path, project: Path) -> None:
    release = tmp_path / "release"
    match = {"system_contains": "You are the worker agent", "first_user_contains": "Do talk"}
    turns = [
        *parent_turns(agent_call("talk")),
        {"match": {**match, "last_is_tool_result": False}, "content": [wait_for_file(release)]},
        {"match": {**match, "last_user_contains": "the password is swordfish"},
         "content": [{"type": "text", "text": "Heard: swordfish."}]},
    ]
    app = make_app(tmp_path, project, turns, CATUI_AGENT_TEAMS="1")
    driver = asyncio.ensure_future(drive(app))
    await until(lambda: any(r["meta"].get("placement_pid") for r in task_rows(project)))
    agent_id = task_rows(project)[0]["id"]
    sent = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=agent_id, message="the password is swordfish"),
                                        app.session.ctx)
    assert not sent.is_error, sent.content
    await until(lambda: not app.services.subagents.live.inboxes.get(agent_id))  # forwarded to the worker
    release.write_text("go", encoding="utf-8")
    await driver
    texts = notifications(app)
    assert len(texts) == 1 and "Heard: swordfish." in texts[0]


async def test_resumed_remote_agent_continues_in_its_kept_worktree(tmp_path: Path, project: Path) -> None:
    match = {"system_contains": "You are the worker agent", "first_user_contains": "Do twice"}
    turns = [
        *parent_turns(agent_call("twice")),
        {"match": {**match, "last_user_contains": "Do twice", "last_is_tool_result": False},
         "content": [bash("echo first > twice.txt")]},
        {"match": {**match, "last_user_contains": "again please", "last_is_tool_result": False},
         "content": [bash("echo second >> twice.txt")]},
        {"match": {**match, "last_is_tool_result": True}, "content": [{"type": "text", "text": "Wrote it."}],
         "repeat": True},
    ]
    app = make_app(tmp_path, project, turns, CATUI_AGENT_TEAMS="1")
    await drive(app)
    [row] = task_rows(project)
    [kept] = [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p]
    assert (Path(kept) / "twice.txt").read_text(encoding="utf-8") == "first\n"
    sent = await SendMessageTool(app.services.subagents.messaging).call(SendMessageInput(to=row["id"], message="again please"), app.session.ctx)
    assert not sent.is_error, sent.content
    await until(lambda: task_rows(project)[0]["status"] == "completed")
    assert [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p] == [kept]
    assert (Path(kept) / "twice.txt").read_text(encoding="utf-8") == "first\nsecond\n"
    assert placement_of(task_rows(project)[0])["executor"] == "ray"


def test_executor_choice_and_bad_values() -> None:
    assert executor_name(None, {}, {}) == "in-process"
    assert executor_name(None, {"executor": "ray"}, {}) == "ray"
    assert executor_name(None, {"executor": "ray"}, {"CATUI_EXECUTOR": "in-process"}) == "in-process"
    assert executor_name("ray", {}, {"CATUI_EXECUTOR": "in-process"}) == "ray"
    with pytest.raises(ConfigurationError, match="CATUI_EXECUTOR is 'dask'; use one of: in-process, ray"):
        executor_name(None, {}, {"CATUI_EXECUTOR": "dask"})
    assert ray_options({"ray": {"maxRetries": 2, "hosts": 6}}, {}) == RayOptions(max_retries=2, hosts=6)
    assert ray_options({}, {"CATUI_RAY_MAX_RETRIES": "1"}).max_retries == 1
    with pytest.raises(ConfigurationError, match=re.escape("settings key `ray.hosts` is 0; it must be a number above 0")):
        ray_options({"ray": {"hosts": 0}}, {})
    with pytest.raises(ConfigurationError, match="CATUI_RAY_MAX_RETRIES is 'x'; it must be a number 0 or more"):
        ray_options({}, {"CATUI_RAY_MAX_RETRIES": "x"})
    with pytest.raises(ConfigurationError, match=re.escape("settings key `ray.retries` is unknown")):
        ray_options({"ray": {"retries": 1}}, {})


def test_bad_executor_setting_is_one_line_from_the_cli(tmp_path: Path, project: Path) -> None:
    script = tmp_path / "hi.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "hi"}]}]}), encoding="utf-8")
    (project / ".catui").mkdir(exist_ok=True)
    (project / ".catui" / "settings.json").write_text(json.dumps({"executor": "spark"}), encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "CATUI_HOME": str(tmp_path / "catui-home"), "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--model", f"scripted:{script}"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    settings_file = project / ".catui" / "settings.json"
    assert f"settings key `executor` in {settings_file} is 'spark'; use one of: in-process, ray" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if pid != os.getpid()]


# -- a foreground agent moved to the background continues on the cluster -------------------------------------


def foreground_call(key: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Agent", "input": {
        "description": f"Job {key}", "prompt": f"Do {key}", "subagent_type": "worker", **extra}}


def moving_worker_turns(key: str, release: Path) -> list[dict[str, Any]]:
    """A worker whose first tool round (in process) waits for ``release``, then works on the worker."""
    match = {"system_contains": "You are the worker agent", "first_user_contains": f"Do {key}"}
    return [
        {"match": {**match, "last_is_tool_result": False},
         "content": [bash(f"while [ ! -e {release} ]; do sleep 0.05; done; echo local-step >> notes.txt; "
                          "echo local-pid=$PPID")]},
        {"match": {**match, "last_user_contains": "local-pid="},
         "content": [bash("echo remote-step >> notes.txt; echo remote-done")]},
        {"match": {**match, "last_user_contains": "remote-done"},
         "content": [{"type": "text", "text": f"Moved and finished {key}."}]},
    ]


async def test_auto_backgrounded_agent_continues_on_a_worker(tmp_path: Path, project: Path) -> None:
    release = tmp_path / "release"
    turns = parent_turns(foreground_call("move")) + moving_worker_turns("move", release)
    app = make_app(tmp_path, project, turns, CATUI_AUTO_BACKGROUND_MS="50")
    driver = asyncio.ensure_future(drive(app))
    # Moved to the background (a task now) while its tool call still runs in this process.
    await until(lambda: bool(task_rows(project)))
    assert not placement_of(task_rows(project)[0]).get("pid")  # the running tool round is not cut off
    release.write_text("go", encoding="utf-8")
    await driver

    [row] = task_rows(project)
    assert row["status"] == "completed"
    placement = placement_of(row)
    assert placement["executor"] == "ray" and placement["pid"] != os.getpid()
    texts = notifications(app)
    assert len(texts) == 1 and "Moved and finished move." in texts[0]
    # The first tool round ran here, in the caller's tree; the rest on the worker, back as a kept worktree.
    assert (project / "notes.txt").read_text(encoding="utf-8") == "hello\nuncommitted line\nlocal-step\n"
    [kept] = [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p]
    assert (Path(kept) / "notes.txt").read_text(encoding="utf-8") == \
        "hello\nuncommitted line\nlocal-step\nremote-step\n"
    # One conversation: the local tool result once, then the remote turns, in the output file.
    lines = app.tasks.output_path(row["id"]).read_text(encoding="utf-8").splitlines()
    results = [json.loads(line)["message"] for line in lines if '"tool_result"' in line]
    assert [blocks_of(m)[0]["content"] for m in results] == [f"local-pid={os.getpid()}", "remote-done"]
    meta = json.loads(app.tasks.output_path(row["id"]).with_name(f"{row['id']}.meta.json").read_text(encoding="utf-8"))
    assert meta["placement"]["pid"] == placement["pid"]


async def test_worktree_agent_moved_by_request_continues_from_its_worktree(tmp_path: Path, project: Path) -> None:
    release = tmp_path / "release"
    turns = parent_turns(foreground_call("iso", isolation="worktree")) + moving_worker_turns("iso", release)
    app = make_app(tmp_path, project, turns)
    driver = asyncio.ensure_future(drive(app))
    await until(lambda: bool(processes_mentioning(str(release))))  # its first tool call runs here
    runtime = app.services.subagents.runtime
    moved = asyncio.ensure_future(runtime.background_all_foreground())  # Ctrl-B / the SDK's control
    await until(lambda: bool(task_rows(project)))
    release.write_text("go", encoding="utf-8")
    assert len(await asyncio.wait_for(moved, GUARD_S)) == 1
    await driver

    [row] = task_rows(project)
    assert row["status"] == "completed" and placement_of(row)["pid"] != os.getpid()
    assert (project / "notes.txt").read_text(encoding="utf-8") == "hello\nuncommitted line\n"  # caller untouched
    # Its work so far (in its worktree) travelled with it; its new commits went back onto that worktree.
    [kept] = [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p]
    assert (Path(kept) / "notes.txt").read_text(encoding="utf-8") == "hello\nlocal-step\nremote-step\n"
    texts = notifications(app)
    assert len(texts) == 1 and "Moved and finished iso." in texts[0] and kept in texts[0]


# -- the sandbox and hooks of the caller's settings apply on the worker --------------------------------------


@pytest.mark.skipif(not probe_bwrap().usable, reason="bubblewrap cannot create namespaces on this machine")
async def test_sandbox_and_hooks_of_the_settings_apply_on_the_worker(tmp_path: Path, project: Path) -> None:
    outside = tmp_path / "outside.txt"
    hook_log = tmp_path / "hooks.jsonl"
    hook = {"type": "command", "command": f"cat >> {hook_log}; echo >> {hook_log}"}
    settings = {"sandbox": {"enabled": True},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}], "SubagentStart": [{"hooks": [hook]}]}}
    work = bash(f"echo escaped > {outside}; echo outside-exit=$?; echo inside > inside.txt; echo inside-exit=$?")
    app = make_app(tmp_path, project, parent_turns(agent_call("box")) + worker_turns("box", work, "Boxed."),
                   settings=settings)
    await drive(app)

    [row] = task_rows(project)
    assert row["status"] == "completed" and placement_of(row)["pid"] != os.getpid()
    lines = app.tasks.output_path(row["id"]).read_text(encoding="utf-8").splitlines()
    [result] = [blocks_of(json.loads(line)["message"])[0]["content"] for line in lines if '"tool_result"' in line]
    assert "inside-exit=0" in result
    # The write to /tmp succeeded in the sandbox's private /tmp and never reached this machine's.
    assert not outside.exists()
    [kept] = [p for p in worktree_paths(project) if ".catui/worktrees/agent-" in p]
    assert (Path(kept) / "inside.txt").read_text(encoding="utf-8") == "inside\n"
    # The hooks ran on the worker, in its checkout, once each (not also in this process).
    payloads = [json.loads(line) for line in hook_log.read_text(encoding="utf-8").splitlines() if line.strip()]
    events = sorted(p["hook_event_name"] for p in payloads if p.get("agent_id") == row["id"])
    assert events == ["PreToolUse", "SubagentStart"]
    assert all("catui-agents" in p["cwd"] for p in payloads if p.get("agent_id") == row["id"])


MCP_SERVER = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"


async def test_project_mcp_servers_start_on_the_worker_when_their_command_exists_there(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `ghost-mcp` is on this process's PATH only: the cluster's workers were started without it.
    local_bin = tmp_path / "local-bin"
    local_bin.mkdir()
    ghost = local_bin / "ghost-mcp"
    ghost.write_text(f"#!/bin/sh\nexec {sys.executable} {MCP_SERVER}\n", encoding="utf-8")
    ghost.chmod(0o755)
    monkeypatch.setenv("PATH", f"{local_bin}:{os.environ['PATH']}")
    servers = {"tools": {"command": sys.executable, "args": [str(MCP_SERVER)]}, "ghost": {"command": "ghost-mcp"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    agent = {**WORKER, "tools": ["Bash", "mcp__tools__echo", "mcp__ghost__echo"]}
    echo = {"type": "tool_use", "name": "mcp__tools__echo", "input": {"text": "echoed on the worker"}}
    turns = parent_turns(agent_call("mcp")) + worker_turns("mcp", echo, "Echoed.")
    app = make_app(tmp_path, project, turns, settings={"enableAllProjectMcpServers": True}, agent=agent)
    events = await drive(app)

    [row] = task_rows(project)
    assert row["status"] == "completed" and placement_of(row)["pid"] != os.getpid()
    lines = app.tasks.output_path(row["id"]).read_text(encoding="utf-8").splitlines()
    [result] = [blocks_of(json.loads(line)["message"])[0] for line in lines if '"tool_result"' in line]
    assert not result.get("is_error") and "echoed on the worker" in json.dumps(result["content"])
    notices = [e.message for e in events if isinstance(e, ErrorEvent) and e.agent_id == row["id"]]
    assert notices == ["[ray worker] MCP server 'ghost' is not started on the Ray worker: its command 'ghost-mcp' "
                       "is not found there (install it on the nodes); its tools are left out"]
    assert len(notifications(app)) == 1
