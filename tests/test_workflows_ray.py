"""A workflow's agents on a real local two-node Ray cluster (issue 30, "Distributed").

The cluster (``ray.cluster_utils.Cluster``: a head and a second node, one CPU each, so the executor's four
host actors of half a CPU land two on each node) is started once for the module. ``catui workflow run
--executor ray`` runs in its own process and joins it through ``RAY_ADDRESS``; the agents answer from the
loopback Anthropic server in this process. The journal is written by the caller's process, in its
``CATUI_HOME``; each agent's result line says where it ran.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ray.cluster_utils import Cluster

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui
from tests.support.compat_cli import first_user_text, stream_run, text
from tests.support.git_repos import git, isolate_git, make_repo
from tests.support.otlp_receiver import OtlpReceiver

GUARD_S = 600  # a broken scenario fails here instead of hanging (not a timing assertion)
FAN = re.compile(r"FAN-(\d+)-END")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node and a second node on this machine, one CPU each (the tests are light)."""
    os.environ["RAY_AUTH_MODE"] = "disabled"  # the CLI children run with a home of their own
    local = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        local.add_node(num_cpus=1)
        local.wait_for_nodes()
        yield local
    finally:
        local.shutdown()


def node_ids(cluster: Cluster) -> set[str]:
    return {node.node_id for node in cluster.list_all_nodes()}


def fan_script(agents: int) -> str:
    """``agents`` agents in one ``parallel``; each answers a number, the script sums them."""
    return (f'export const meta = {{ name: "fan", description: "{agents} agents on the cluster" }}\n'
            f"const answers = await parallel(Array.from({{length: {agents}}}, (_, i) => () => "
            "agent('FAN-' + i + '-END', {label: 'fan ' + i})))\n"
            "return {count: answers.length, sum: answers.reduce((total, a) => total + Number(a), 0), "
            "first: answers[0], last: answers[answers.length - 1]}\n")


def answers(agents: int, *, slow_from: int | None = None) -> dict[str, Any]:
    """Agent ``i`` answers ``7 * i``: at once, or after 3 s from agent ``slow_from`` on."""
    return {"turns": [{"match": {"first_user_contains": f"FAN-{i}-END"}, "repeat": True,
                       "delay_ms": 3000 if slow_from is not None and i >= slow_from else 0,
                       "content": [{"type": "text", "text": str(7 * i)}]} for i in range(agents)]}


def expected(agents: int) -> dict[str, Any]:
    return {"count": agents, "sum": 7 * sum(range(agents)), "first": "0", "last": str(7 * (agents - 1))}


def env_for(tmp_path: Path, server: AnthropicTestServer, cluster: Cluster) -> dict[str, str]:
    return cli_env(tmp_path, server, RAY_ADDRESS=cluster.address, RAY_AUTH_MODE="disabled",
                   CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS="32")


def asked(server: AnthropicTestServer) -> Counter[int]:
    """How many model requests each agent ``i`` made."""
    found = (FAN.search(first_user_text(r.body)) for r in list(server.requests) if isinstance(r.body, dict))
    return Counter(int(m.group(1)) for m in found if m is not None)


