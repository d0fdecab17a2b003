"""Bash tool call overhead of the sandbox: the same command sandboxed (bwrap) and unsandboxed, in the same run.

Usage: ``python benchmarks/bench_sandbox.py [--repeat N]``.

Both sides go through the real ``BashTool.call`` (scratch folder, cwd tracking, output file), on a real git
worktree of a small repository (so the sandboxed side also lays out the worktree's git metadata), with the
command ``true``. Calls alternate so that drift hits both. Prints medians, minimums, the difference per call
(goal: under 10 ms) and the ratio; then the floor measured in the same run: bwrap itself (the same bwrap
command line catui builds, run directly) against plain ``bash -c true``, and catui's own share (planning the
layout and building the command line). No assertions: this is a measurement.
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

from catui.permissions.context import PermissionContext
from catui.sandbox.config import SandboxSettings
from catui.sandbox.policy import AgentFolders, BashSandbox
from catui.sandbox.probe import probe_bwrap
from catui.tools.base import ToolContext, ToolServices
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@catui.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@catui.invalid"}


def make_worktree(root: Path) -> Path:
    repo = root / "repo"
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
    worktree = repo / ".catui" / "worktrees" / "agent-bench"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "worktree-agent-bench", str(worktree)], cwd=repo,
                   check=True, env=env)
    return worktree


def context(worktree: Path, sandbox: BashSandbox | None) -> ToolContext:
    return ToolContext(
        cwd=worktree, project_root=worktree,
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(worktree,)),
        services=ToolServices(sandbox=sandbox),
    )


async def time_call(tool: BashTool, ctx: ToolContext) -> float:
    start = time.perf_counter()
    result = await tool.call(BashInput(command="true"), ctx)
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise SystemExit(f"the benchmark command failed: {result.content}")
    return elapsed


async def time_spawn(argv: list[str], fds: tuple[int, ...] = ()) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL, pass_fds=fds,
                                                stdout=asyncio.subprocess.DEVNULL, start_new_session=True)
    await proc.wait()
    return time.perf_counter() - start


async def run(repeat: int) -> None:
    availability = probe_bwrap()
    if not availability.usable:
        raise SystemExit(f"bubblewrap cannot run here: {availability.reason}")
    with tempfile.TemporaryDirectory(prefix="catui-bench-sandbox-") as tmp:
        worktree = make_worktree(Path(tmp))
        tool = BashTool()
        plain = context(worktree, None)
        boxed = context(worktree, BashSandbox(SandboxSettings(enabled=True)))
        for _ in range(5):  # warm-up: page cache, the probe
            await time_call(tool, plain)
            await time_call(tool, boxed)
        plain_times: list[float] = []
        boxed_times: list[float] = []
        for _ in range(repeat):
            plain_times.append(await time_call(tool, plain))
            boxed_times.append(await time_call(tool, boxed))
        sandbox = boxed.services.sandbox
        assert sandbox is not None
        folders = AgentFolders(worktree, worktree, (worktree,))
        start = time.perf_counter()
        for _ in range(repeat):
            launch = sandbox.plan("true", folders, [Path(tmp)])
            with launch.command_line(["bash", "-c", "true"], worktree):
                pass
            launch.finish()  # placeholders for missing protected files are held per command
        launch = sandbox.plan("true", folders, [Path(tmp)])  # held while bwrap alone is timed below
        planning = (time.perf_counter() - start) / repeat
        raw_bash: list[float] = []
        raw_bwrap: list[float] = []
        for _ in range(repeat):
            raw_bash.append(await time_spawn(["bash", "-c", "true"]))
            with launch.command_line(["bash", "-c", "true"], worktree) as (argv, fds):  # bwrap reads its filter
                raw_bwrap.append(await time_spawn(argv, fds))
        launch.finish()
    p_med, b_med = statistics.median(plain_times), statistics.median(boxed_times)
    print(f"Bash call, unsandboxed: median {p_med * 1000:.2f} ms, min {min(plain_times) * 1000:.2f} ms")
    print(f"Bash call, sandboxed:   median {b_med * 1000:.2f} ms, min {min(boxed_times) * 1000:.2f} ms")
    print(f"overhead per call: median {(b_med - p_med) * 1000:.2f} ms (goal < 10 ms), "
          f"min-to-min {(min(boxed_times) - min(plain_times)) * 1000:.2f} ms, ratio {b_med / p_med:.2f}x")
    r_bash, r_bwrap = statistics.median(raw_bash), statistics.median(raw_bwrap)
    print(f"floor, bwrap alone:     median {(r_bwrap - r_bash) * 1000:.2f} ms over bash -c true "
          f"(min-to-min {(min(raw_bwrap) - min(raw_bash)) * 1000:.2f} ms), ratio {r_bwrap / r_bash:.2f}x")
    print(f"catui's share:          {planning * 1000:.3f} ms per call (layout plan, bwrap command line, placeholders)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    asyncio.run(run(args.repeat))


if __name__ == "__main__":
    main()
