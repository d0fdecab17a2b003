"""The tool-call window and the pool's connection limits, measured on a 100-way Agent fan-out (issue 13).

Run from the repository root::

    .venv/bin/python benchmarks/bench_fanout_window.py [--fanout 100] [--delay-ms 50] [--runs 3]
    .venv/bin/python benchmarks/bench_fanout_window.py --scale 1000 [--runs 1]

The real CLI (``python -m catui -p``) sends one parent message with N Explore
calls to tests/support/anthropic_server.py on 127.0.0.1; every child answers
after ``--delay-ms``. The figure is the parent's tool round, timed in the
server: the parent's response carrying the calls ends → its next request
arrives (median of ``--runs`` runs). Baselines measured in the same run:

- one child (a fan-out of 1) at the same delay: what one child costs end to end;
- the fan-out at window N (all at once) against a server that accepts promptly.

Cases: window N against a prompt server (goals: <= 0.3 s over one child and a
peak RSS of the CLI <= 20 MB above one child's), window 10 (goal: within 10%
of 10 × one child), then a server with a listen backlog of 5 that accepts
slowly (``--accept-delay-ms`` before each accept; the issue's slow
``http.server``) at window 10 and window N (goal: under 2 s), and at window N
with the pool capped at 10 connections. Nothing is asserted; ratios are printed.

``--scale N`` measures issue 13's scale goal instead: N Explore children from
one message at window 100 against the prompt server (goal: a tool round
<= 3 s and a peak RSS of the CLI process <= 150 MB above a trivial run),
against one child at window 100 as the baseline (tool round and peak RSS).
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

from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.loopback import Fault, RecordedRequest  # noqa: E402

from catui.models.replay.scripted import RequestView  # noqa: E402

PARENT = "BENCH-WINDOW-PARENT"
PROFILE_TO: list[str] = []
"""``--profile FILE``: the CLI of the fan-out runs (not the one-child baseline) runs under cProfile into FILE."""


class RoundTimer(AnthropicTestServer):
    """Records when each of the parent's requests arrived and when its answer ended."""

    def __init__(self, script: Any) -> None:
        super().__init__(script, ping=False)
        self.parent_times: list[tuple[float, float]] = []
        self._times_lock = threading.Lock()

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        arrived = time.perf_counter()
        super().handle_post(handler, request, fault)
        body = request.body if isinstance(request.body, dict) else {}
        if PARENT in RequestView.from_anthropic(body).first_user_text:
            with self._times_lock:
                self.parent_times.append((arrived, time.perf_counter()))

    def tool_round_s(self) -> float:
        first, second = sorted(self.parent_times)[:2]
        return second[0] - first[1]


