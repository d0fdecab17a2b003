"""How fast the SDK starts and answers, against ``python -c pass`` measured in the same run.

    .venv/bin/python benchmarks/bench_sdk.py [--runs N]

Measures, each as the median of N fresh processes:
  * ``python -c pass`` (the baseline),
  * ``import catui`` (goal: under 100 ms more than the baseline),
  * ``import catui`` + ``CatuiClient(CatuiOptions())`` (loads catui.sdk; pydantic and the agent wait for connect),
  * ``import catui`` + a client connected and closed (the agent built: settings, model, tools, agents),
  * a whole one-shot ``catui.query`` on the scripted provider, process start to exit,
and in one process the median time of a one-shot query once everything is imported.
Prints each number and its ratio to the baseline. No network is used.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "turns:\n  - content: [{type: text, text: 'pong'}]\n    repeat: true\n"

QUERY_PROGRAM = """
import asyncio, sys, catui
async def main():
    options = catui.CatuiOptions(model="scripted:" + sys.argv[1], cwd=sys.argv[2], write_transcript=False)
    async for message in catui.query("ping", options):
        if isinstance(message, catui.ResultMessage):
            assert message.result == "pong", message
asyncio.run(main())
"""

CONNECT_PROGRAM = """
import asyncio, sys, catui
async def main():
    options = catui.CatuiOptions(model="scripted:" + sys.argv[1], cwd=sys.argv[2], write_transcript=False)
    async with catui.CatuiClient(options):
        pass
asyncio.run(main())
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_"))}
    env.update({"CATUI_HOME": str(home / "catui-home"), "HOME": str(home)})
    return env


def time_process(args: list[str], runs: int, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system), in ms, of ``args`` as a fresh process.

    One warm-up run first. CPU time is the steadier number on a busy machine.
    """
    walls: list[float] = []
    cpus: list[float] = []
    for index in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True)
        elapsed = (time.perf_counter() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"benchmark command failed: {' '.join(args)}\n{done.stderr}")
        if index:
            walls.append(elapsed)
            cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus)


async def in_process_queries(script: Path, cwd: Path, runs: int) -> float:
    import catui
    from catui.models.resolve import clear_provider_cache

    samples: list[float] = []
    for index in range(runs + 1):
        clear_provider_cache()
        options = catui.CatuiOptions(model=f"scripted:{script}", cwd=cwd, write_transcript=False)
        started = time.perf_counter()
        async for _message in catui.query("ping", options):
            pass
        if index:
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="processes per measurement (default 15)")
    runs = parser.parse_args().runs
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        script = home / "script.yaml"
        script.write_text(SCRIPT, encoding="utf-8")
        env = _env(home)
        env["CATUI_HOME"] = str(home / "catui-home")
        os.environ.update({"CATUI_HOME": env["CATUI_HOME"], "HOME": str(home)})

        baseline, baseline_cpu = time_process([python, "-c", "pass"], runs, env, project)
        rows = [
            ("python -c pass", (baseline, baseline_cpu)),
            ("import catui", time_process([python, "-c", "import catui"], runs, env, project)),
            (
                "import catui + CatuiClient()",
                time_process(
                    [python, "-c", "import catui; catui.CatuiClient(catui.CatuiOptions())"], runs, env, project
                ),
            ),
            (
                "import catui + client connect/close",
                time_process([python, "-c", CONNECT_PROGRAM, str(script), str(project)], runs, env, project),
            ),
            (
                "one-shot query, whole process",
                time_process([python, "-c", QUERY_PROGRAM, str(script), str(project)], runs, env, project),
            ),
        ]
        in_process = asyncio.run(in_process_queries(script, project, runs))

    print(f"bench_sdk ({runs} runs each, median; baseline measured in this run)")
    print(f"  {'':34s} {'wall':>8s}            {'cpu':>8s}")
    for label, (ms, cpu) in rows:
        extra = "" if label == "python -c pass" else f"  (+{ms - baseline:6.1f} ms wall over baseline)"
        print(f"  {label:34s} {ms:8.1f} ms x{ms / baseline:5.2f}  {cpu:8.1f} ms x{cpu / baseline_cpu:5.2f}{extra}")
    print(f"  {'one-shot query, in process':34s} {in_process:8.1f} ms x{in_process / baseline:5.2f}")
    import_cost = rows[1][1][0] - baseline
    verdict = "meets" if import_cost < 100 else "MISSES"
    print(f"import catui costs {import_cost:.1f} ms over the interpreter start: {verdict} the 100 ms goal")


if __name__ == "__main__":
    main()
