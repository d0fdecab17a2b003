"""Workflows (issue 30): a 100-agent ``parallel`` workflow against the same agents from one message, the
script engine's start-up, the memory 1,000 workflow agents add, and a 1,000-agent workflow on one and on
two Ray nodes.

Run from the repository root::

    .venv/bin/python benchmarks/bench_workflows.py [--agents 100] [--delay-ms 50] [--runs 3] [--scale 1000]
                                                   [--ray-agents 1000]

- wall: ``catui workflow run`` of a script whose ``parallel`` starts N agents (cap N) against
  ``catui -p`` whose first answer holds N Agent calls; the children answer after ``--delay-ms`` from
  tests/support/anthropic_server.py on 127.0.0.1. Goal: workflow / one message <= 1.2 (median of runs).
- engine start-up: a fresh process imports QuickJS and runs ``return 1`` through ScriptEngine (goal < 50 ms).
- memory: peak RSS of ``catui workflow run`` with ``--scale`` agents against one agent, on the in-process
  scripted provider (goal: under 200 MB added).
- Ray: ``catui workflow run --executor ray`` of a ``--ray-agents`` ``parallel`` workflow (cap 32; the
  children answer at once from the loopback server) on a local cluster of one node, then of two nodes
  (``ray.cluster_utils.Cluster``, one CPU each: two host processes per node); agents a second over the
  run (its record's ``durationMs``, host start-up included) and the two-node / one-node ratio.
  Outside git, then in a git repository (the agents of a run share one snapshot of it). ``--ray-agents 0``
  skips it (it needs the ``ray`` extra); ``--ray-only`` runs only it.
Nothing is asserted; figures and ratios are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402

PARENT = "BENCH-WORKFLOW-PARENT"


def base_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home / "home"),
            "CATUI_HOME": str(home / "catui-home"), "PYTHONPATH": str(ROOT / "src"), **extra}


def child_turn(delay_ms: int) -> dict[str, Any]:
    return {"match": {"first_user_contains": "FAN-"}, "repeat": True, "delay_ms": delay_ms,
            "content": [{"type": "text", "text": "ok"}]}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[3:5]} failed: {done.stderr[-800:]}")
    return elapsed


def wall_case(agents: int, delay_ms: int, runs: int) -> tuple[float, float]:
    calls = [{"type": "tool_use", "name": "Agent", "input": {
        "description": f"fan {i}", "prompt": f"FAN-{i}-END", "subagent_type": "general-purpose"}} for i in range(agents)]
    turns = [child_turn(delay_ms),
             {"match": {"first_user_contains": PARENT, "last_is_tool_result": False}, "repeat": True, "content": calls},
             {"match": {"first_user_contains": PARENT, "last_is_tool_result": True}, "repeat": True,
              "content": [{"type": "text", "text": "done"}]}]
    workflow_times, message_times = [], []
    with AnthropicTestServer({"turns": turns}, ping=False) as server, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "fan.js").write_text(
            f"return (await parallel(Array.from({{length: {agents}}}, (_, i) => () => agent('FAN-' + i + '-END'))))"
            ".length\n", encoding="utf-8")
        env = base_env(folder, {**server.env("test"), "CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS": str(agents),
                                "CATUI_COMPAT": "2.1.92"})
        for _ in range(runs):
            workflow_times.append(timed([sys.executable, "-m", "catui", "workflow", "run", "fan.js",
                                         "--permission-mode", "bypassPermissions"], folder, env))
            message_times.append(timed([sys.executable, "-m", "catui", "-p", PARENT,
                                        "--permission-mode", "bypassPermissions"], folder, env))
    return statistics.median(workflow_times), statistics.median(message_times)


ENGINE_PROBE = """
import asyncio, time
t = time.perf_counter()
from catui.workflows.engine import ScriptEngine
class Host:
    async def agent(self, p, o): return p
    def phase(self, t): pass
    def log(self, m): pass
    def budget(self, w): return None
    async def sub_workflow(self, n, a): return None
