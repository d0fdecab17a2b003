"""Process start to exit for catui's everyday commands, against ``python -c pass`` in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--importtime] [--against OTHER/src]

Cases, each the median of N fresh processes (runs interleaved, so that a
noisy moment hits every case alike):
  * ``python -c pass`` (the baseline),
  * ``catui --help``,
  * ``catui agents list``,
  * a trivial ``catui -p`` on the scripted provider,
  * a trivial ``catui -p`` on the anthropic provider against the loopback
    Messages API server of ``tests/support/anthropic_server.py``
    (issue 2's goal: under 0.4 s; Claude Code 2.1.92 takes 2.2 s here).
  * ``import catui``.
Prints medians in ms and ratios to the baseline. ``--importtime`` also lists
the slowest imports of ``catui --help`` (``python -X importtime``). ``--against``
runs every catui case a second time from another source tree (say, main
exported with ``git archive``), interleaved with this one, and prints this
tree's median over the other's: an A/B in one run.
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
ANTHROPIC_GOAL_S = 0.4


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), NO_PROXY="127.0.0.1,localhost")
    return env


CPU_SECONDS: dict[tuple[str, ...], list[float]] = {}
"""Per argv and PYTHONPATH: the child's user + system CPU time of each run (steadier than wall time on a busy
machine; the A/B comparison reports both)."""


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU_SECONDS.setdefault((*argv, env.get("PYTHONPATH", "")), []).append(cpu)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed with status {done.returncode}:\n{done.stderr}")
    return elapsed


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


def importtime_report(env: dict[str, str], cwd: Path, top: int = 15) -> list[tuple[int, str]]:
    """The slowest cumulative imports of ``catui --help`` in microseconds."""
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "catui", "--help"], env=env, cwd=cwd, capture_output=True, text=True
    )
    rows = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if found:
            rows.append((int(found.group(2)), found.group(3).count(" ") // 2, found.group(4)))
    total = len(rows)
    catui_modules = sorted({name for _, _, name in rows if name.startswith("catui")})
    print(f"\n`catui --help` imports {total} modules; catui's own: {', '.join(catui_modules)}")
    slowest = sorted(rows, reverse=True)[:top]
    return [(us, f"{'  ' * max(0, depth - 1)}{name}") for us, depth, name in slowest]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per case (default 15)")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports of --help")
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
        if server is not None:
            server_env = {**env, **server.env()}  # type: ignore[attr-defined]
            cases["catui -p (anthropic, loopback)"] = ([*catui, "-p", "ping", "--model", "sonnet"], server_env)
        if options.against is not None:
            # Both trees by PYTHONPATH, so that neither wins by being the installed one.
            this_src = str(ROOT / "src")
            for name in [n for n in cases if n != "python -c pass"]:
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
        finally:
            if server is not None:
                server.stop()  # type: ignore[attr-defined]

        baseline = statistics.median(samples["python -c pass"])
        print(f"{'case':34} {'median ms':>10} {'min ms':>8} {'x baseline':>11} {'- baseline ms':>14}")
        for name, values in samples.items():
            median = statistics.median(values)
            print(
                f"{name:34} {median * 1000:10.1f} {min(values) * 1000:8.1f} {median / baseline:11.2f} "
                f"{(median - baseline) * 1000:14.1f}"
            )
        if options.against is not None:
            print(f"\nthis tree over {options.against} (median ratios; below 1.00 is faster here):")
            print(f"  {'case':32} {'wall':>6} {'cpu':>6}")
            for name in [n for n in samples if f"{n} [against]" in samples]:
                ratio = statistics.median(samples[name]) / statistics.median(samples[f"{name} [against]"])
                cpu = [statistics.median(CPU_SECONDS[(*argv, case_env.get("PYTHONPATH", ""))])
                       for argv, case_env in (cases[name], cases[f"{name} [against]"])]
                print(f"  {name:32} {ratio:6.3f} {cpu[0] / cpu[1]:6.3f}")
        if server is None:
            print(f"(anthropic case skipped: {why_not})")
        else:
            median = statistics.median(samples["catui -p (anthropic, loopback)"])
            verdict = "meets" if median < ANTHROPIC_GOAL_S else "misses"
            print(f"anthropic-provider run: {median * 1000:.0f} ms, {verdict} the {ANTHROPIC_GOAL_S * 1000:.0f} ms goal")
        if options.importtime:
            print(f"{'cumulative ms':>14}  module (slowest imports of catui --help)")
            for micros, name in importtime_report(env, project):
                print(f"{micros / 1000:14.1f}  {name}")


if __name__ == "__main__":
    main()
