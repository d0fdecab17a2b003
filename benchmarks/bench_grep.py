"""Grep over a 20k-file tree: catui's Grep tool against running ``rg`` directly, in the same run.

Usage: ``python benchmarks/bench_grep.py [--files N] [--repeat R]``. Prints the median wall time of each
variant and the ratio catui/rg (goal: within 1.2x), sampled alternately, and the median CPU time
(process plus children), which a busy machine does not distort. No assertions: this is a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from catui.tools.base import ToolContext
from catui.tools.grep import GrepTool
from catui.tools.grep_input import GrepInput
from catui.tools.search_engine import find_rg

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma", "omega"]


def build_tree(root: Path, files: int, seed: int = 7) -> None:
    """``files`` small source files in 100-file folders; about 1 in 50 contains the needle."""
    rng = random.Random(seed)
    (root / ".gitignore").write_text("*.tmp\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(files):
        folder = root / f"pkg{i // 100:03}"
        folder.mkdir(exist_ok=True)
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(30)]
        if i % 50 == 0:
            lines[rng.randrange(30)] += " needle_marker"
        (folder / f"mod{i % 100:02}.py").write_text("\n".join(lines) + "\n")


@dataclass
class Samples:
    """Wall and CPU seconds (this process plus its children) of each run of one variant."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def median_wall(self) -> float:
        return statistics.median(self.wall)

    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def cpu_seconds() -> float:
    used = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        used += usage.ru_utime + usage.ru_stime
    return used


async def time_pair(
    direct: Callable[[], object], tool: Callable[[], Awaitable[object]], repeat: int
) -> tuple[Samples, Samples]:
    """Samples of ``direct`` and of ``tool``, taken alternately (the order swapped each round) so that
    both see the same load on a shared machine. CPU time is the load-independent view of the same cost."""
    direct_samples, tool_samples = Samples(), Samples()

    def timed_direct() -> None:
        cpu, start = cpu_seconds(), time.perf_counter()
        direct()
        direct_samples.wall.append(time.perf_counter() - start)
        direct_samples.cpu.append(cpu_seconds() - cpu)

    async def timed_tool() -> None:
        cpu, start = cpu_seconds(), time.perf_counter()
        await tool()
        tool_samples.wall.append(time.perf_counter() - start)
        tool_samples.cpu.append(cpu_seconds() - cpu)

    for round_number in range(repeat):
        if round_number % 2:
            await timed_tool()
            timed_direct()
        else:
            timed_direct()
            await timed_tool()
    return direct_samples, tool_samples


async def time_async(fn: Callable[[], Awaitable[object]], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--with-fallback", action="store_true", help="also time the pure-Python search once")
    options = parser.parse_args()
    rg = find_rg()
    if rg is None:
        print("rg not found (install the ripgrep package); nothing to compare against.")
        return
    with tempfile.TemporaryDirectory(prefix="catui-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build_tree(root, options.files)
        print(f"tree: {options.files} files in {time.perf_counter() - started:.1f}s at {root}")
        ctx = ToolContext(cwd=root, project_root=root)
        tool = GrepTool()
        cases = {
            "files_with_matches": ({"pattern": "needle_marker"}, [rg, "-l", "needle_marker", str(root)]),
            "content -n": (
                {"pattern": "needle_marker", "output_mode": "content"},
                [rg, "-n", "needle_marker", str(root)],
            ),
            "count -i": (
                {"pattern": "NEEDLE_MARKER", "output_mode": "count", "-i": True},
                [rg, "-c", "-i", "NEEDLE_MARKER", str(root)],
            ),
        }
        for name, (tool_args, rg_args) in cases.items():
            args = GrepInput.model_validate(tool_args)

            async def run_tool(args: GrepInput = args) -> object:
                return await tool.call(args, ctx)

            def run_rg(rg_args: list[str] = rg_args) -> object:
                return subprocess.run(rg_args, capture_output=True, check=False)

            run_rg()  # warm the page cache for both
            direct, catui = await time_pair(run_rg, run_tool, options.repeat)
            wall_rg, wall_catui = direct.median_wall(), catui.median_wall()
            cpu_rg, cpu_catui = direct.median_cpu(), catui.median_cpu()
            print(
                f"{name:20} wall: rg {wall_rg * 1000:7.1f} ms  catui Grep {wall_catui * 1000:7.1f} ms  "
                f"ratio {wall_catui / wall_rg:5.2f}x   cpu: rg {cpu_rg * 1000:7.1f} ms  "
                f"catui Grep {cpu_catui * 1000:7.1f} ms  ratio {cpu_catui / cpu_rg:5.2f}x"
            )
        if options.with_fallback:
            fallback = GrepTool(force_fallback=True)
            args = GrepInput.model_validate({"pattern": "needle_marker"})
            slow = await time_async(lambda: fallback.call(args, ctx), 1)
            print(f"{'python fallback':20} {slow * 1000:8.1f} ms (files_with_matches, one run)")


if __name__ == "__main__":
    asyncio.run(main())