value = asyncio.run(ScriptEngine(source="export const meta = {name: 'x'}\\nreturn 1", args=None, host=Host()).run())
print((time.perf_counter() - t) * 1000)
"""


def engine_startup_ms(runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    samples = [float(subprocess.run([sys.executable, "-c", ENGINE_PROBE], env=env, capture_output=True, text=True,
                                    check=True).stdout.strip()) for _ in range(max(3, runs))]
    return statistics.median(samples)


def peak_rss_mb(agents: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "script.yaml"
        script.write_text(yaml.safe_dump({"turns": [{"repeat": True, "content": [{"type": "text", "text": "ok"}]}]}))
        (folder / "fan.js").write_text(
            f"return (await parallel(Array.from({{length: {agents}}}, (_, i) => () => agent('FAN-' + i + '-END'))))"
            ".length\n", encoding="utf-8")
        env = base_env(folder, {"CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS": "16"})
        code = ("import resource, subprocess, sys; "
                "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "catui", "workflow", "run", "fan.js",
                               "--model", f"scripted:{script}", "--permission-mode", "bypassPermissions"],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-800:])
        return int(done.stdout.strip()) / 1024


def ray_rate(agents: int, nodes: int, *, in_git: bool) -> tuple[float, float]:
    """(agents a second over the run, the process's wall seconds) of an ``agents`` workflow on ``nodes`` nodes,
    run in a git repository (each agent gets a copy of it) or in a folder outside git."""
    os.environ["RAY_AUTH_MODE"] = "disabled"
    from ray.cluster_utils import Cluster

    turns = [{"match": {"first_user_contains": "FAN-"}, "repeat": True, "content": [{"type": "text", "text": "ok"}]}]
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        with AnthropicTestServer({"turns": turns}, ping=False) as server, tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "fan.js").write_text(
                f"return (await parallel(Array.from({{length: {agents}}}, (_, i) => () => agent('FAN-' + i + '-END'))))"
                ".length\n", encoding="utf-8")
            if in_git:
                for step in (["init", "-q"], ["add", "fan.js"], ["-c", "user.name=b", "-c", "user.email=b@x",
                                                               "commit", "-qm", "start"]):
                    subprocess.run(["git", *step], cwd=folder, check=True, capture_output=True)
            env = base_env(folder, {**server.env("test"), "CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS": "32",
                                    "RAY_ADDRESS": cluster.address, "RAY_AUTH_MODE": "disabled"})
            argv = [sys.executable, "-m", "catui", "workflow", "run", "fan.js", "--executor", "ray",
                    "--permission-mode", "bypassPermissions"]
            wall = timed(argv, folder, env)
            [record] = list((folder / "catui-home" / "projects").glob("*/workflows/wf_*.json"))
            data = json.loads(record.read_text(encoding="utf-8"))
            if data.get("status") != "completed" or data["counts"]["agents_done"] != agents:
                errors = [line for line in (record.parent / record.stem / "journal.jsonl").read_text().splitlines()
                          if '"error"' in line]
                raise SystemExit(f"the Ray workflow on {nodes} node(s) did not finish: {data.get('error')} "
                                 f"{len(errors)} agents failed, e.g. {errors[:1]}")
            return agents / (data["durationMs"] / 1000), wall
    finally:
        cluster.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--delay-ms", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1000)
    parser.add_argument("--ray-agents", type=int, default=1000)
    parser.add_argument("--ray-only", action="store_true", help="run only the Ray section")
    options = parser.parse_args()
    figures: dict[str, Any] = {}
    if not options.ray_only:
        startup = engine_startup_ms(options.runs)
        print(f"engine start-up (import QuickJS + run `return 1`): {startup:.1f} ms (goal < 50 ms)")
        workflow_s, message_s = wall_case(options.agents, options.delay_ms, options.runs)
        print(f"{options.agents} agents, children answer in {options.delay_ms} ms (median of {options.runs}):")
        print(f"  workflow parallel: {workflow_s:.2f} s; one message: {message_s:.2f} s; "
              f"ratio {workflow_s / message_s:.2f} (goal <= 1.2)")
        one, many = peak_rss_mb(1), peak_rss_mb(options.scale)
        print(f"peak RSS: 1 agent {one:.0f} MB, {options.scale} agents {many:.0f} MB: +{many - one:.0f} MB "
              f"(goal < 200 MB)")
        figures.update({"engine_startup_ms": round(startup, 1), "workflow_s": round(workflow_s, 3),
                        "one_message_s": round(message_s, 3), "ratio": round(workflow_s / message_s, 3),
                        "rss_1_mb": round(one), f"rss_{options.scale}_mb": round(many)})
    if options.ray_agents:
        print(f"Ray, {options.ray_agents}-agent workflow, cap 32 (agents/s over the run; process wall time):")
        for in_git, where in ((False, "outside git"), (True, "in a git repository")):
            (one_rate, one_wall), (two_rate, two_wall) = (ray_rate(options.ray_agents, nodes, in_git=in_git)
                                                          for nodes in (1, 2))
            print(f"  {where}: 1 node {one_rate:.1f}/s ({one_wall:.1f} s); 2 nodes {two_rate:.1f}/s "
                  f"({two_wall:.1f} s); ratio 2/1 {two_rate / one_rate:.2f}")
            tag = "git" if in_git else "plain"
            figures.update({f"ray_{tag}_1_node_per_s": round(one_rate, 1),
                            f"ray_{tag}_2_nodes_per_s": round(two_rate, 1),
                            f"ray_{tag}_ratio": round(two_rate / one_rate, 3)})
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