def journal(tmp_path: Path, run_id: str) -> list[dict[str, Any]]:
    """The run's journal, found where the caller keeps it: its own CATUI_HOME."""
    [path] = list((tmp_path / "catui-home" / "projects").rglob(f"workflows/{run_id}/journal.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_thousand_agent_workflow_runs_on_both_nodes_and_journals_here(tmp_path: Path, cluster: Cluster) -> None:
    agents = 1000
    (tmp_path / "fan.js").write_text(fan_script(agents), encoding="utf-8")
    with AnthropicTestServer(answers(agents), ping=False) as server:
        done = run_catui(tmp_path, env_for(tmp_path, server, cluster), "workflow", "run", "fan.js",
                         "--executor", "ray", "--permission-mode", "bypassPermissions", timeout=GUARD_S)
        assert done.returncode == 0, done.stderr[-2000:]
        run_id, result = done.stdout.splitlines()
        assert json.loads(result) == expected(agents)
        # every agent ran, once
        assert asked(server) == Counter(range(agents))

    entries = journal(tmp_path, run_id)
    results = [e for e in entries if e["type"] == "result"]
    assert len(results) == agents and len({e["key"] for e in results}) == agents
    assert sorted(int(e["result"]) for e in results) == [7 * i for i in range(agents)]
    placements = [e["placement"] for e in results]
    assert {p["executor"] for p in placements} == {"ray"}
    # both nodes ran agents, and 1,000 agents shared the executor's few host processes (two per node)
    assert {p["node"] for p in placements} == node_ids(cluster)
    workers = {(p["node"], p["pid"]) for p in placements}
    assert 2 <= len(workers) <= 4
    record = json.loads(next((tmp_path / "catui-home" / "projects").glob(f"*/workflows/{run_id}.json"))
                        .read_text(encoding="utf-8"))
    assert record["status"] == "completed" and record["counts"]["agents_done"] == agents


def test_a_ray_workflow_killed_midway_resumes_without_repeating_finished_agents(tmp_path: Path,
                                                                                  cluster: Cluster) -> None:
    agents = 120
    (tmp_path / "fan.js").write_text(fan_script(agents), encoding="utf-8")
    # The first 60 answer at once, the rest after 3 s: the kill lands after 40 results and before the end.
    with AnthropicTestServer(answers(agents, slow_from=60), ping=False) as server:
        env = env_for(tmp_path, server, cluster)
        process = subprocess.Popen([sys.executable, "-m", "catui", "workflow", "run", "fan.js", "--executor", "ray",
                                    "--permission-mode", "bypassPermissions"], cwd=tmp_path, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            run_id = process.stdout.readline().strip()
            deadline = time.monotonic() + GUARD_S
            while sum(e["type"] == "result" for e in journal(tmp_path, run_id)) < 40:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "no 40 results journaled"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
        finally:
            process.kill()
            process.communicate()
        before = {int(e["result"]) // 7 for e in journal(tmp_path, run_id) if e["type"] == "result"}
        assert 40 <= len(before) < agents

        resumed = run_catui(tmp_path, env, "workflow", "resume", run_id, "--executor", "ray",
                            "--permission-mode", "bypassPermissions", timeout=GUARD_S)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert json.loads(resumed.stdout.splitlines()[-1]) == expected(agents)
        requests = asked(server)
    # a journaled agent never ran again; every other agent ran (those cut off by the kill, once more)
    assert set(requests) == set(range(agents))
    assert all(requests[i] == 1 for i in before)
    results = [e for e in journal(tmp_path, run_id) if e["type"] == "result"]
    assert sorted(int(e["result"]) // 7 for e in results) == list(range(agents))


TOOL_SCRIPT = """export const meta = { name: "two-reads", description: "Read twice" }
const [first, second] = await parallel([() => agent("Question alpha"), () => agent("Question beta", {label: "beta"})])
return {first, second}
"""
READ_NOTES = {"type": "tool_use", "name": "Bash", "input": {"command": "cat notes.txt", "description": "read"}}
TOOL_TURNS: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "content": text("workflow noted"), "repeat": True},
    *({"match": {"first_user_contains": f"Question {name}", "last_is_tool_result": False},
       "content": [{**READ_NOTES, "id": f"toolu_{name}"}], "repeat": True} for name in ("alpha", "beta")),
    *({"match": {"first_user_contains": f"Question {name}", "last_is_tool_result": True},
       "content": text(f"{name} answer"), "repeat": True} for name in ("alpha", "beta")),
    {"match": {"first_user_contains": "Run it", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": TOOL_SCRIPT}}],
     "repeat": True},
    {"match": {"first_user_contains": "Run it", "last_is_tool_result": True}, "content": text("launched"),
     "repeat": True},
]}


def test_the_workflow_tools_agents_run_on_the_cluster_under_the_callers_trace(
        tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Workflow tool of a session with the Ray executor: its (foreground) agents go to the cluster, each
    in a checkout of the caller's repository (uncommitted work included), the journal stays in the session's
    folder here, and each agent's span, exported by the worker, hangs under the Workflow call in the caller's
    trace."""
    isolate_git(monkeypatch, tmp_path / "git-home")
    project = make_repo(tmp_path / "project", {"notes.txt": "committed line\n"})
    (project / "notes.txt").write_text("committed line\nuncommitted line\n", encoding="utf-8")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"workflows": True, "executor": "ray"}))
    with OtlpReceiver() as receiver, AnthropicTestServer(TOOL_TURNS) as server:
        env = {**env_for(tmp_path, server, cluster), **receiver.env()}
        done, lines = stream_run(project, env, "Run it", "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr[-2000:]
        receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) >= 2, "two agent spans")
        spans = list(receiver.spans)
        bodies = [r.body for r in list(server.requests) if isinstance(r.body, dict)]

    [launch] = [x for x in lines if x.get("type") == "user" and "toolu_wf" in json.dumps(x)]
    run_id, task_id = launch["tool_use_result"]["runId"], launch["tool_use_result"]["taskId"]
    assert any(x.get("subtype") == "task_notification" and x.get("task_id") == task_id
               and x.get("status") == "completed" for x in lines)
    results = [e for e in journal(tmp_path, run_id) if e["type"] == "result"]
    assert sorted(e["result"] for e in results) == ["alpha answer", "beta answer"]
    assert {e["placement"]["executor"] for e in results} == {"ray"}
    assert {e["placement"]["node"] for e in results} <= node_ids(cluster)
    # each agent read the caller's uncommitted line in its checkout on the worker
    for name in ("alpha", "beta"):
        read = [b for b in bodies if f"Question {name}" in first_user_text(b) and f"toolu_{name}" in json.dumps(b)]
        assert read and "uncommitted line" in json.dumps(read[-1]["messages"][-1])
    assert git(project, "for-each-ref", "refs/catui").strip() == ""  # the run's snapshot ref is dropped
    assert (project / "notes.txt").read_text(encoding="utf-8") == "committed line\nuncommitted line\n"
    assert git(project, "log", "--format=%s").split("\n")[0] == "initial"  # the caller's branch is untouched

    [call] = [s for s in spans if s["name"] == "claude_code.tool" and s["attributes"].get("tool_use_id") == "toolu_wf"]
    agents = [s for s in spans if s["name"] == "catui.agent"]
    assert sorted(a["attributes"]["catui.agent.description"] for a in agents) == ["Question alpha", "beta"]
    for agent in agents:
        assert agent["parent_span_id"] == call["span_id"] and agent["trace_id"] == call["trace_id"]
        # exported by the worker process that ran the agent, not by the caller
        assert agent["resource"]["process.pid"] != call["resource"]["process.pid"]
        assert agent["resource"]["process.pid"] in {e["placement"]["pid"] for e in results}
