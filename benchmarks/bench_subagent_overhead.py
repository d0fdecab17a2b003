"""How much time and memory the sub-agent machinery adds, measured at a loopback Anthropic server.

Run from the repository root::

    .venv/bin/python benchmarks/bench_subagent_overhead.py [--rounds 20] [--fanout 100]

It starts tests/support/anthropic_server.py on 127.0.0.1 with an instantly
answering script and runs the real CLI (``python -m catui -p``) against it.
All times are taken in the server process:

- baseline: the parent's response carrying a trivial tool call ends → the
  parent's next request arrives (one back-to-back request, same run);
- spawn overhead: the parent's response carrying an Agent call ends → the
  child's first request arrives;
- return overhead: the child's final answer ends → the parent's next request
  arrives;
- fan-out: one parent message with N Explore calls, each child answering
  after 50 ms: the parent's tool round (its response ends → its next request
  arrives; median of ``--fanout-runs`` runs), the CLI process's CPU time and
  its peak RSS, each against a trivial run (one answer, no tools).

The server runs in this process (one thread per connection) and the CLI in
its own, so the server's CPU time is not charged to catui's process; but on a
machine with few cores the two compete, and other load on the machine
stretches the wall-clock figures. The CLI's extra CPU time for the fan-out
(from ``wait4``) does not depend on that: it is what catui itself spends.

Numbers are printed with their ratio to the baseline; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import loopback  # noqa: E402
from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.loopback import Fault, RecordedRequest  # noqa: E402

from catui.models.replay.scripted import RequestView  # noqa: E402

# 100 children connect at once; the stdlib's default listen backlog of 5 would make some wait for SYN retries.
loopback._Server.request_queue_size = 512

PARENT = "BENCH-PARENT"


class TimedServer(AnthropicTestServer):
    """Records, per request, the first user message text, when it arrived and when its answer ended."""

    def __init__(self, script: Any) -> None:
        super().__init__(script, ping=False)
        self.timings: list[tuple[str, float, float]] = []
        self._timing_lock = threading.Lock()

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        arrived = time.perf_counter()
        super().handle_post(handler, request, fault)
        ended = time.perf_counter()
        body = request.body if isinstance(request.body, dict) else {}
        with self._timing_lock:
            self.timings.append((RequestView.from_anthropic(body).first_user_text, arrived, ended))


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    (repo / "CLAUDE.md").write_text("Benchmark project.\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "init"],
                   check=True)
    return repo


def run_cli(base: Path, server: AnthropicTestServer, prompt: str) -> tuple[int, float]:
    """Run the CLI to completion; returns its peak resident memory in KiB and its CPU time in seconds."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(base / "home"),
        "CATUI_HOME": str(base / "catui-home"),
        "PYTHONPATH": str(ROOT / "src"),
        "CATUI_TELEMETRY": "0",
        # All children of the fan-out at once, as this benchmark has always measured (the default window is 10;
        # benchmarks/bench_fanout_window.py measures the window itself).
        "CATUI_MAX_TOOL_USE_CONCURRENCY": "1000",
        **server.env("test"),
    }
    proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", prompt, "--output-format", "json"],
                            cwd=base / "repo", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, _, rusage = os.wait4(proc.pid, 0)
    stdout = proc.stdout.read() if proc.stdout else b""
    stderr = proc.stderr.read() if proc.stderr else b""
    if b'"is_error": false' not in stdout:
        raise SystemExit(f"the benchmark run failed:\n{stdout.decode()[-2000:]}\n{stderr.decode()[-2000:]}")
    return int(rusage.ru_maxrss), rusage.ru_utime + rusage.ru_stime


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def overhead(base: Path, rounds: int, agent_type: str) -> dict[str, list[float]]:
    turns: list[dict[str, Any]] = []
    for k in range(rounds):
        turns.append({"name": f"noop-{k}", "match": {"first_user_contains": PARENT},
                      "content": [{"type": "tool_use", "name": "NoSuchBenchTool", "input": {}}]})
        turns.append({"name": f"spawn-{k}", "match": {"first_user_contains": PARENT},
                      "content": [{"type": "tool_use", "name": "Agent", "input": {
                          "description": f"bench {k}", "prompt": f"CHILD-{k}-END", "subagent_type": agent_type}}]})
        turns.append({"name": f"child-{k}", "match": {"first_user_contains": f"CHILD-{k}-END"},
                      "content": text(f"child {k} answer")})
    turns.append({"name": "final", "match": {"first_user_contains": PARENT}, "content": text("done")})
    server = TimedServer({"turns": turns})
    with server:
        run_cli(base, server, PARENT)
    parent = [(a, e) for t, a, e in server.timings if PARENT in t]
    children = {int(t.split("CHILD-")[1].split("-")[0]): (a, e) for t, a, e in server.timings if "CHILD-" in t}
    out: dict[str, list[float]] = {"baseline": [], "spawn": [], "return": []}
    for k in range(rounds):
        noop_req, spawn_req, after_req = parent[2 * k], parent[2 * k + 1], parent[2 * k + 2]
        child = children[k]
        out["baseline"].append(spawn_req[0] - noop_req[1])
        out["spawn"].append(child[0] - spawn_req[1])
        out["return"].append(after_req[0] - child[1])
    return out


