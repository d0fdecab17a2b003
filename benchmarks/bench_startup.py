"""Process start to exit for catui's everyday commands, against ``python -c pass`` in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--importtime]

Cases, each the median of N fresh processes (runs interleaved, so that a
noisy moment hits every case alike):
  * ``python -c pass`` (the baseline),
  * ``catui --help``,
  * ``catui agents list``,
  * a trivial ``catui -p`` on the scripted provider,
  * a trivial ``catui -p`` on the anthropic provider against the loopback
    Messages API server of ``tests/support/anthropic_server.py``
    (issue 2's goal: under 0.4 s; Claude Code 2.1.92 takes 2.2 s here).
Prints medians in ms and ratios to the baseline. ``--importtime`` also lists
the slowest imports of ``catui --help`` (``python -X importtime``).
No network beyond 127.0.0.1; HOME and CATUI_HOME are temporary folders.
"""

from __future__ import annotations

import argparse
import os
import re
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


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
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
            "catui --help": ([*catui, "--help"], env),
            "catui agents list": ([*catui, "agents", "list"], env),
            "catui -p (scripted)": ([*catui, "-p", "ping", "--model", f"scripted:{script}"], env),
        }
        server, why_not = start_anthropic_server()
        if server is not None:
            server_env = {**env, **server.env()}  # type: ignore[attr-defined]
            cases["catui -p (anthropic, loopback)"] = ([*catui, "-p", "ping", "--model", "sonnet"], server_env)
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
