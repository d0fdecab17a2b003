"""What running agents on Ray costs against running them in this process.

Run from the repository root (needs the ``ray`` extra; starts a local cluster on 127.0.0.1)::

    .venv/bin/python benchmarks/bench_ray.py [--agents 5] [--tasks 200] [--levels 1,2,8]

Everything uses the scripted provider (answers at once, no network) and the
real application, in a temporary git repository:

- per-agent overhead: N background agents one after another, each answering
  in one turn. For each: launch (the parent's Agent call returns) → the
  child's first model answer reaches the parent, and the child's last event →
  the ``task_notification`` event (notification latency). Medians, in-process
  against Ray.
- ``catui batch`` throughput: the same T scripted tasks at each concurrency
  level, through ``run_batch`` on each executor; tasks a second, with the
  ratio to the in-process run at concurrency 1.

Nothing is asserted; numbers are printed with their baseline from the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from catui.app import RunOptions, build_app  # noqa: E402
from catui.app.batch import run_batch  # noqa: E402
from catui.cli.run import conversation_events  # noqa: E402
from catui.models.resolve import clear_provider_cache  # noqa: E402
from catui.session.events import AssistantMessageEvent, SystemEvent, ToolEndEvent  # noqa: E402

WORKER = {"description": "Does one job.", "prompt": "You are the worker agent.", "tools": ["Read"]}


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    (root / "README.md").write_text("bench\n", encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


def agent_script(folder: Path) -> Path:
    turns = [
        {"match": {"system_contains": "You are the worker agent"}, "content": [{"type": "text", "text": "Done."}],
         "repeat": True},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Launched."}], "repeat": True},
        {"match": {"last_is_tool_result": False}, "repeat": True, "content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "Bench job", "prompt": "Do it", "subagent_type": "worker", "run_in_background": True}}]},
    ]
    path = folder / "agents.yaml"
    path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return path


async def agent_overhead(repo: Path, script: Path, executor: str, agents: int) -> tuple[list[float], list[float]]:
    """Per agent: (launch → first child answer seen here, child's last event → notification event), in ms."""
    launch_to_first: list[float] = []
    notify: list[float] = []
    app = build_app(RunOptions(cwd=repo, model=f"scripted:{script}", flag_agents={"worker": WORKER},
                               executor=executor, permission_mode="bypassPermissions"))
    try:
        for _ in range(agents):
            launched = first = last = None
            async for event in conversation_events(app, "Start"):
                now = time.perf_counter()
                if isinstance(event, ToolEndEvent) and event.name == "Agent" and event.agent_id is None:
                    launched = now
                elif isinstance(event, AssistantMessageEvent) and event.agent_id is not None:
                    first = first or now
                    last = now
                elif isinstance(event, SystemEvent) and event.subtype == "task_notification" and last is not None:
                    notify.append((now - last) * 1000)
            if launched is not None and first is not None:
                launch_to_first.append((first - launched) * 1000)
    finally:
        await app.aclose()
        clear_provider_cache()
    return launch_to_first, notify


def batch_script(folder: Path) -> Path:
    path = folder / "batch.yaml"
    path.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}),
                    encoding="utf-8")
    return path


async def batch_rate(repo: Path, script: Path, executor: str, tasks: int, concurrency: int) -> float:
    options = RunOptions(cwd=repo, model=f"scripted:{script}", permission_mode="bypassPermissions")
    items = [{"id": f"t{i}", "prompt": f"Task {i}"} for i in range(tasks)]
    started = time.perf_counter()
    summary = await run_batch(items, executor=executor, concurrency=concurrency, options=options)
    elapsed = time.perf_counter() - started
    clear_provider_cache()
    if summary.completed != tasks:
        print(f"  warning: {tasks - summary.completed} tasks did not complete on {executor}")
    return tasks / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--levels", default="1,2,8")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    os.environ["RAY_AUTH_MODE"] = "disabled"
    import ray

    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory(prefix="catui-bench-ray-") as scratch:
            folder = Path(scratch)
            os.environ["CATUI_HOME"] = str(folder / "home")
            repo = make_repo(folder / "repo")
            script = agent_script(folder)
            print(f"per-agent overhead, {args.agents} background agents one after another (median ms):")
            rows = {}
            for executor in ("in-process", "ray"):
                rows[executor] = asyncio.run(agent_overhead(repo, script, executor, args.agents))
            base_first = statistics.median(rows["in-process"][0])
            base_note = statistics.median(rows["in-process"][1])
            for executor, (first, note) in rows.items():
                print(f"  {executor:<11} launch→first answer {statistics.median(first):8.1f} ms "
                      f"({statistics.median(first) / base_first:6.1f}x)   "
                      f"last event→notification {statistics.median(note):7.1f} ms "
                      f"({statistics.median(note) / base_note:5.1f}x)")
            print(f"\ncatui batch throughput, {args.tasks} scripted tasks (tasks/s, ratio to in-process at 1):")
            bscript = batch_script(folder)
            base = None
            print(f"  {'concurrency':<12}" + "".join(f"{e:>24}" for e in ("in-process", "ray")))
            for level in levels:
                cells = []
                for executor in ("in-process", "ray"):
                    rate = asyncio.run(batch_rate(repo, bscript, executor, args.tasks, level))
                    base = base or rate
                    cells.append(f"{rate:10.1f} ({rate / base:6.2f}x)")
                print(f"  {level:<12}" + "".join(f"{c:>24}" for c in cells))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