def script(count: int, delay_ms: int) -> dict[str, Any]:
    calls = [{"type": "tool_use", "name": "Agent", "input": {
        "description": f"explore {i}", "prompt": f"FAN-{i}-END", "subagent_type": "Explore"}} for i in range(count)]
    return {"turns": [
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "FAN-"}, "delay_ms": delay_ms, "repeat": True,
         "content": [{"type": "text", "text": "found"}]},
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": True},
         "content": [{"type": "text", "text": "done"}]},
    ]}


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("Benchmark project.\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def one_run(
    base: Path, count: int, delay_ms: int, window: int, *, backlog: int | None, accept_delay_s: float,
    extra_env: dict[str, str] | None = None, peak_rss: list[int] | None = None,
    cpu: list[tuple[float, float]] | None = None,
) -> float:
    # The previous run's thousands of files are still being written back; let that finish first so
    # one run's disk work does not land in the next one's figure.
    os.sync()
    server = RoundTimer(script(count, delay_ms))
    server.listen_backlog = backlog
    server.accept_delay_s = accept_delay_s
    server.start()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(base / "home"),
        "CATUI_HOME": str(base / "catui-home"),
        "PYTHONPATH": str(ROOT / "src"),
        "CATUI_TELEMETRY": "0",
        "CATUI_MAX_TOOL_USE_CONCURRENCY": str(window),
        **server.env("test"),
        **(extra_env or {}),
    }
    out_path, err_path = base / "stdout.txt", base / "stderr.txt"
    server_cpu_start = time.process_time()
    try:
        with out_path.open("w") as out, err_path.open("w") as err:
            profile = ["-m", "cProfile", "-o", PROFILE_TO[0]] if PROFILE_TO and count > 1 else []
            child = subprocess.Popen([sys.executable, *profile, "-m", "catui", "-p", PARENT, "--output-format", "json"],
                                     cwd=base / "repo", env=env, stdout=out, stderr=err, text=True)
            # wait4 gives this process's own peak RSS (getrusage(RUSAGE_CHILDREN) keeps the max of all children).
            _pid, _status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(_status)
    finally:
        server.stop()
    stdout, stderr = out_path.read_text(), err_path.read_text()
    if '"is_error": false' not in stdout:
        raise SystemExit(f"the benchmark run failed:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    if peak_rss is not None:
        peak_rss.append(usage.ru_maxrss * 1024)  # kilobytes on Linux
    if cpu is not None:
        # On a two-core machine the loopback server (this process) and the CLI share the cores,
        # so the CPU each used says which side bounds the tool round.
        cpu.append((usage.ru_utime + usage.ru_stime, time.process_time() - server_cpu_start))
    return server.tool_round_s()


def median_of(runs: int, *args: Any, **kwargs: Any) -> float:
    return statistics.median(one_run(*args, **kwargs) for _ in range(max(1, runs)))


def scale(args: argparse.Namespace) -> None:
    """Issue 13's scale goal: ``args.scale`` children at window 100 against one child at window 100."""
    n, delay, window = args.scale, args.delay_ms, 100
    prompt = {"backlog": 1024, "accept_delay_s": 0.0}
    trivial_rss: list[int] = []
    wide_rss: list[int] = []
    wide_cpu: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        make_repo(base)
        one_child = median_of(args.runs, base, 1, delay, window, **prompt, peak_rss=trivial_rss)
        wide = median_of(args.runs, base, n, delay, window, **prompt, peak_rss=wide_rss, cpu=wide_cpu)
    trivial_mb = statistics.median(trivial_rss) / 2**20
    wide_mb = statistics.median(wide_rss) / 2**20
    print(f"{n} Explore children from one message at window {window}, each answering after {delay} ms, "
          f"prompt server ({args.runs} runs, medians)")
    print(f"  baseline, one child: tool round {one_child * 1000:8.1f} ms, peak RSS {trivial_mb:6.1f} MB")
    print(f"  {n} children:        tool round {wide * 1000:8.1f} ms = {wide / one_child:6.2f}x one child "
          f"(goal <= 3000 ms; {n / window:.0f} waves x one child = {n / window * one_child * 1000:.0f} ms)")
    print(f"                       peak RSS {wide_mb:6.1f} MB = +{wide_mb - trivial_mb:.1f} MB over one child "
          f"= {wide_mb / trivial_mb:.2f}x (goal <= +150 MB)")
    cli_cpu = statistics.median(c for c, _ in wide_cpu)
    server_cpu = statistics.median(s for _, s in wide_cpu)
    print(f"                       CPU: CLI {cli_cpu:.2f} s (whole run, start-up included), "
          f"loopback server {server_cpu:.2f} s; {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--delay-ms", type=int, default=50, help="each child's answer delay")
    parser.add_argument("--accept-delay-ms", type=float, default=5.0, help="the slow server's pause per accept")
    parser.add_argument("--runs", type=int, default=3, help="runs per case (the median is reported)")
    parser.add_argument("--scale", type=int, default=0,
                        help="measure N children at window 100 (peak RSS and tool round) instead of the window cases")
    parser.add_argument("--profile", metavar="FILE", help="run the fan-out's CLI under cProfile, stats into FILE")
    args = parser.parse_args()
    if args.profile:
        PROFILE_TO.append(str(Path(args.profile).resolve()))
    if args.scale:
        scale(args)
        return
    n, delay = args.fanout, args.delay_ms
    slow = {"backlog": 5, "accept_delay_s": args.accept_delay_ms / 1000}
    prompt = {"backlog": 1024, "accept_delay_s": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        make_repo(base)
        one_rss: list[int] = []
        wide_rss: list[int] = []
        one_child = median_of(args.runs, base, 1, delay, n, **prompt, peak_rss=one_rss)
        wide = median_of(args.runs, base, n, delay, n, **prompt, peak_rss=wide_rss)
        narrow = median_of(args.runs, base, n, delay, 10, **prompt)
        slow_narrow = median_of(args.runs, base, n, delay, 10, **slow)
        slow_wide = median_of(args.runs, base, n, delay, n, **slow)
        slow_wide_capped = median_of(args.runs, base, n, delay, n, **slow,
                                     extra_env={"CATUI_MAX_CONNECTIONS_PER_HOST": "10"})
    waves = -(-n // 10)
    print(f"{n}-way Explore fan-out, each child answering after {delay} ms ({args.runs} runs, medians)")
    print(f"  baseline, one child:                 {one_child * 1000:8.1f} ms")
    print(f"  window {n:<3}, prompt server:         {wide * 1000:8.1f} ms = {wide / one_child:5.2f}x one child"
          f"  (overhead over one child: {(wide - one_child) * 1000:.0f} ms; goal <= 300 ms)")
    one_mb, wide_mb = statistics.median(one_rss) / 2**20, statistics.median(wide_rss) / 2**20
    print(f"                 peak RSS of the CLI: {wide_mb:6.1f} MB against {one_mb:.1f} MB for one child "
          f"= +{wide_mb - one_mb:.1f} MB (goal <= +20 MB)")
    # A child's latency is what one child costs the parent end to end (the baseline), not the server's delay alone.
    print(f"  window 10,  prompt server:         {narrow * 1000:8.1f} ms = {narrow / (waves * one_child):5.2f}x "
          f"{waves} x one child (goal <= 1.10x); {narrow / (waves * delay / 1000):5.2f}x {waves} x the server's "
          f"{delay} ms")
    print(f"  window 10,  backlog 5, slow accept: {slow_narrow * 1000:8.1f} ms = {slow_narrow / narrow:5.2f}x "
          "the prompt server (goal < 2 s)")
    print(f"  window {n:<3}, backlog 5, slow accept: {slow_wide * 1000:8.1f} ms = {slow_wide / wide:5.2f}x "
          "the prompt server (goal < 2 s)")
    print(f"  window {n:<3}, same, 10 connections:  {slow_wide_capped * 1000:8.1f} ms = "
          f"{slow_wide_capped / wide:5.2f}x the prompt server (CATUI_MAX_CONNECTIONS_PER_HOST=10)")


if __name__ == "__main__":
    main()
