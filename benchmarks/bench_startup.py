"""Process start to exit for catui's everyday commands, against ``python -c pass`` in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--importtime] [--against OTHER/src]

Cases, each the median of N fresh processes (runs interleaved, so that a
noisy moment hits every case alike):
  * ``python -c pass`` (the baseline),
  * ``catui --help`` (goal: under 60 ms),
  * ``catui agents list``,
  * a trivial ``catui -p`` on the scripted provider,
  * the trivial print-mode run ``catui -p hi --output-format json`` against the
    instant loopback Messages API server of ``tests/support/anthropic_server.py``
    (issue 28's goals: under 200 ms, at least 2.5x faster than the current
    Claude Code, at most 40 MB peak RSS),
  * a one-turn SDK ``catui.query()`` against the same server, process start to
    exit (goal: under 250 ms),
  * the current Claude Code's ``claude -p hi --output-format json`` against the
    same server, for the ratio: the native binary named by
    ``CATUI_BENCH_CLAUDE`` (``npm install @anthropic-ai/claude-code`` in a folder
    outside the repository; the binary is
    ``node_modules/@anthropic-ai/claude-code-linux-x64/claude``), else the column
    is skipped with the reason.
  * ``import catui``.
Prints wall-clock medians and minimums in ms, ratios to the baseline, the CPU time (user + system) of each
case, the peak RSS of each case (GNU time, the max of 3 runs) and
the goals met or missed. ``--importtime`` also lists the slowest imports of the
trivial print-mode run (``python -X importtime``). ``--against`` runs every catui case a
second time from another source tree (say, main exported with ``git archive``),
interleaved with this one, and prints this tree's median over the other's: an A/B in one run.
No network beyond 127.0.0.1; HOME and CATUI_HOME are temporary folders.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SCRIPT = "turns:\n  - content: [{type: text, text: 'pong'}]\n    repeat: true\n"
CLAUDE_ENV = "CATUI_BENCH_CLAUDE"
PRINT_CASE = "catui -p hi --output-format json"
SDK_CASE = "SDK query(), one turn"
CLAUDE_CASE = "claude -p hi --output-format json"
GOALS_MS = {"catui --help": 60.0, PRINT_CASE: 200.0, SDK_CASE: 250.0}
PRINT_RSS_GOAL_MB = 40.0
CLAUDE_RATIO_GOAL = 2.5
GNU_TIME = "/usr/bin/time"
RSS_RUNS = 3

SDK_PROGRAM = """
import asyncio, catui
async def main():
    async for message in catui.query("hi", catui.CatuiOptions(model="sonnet")):
        if isinstance(message, catui.ResultMessage):
            assert message.result == "pong", message
asyncio.run(main())
"""


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    # An installed catui has its bytecode compiled (pip does it) and, after its first run, its dataclasses'
    # generated methods (catui.dataclass_code); without them every run would compile again, so the warm-up
    # run must be allowed to write them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), NO_PROXY="127.0.0.1,localhost")
    return env


CPU_SECONDS: dict[tuple[str, ...], list[float]] = {}
"""Per argv and PYTHONPATH: the child's user + system CPU time of each run (steadier than wall time on a busy
machine; the A/B comparison reports both)."""


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU_SECONDS.setdefault((*argv, env.get("PYTHONPATH", "")), []).append(cpu)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed with status {done.returncode}:\n{done.stderr}")
    return elapsed


def peak_rss_mb(argv: list[str], env: dict[str, str], cwd: Path) -> float | None:
    """The peak RSS of one run in MB, measured by GNU time; None without it.

    Not measured from this process: a child started here inherits this process's (the loopback
    server's) resident size as its own high-water mark until it execs, so ``wait4`` would overstate it.
    """
    if not os.access(GNU_TIME, os.X_OK):
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        done = subprocess.run([GNU_TIME, "-f", "%M", "-o", report.name, *argv], env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed with status {done.returncode}:\n{done.stderr}")
        return int(report.read().split()[-1]) / 1024


def start_anthropic_server() -> tuple[object | None, str]:
    """The loopback Messages API server, or None and why not."""
    sys.path.insert(0, str(ROOT))
    try:
        from tests.support.anthropic_server import AnthropicTestServer
    except ImportError as exc:
        return None, f"tests/support/anthropic_server.py is not usable ({exc})"
    server = AnthropicTestServer(
        {"turns": [{"content": [{"type": "text", "text": "pong"}], "repeat": True}]}
    )
    server.start()
    return server, ""


def claude_binary() -> tuple[str | None, str]:
    """The current Claude Code's binary from ``CATUI_BENCH_CLAUDE``, or None and why not."""
    named = os.environ.get(CLAUDE_ENV)
    if not named:
        return None, (f"{CLAUDE_ENV} is not set; install @anthropic-ai/claude-code with npm outside the repository "
                      f"and set it to node_modules/@anthropic-ai/claude-code-linux-x64/claude")
    if not os.access(named, os.X_OK):
        return None, f"{CLAUDE_ENV}={named} is not an executable file"
    return named, ""