def fanout(base: Path, count: int, delay_ms: int) -> tuple[float, int, int, float]:
    """One fan-out run and one trivial run: (parent tool round s, peak KiB, trivial peak KiB, extra CPU s)."""
    calls = [{"type": "tool_use", "name": "Agent", "input": {
        "description": f"explore {i}", "prompt": f"FAN-{i}-END", "subagent_type": "Explore"}} for i in range(count)]
    script = {"turns": [
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "FAN-"}, "delay_ms": delay_ms, "repeat": True, "content": text("found")},
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": True}, "content": text("done")},
    ]}
    server = TimedServer(script)
    with server:
        peak, cpu = run_cli(base, server, PARENT)
    parent = [(a, e) for t, a, e in server.timings if PARENT in t]
    trivial_server = TimedServer({"turns": [{"content": text("done"), "repeat": True}]})
    with trivial_server:
        trivial, trivial_cpu = run_cli(base, trivial_server, PARENT)
    return parent[1][0] - parent[0][1], peak, trivial, cpu - trivial_cpu


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms (min {min(values) * 1000:.2f}, max {max(values) * 1000:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="spawn/return measurements per agent type")
    parser.add_argument("--fanout", type=int, default=100, help="Explore agents in the fan-out message")
    parser.add_argument("--delay-ms", type=int, default=50, help="each fan-out child's answer delay")
    parser.add_argument("--fanout-runs", type=int, default=3, help="fan-out runs (the median is reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        make_repo(base)
        for agent_type in ("general-purpose", "Explore"):
            result = overhead(base, args.rounds, agent_type)
            baseline = statistics.median(result["baseline"])
            print(f"{agent_type} ({args.rounds} rounds)")
            print(f"  baseline (back-to-back request): {ms(result['baseline'])}")
            for key in ("spawn", "return"):
                median = statistics.median(result[key])
                print(f"  {key:6} overhead:                {ms(result[key])}  = {median / baseline:5.1f}x baseline"
                      f"  (goal < 5 ms)")
        runs = [fanout(base, args.fanout, args.delay_ms) for _ in range(max(1, args.fanout_runs))]
        turns = [r[0] for r in runs]
        turn = statistics.median(turns)
        peak, trivial = max(r[1] for r in runs), min(r[2] for r in runs)
        extra_cpu = statistics.median(r[3] for r in runs)
        print(f"fan-out: {args.fanout} Explore agents, each answering after {args.delay_ms} ms ({len(runs)} runs)")
        print(f"  parent tool round: {ms(turns)} = {turn / (args.delay_ms / 1000):.1f}x one child's answer time"
              f"  (goal < 300 ms)")
        print(f"  CLI CPU time over a trivial run: +{extra_cpu * 1000:.0f} ms "
              f"= {extra_cpu * 1000 / args.fanout:.2f} ms per child")
        print(f"  peak RSS: {peak / 1024:.1f} MiB vs trivial run {trivial / 1024:.1f} MiB: "
              f"+{(peak - trivial) / 1024:.1f} MiB (goal < 20 MiB)")


if __name__ == "__main__":
    main()