def importtime_report(argv: list[str], env: dict[str, str], cwd: Path, top: int = 20) -> list[tuple[int, str]]:
    """The slowest cumulative imports of ``argv`` (a ``python -m catui`` command) in microseconds."""
    done = subprocess.run([PYTHON, "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if found:
            rows.append((int(found.group(2)), found.group(3).count(" ") // 2, found.group(4)))
    catui_modules = sum(1 for _, _, name in rows if name.startswith("catui"))
    print(f"\n`{' '.join(argv[1:])}` imports {len(rows)} modules, {catui_modules} of them catui's")
    slowest = sorted(rows, reverse=True)[:top]
    return [(us, f"{'  ' * max(0, depth - 1)}{name}") for us, depth, name in slowest]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per case (default 15)")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports of the print run")
    parser.add_argument("--against", type=Path, help="another tree's src/ folder: each catui case runs from both")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="catui-bench-") as tmp:
        tmp_path = Path(tmp)
        home = tmp_path / "home"
        project = tmp_path / "project"
        home.mkdir()
        project.mkdir()
        script = tmp_path / "pong.yaml"
        script.write_text(SCRIPT, encoding="utf-8")
        env = base_env(home)
        catui = [PYTHON, "-m", "catui"]
        cases: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([PYTHON, "-c", "pass"], env),
            "import catui": ([PYTHON, "-c", "import catui"], env),
            "catui --help": ([*catui, "--help"], env),
            "catui agents list": ([*catui, "agents", "list"], env),
            "catui -p (scripted)": ([*catui, "-p", "ping", "--model", f"scripted:{script}"], env),
        }
        server, why_not = start_anthropic_server()
        claude, why_no_claude = claude_binary()
        if server is not None:
            server_env = {**env, **server.env()}  # type: ignore[attr-defined]
            cases[PRINT_CASE] = ([*catui, "-p", "hi", "--output-format", "json"], server_env)
            cases[SDK_CASE] = ([PYTHON, "-c", SDK_PROGRAM], server_env)
            if claude is not None:
                claude_env = {**server_env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                              "DISABLE_AUTOUPDATER": "1"}
                cases[CLAUDE_CASE] = ([claude, "-p", "hi", "--output-format", "json"], claude_env)
        if options.against is not None:
            # Both trees by PYTHONPATH, so that neither wins by being the installed one.
            this_src = str(ROOT / "src")
            for name in [n for n in cases if n not in ("python -c pass", CLAUDE_CASE)]:
                argv, case_env = cases[name]
                cases[name] = (argv, {**case_env, "PYTHONPATH": this_src})
                cases[f"{name} [against]"] = (argv, {**case_env, "PYTHONPATH": str(options.against.resolve())})
        try:
            for argv, case_env in cases.values():  # warm the file cache and .pyc files
                time_once(argv, case_env, project)
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(options.runs):
                for name, (argv, case_env) in cases.items():
                    samples[name].append(time_once(argv, case_env, project))
            rss: dict[str, float | None] = {
                name: max((peak_rss_mb(argv, case_env, project) or 0.0) for _ in range(RSS_RUNS)) or None
                for name, (argv, case_env) in cases.items()
            }
            if options.importtime and server is not None:
                slowest = importtime_report(cases[PRINT_CASE][0], cases[PRINT_CASE][1], project)
        finally:
            if server is not None:
                server.stop()  # type: ignore[attr-defined]

    baseline = statistics.median(samples["python -c pass"])
    cpu = {name: CPU_SECONDS[(*argv, case_env.get("PYTHONPATH", ""))] for name, (argv, case_env) in cases.items()}
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores: CPU time is "
          f"the steadier figure on a shared machine)")
    print(f"{'case':44} {'median ms':>10} {'min ms':>8} {'x baseline':>11} {'- baseline ms':>14} "
          f"{'cpu ms':>7} {'cpu min':>8} {'peak MB':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(
            f"{name:44} {median * 1000:10.1f} {min(values) * 1000:8.1f} {median / baseline:11.2f} "
            f"{(median - baseline) * 1000:14.1f} {statistics.median(cpu[name]) * 1000:7.1f} "
            f"{min(cpu[name]) * 1000:8.1f} {rss[name] or float('nan'):8.1f}"
        )
    if options.against is not None:
        print(f"\nthis tree over {options.against} (median ratios; below 1.00 is faster here):")
        print(f"  {'case':32} {'wall':>6} {'cpu':>6}")
        for name in [n for n in samples if f"{n} [against]" in samples]:
            ratio = statistics.median(samples[name]) / statistics.median(samples[f"{name} [against]"])
            cpu_pair = [statistics.median(cpu[case]) for case in (name, f"{name} [against]")]
            print(f"  {name:32} {ratio:6.3f} {cpu_pair[0] / cpu_pair[1]:6.3f}")
    if server is None:
        print(f"(print-mode, SDK and Claude Code cases skipped: {why_not})")
    for name, goal in GOALS_MS.items():
        if name in samples:
            median_ms = statistics.median(samples[name]) * 1000
            print(f"goal: {name} under {goal:.0f} ms: {median_ms:.0f} ms median "
                  f"(min {min(samples[name]) * 1000:.0f}, CPU {statistics.median(cpu[name]) * 1000:.0f}; "
                  f"python -c pass {baseline * 1000:.0f}), {'met' if median_ms < goal else 'MISSED'}")
    peak = rss.get(PRINT_CASE)
    if peak is None:
        print(f"(peak RSS not measured: {GNU_TIME} is not installed)")
    else:
        print(f"goal: {PRINT_CASE} at most {PRINT_RSS_GOAL_MB:.0f} MB peak RSS: {peak:.1f} MB, "
              f"{'met' if peak <= PRINT_RSS_GOAL_MB else 'MISSED'}")
    if CLAUDE_CASE in samples:
        ratio = statistics.median(samples[CLAUDE_CASE]) / statistics.median(samples[PRINT_CASE])
        by_min = min(samples[CLAUDE_CASE]) / min(samples[PRINT_CASE])
        by_cpu = statistics.median(cpu[CLAUDE_CASE]) / statistics.median(cpu[PRINT_CASE])
        print(f"goal: {CLAUDE_RATIO_GOAL}x faster than the current Claude Code: {ratio:.2f}x by medians "
              f"({by_min:.2f}x by minimums, {by_cpu:.2f}x by CPU), {'met' if ratio >= CLAUDE_RATIO_GOAL else 'MISSED'}")
    elif server is not None:
        print(f"(Claude Code column skipped: {why_no_claude})")
    if options.importtime and server is not None:
        print(f"{'cumulative ms':>14}  module (slowest imports of {PRINT_CASE})")
        for micros, name in slowest:
            print(f"{micros / 1000:14.1f}  {name}")


if __name__ == "__main__":
    main()
