"""Worktree creation + removal: catui against raw git on the same repository, in the same run.

Usage: ``python benchmarks/bench_worktree.py [--sizes 100,20000] [--repeat R]``.

For each repository size it times, alternating the two so drift hits both:

- raw git: ``git worktree add -b <branch> <path> HEAD`` + ``git worktree remove <path>`` + ``git branch -D``
  (what a careful shell script does; ``remove`` without ``--force`` checks the worktree is clean)
- catui: ``create_worktree`` (state.db record included) + ``finish_worktree`` (change detection, removal
  of worktree and branch, state.db update) — the Agent tool's full isolation overhead

and, on the largest repository, the same with ``worktree.sparsePaths`` naming 1% of the files, against
raw git doing the full checkout and against raw git doing the same sparse steps by hand.
Prints medians, minimums and ratios (goal: catui within 1.1x of raw git; sparse proportional to the paths checked
out). No assertions: this is a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from catui.state import StateDB
from catui.worktree import create_worktree, finish_worktree

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@catui.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@catui.invalid",
    "LC_ALL": "C",
}


def build_repo(root: Path, files: int) -> None:
    """``files`` small files in folders of 100, committed."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(files):
        folder = root / f"pkg{i // 100:03}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i % 100:02}.py").write_text(f"VALUE = {i}\n" + "# filler line\n" * 20)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "bench"], cwd=root, check=True)


async def git(cwd: Path, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        "git", *args, cwd=str(cwd), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {err.decode()}")


async def raw_cycle(repo: Path, n: int, sparse: list[str] | None = None) -> None:
    path = repo / ".raw-worktrees" / f"raw-{n}"
    branch = f"raw-{n}"
    if sparse:
        await git(repo, "worktree", "add", "-q", "--no-checkout", "-b", branch, str(path), "HEAD")
        await git(path, "sparse-checkout", "set", "--cone", *sparse)
        await git(path, "reset", "-q", "--hard", "HEAD")
    else:
        await git(repo, "worktree", "add", "-q", "-b", branch, str(path), "HEAD")
    await git(repo, "worktree", "remove", str(path))
    await git(repo, "branch", "-q", "-D", branch)


async def catui_cycle(repo: Path, n: int, state: StateDB, settings: dict[str, object]) -> None:
    info = await create_worktree(f"b{n:015x}", repo_root=repo, settings=settings, state=state)
    outcome = await finish_worktree(info, state)
    if outcome.kept:
        raise RuntimeError(f"benchmark worktree unexpectedly kept: {outcome}")


async def timed(fn: Callable[[], Awaitable[None]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def compare(
    label: str,
    repo: Path,
    state: StateDB,
    repeat: int,
    counter: list[int],
    settings: dict[str, object],
    raw_sparse: list[str] | None = None,
) -> tuple[float, float]:
    raw: list[float] = []
    ours: list[float] = []

    def next_n() -> int:
        counter[0] += 1
        return counter[0]

    # One warm-up of each (page cache, git's first-run costs), then alternate.
    await raw_cycle(repo, next_n(), raw_sparse)
    await catui_cycle(repo, next_n(), state, settings)
    for round_index in range(repeat):
        n_raw, n_ours = next_n(), next_n()

        async def run_raw(n: int = n_raw) -> None:
            raw.append(await timed(lambda: raw_cycle(repo, n, raw_sparse)))

        async def run_ours(n: int = n_ours) -> None:
            ours.append(await timed(lambda: catui_cycle(repo, n, state, settings)))

        # Alternate which goes first: on a busy disk, the second of a pair pays for the first's write-back.
        first, second = (run_raw, run_ours) if round_index % 2 == 0 else (run_ours, run_raw)
        await first()
        await second()
    raw_median, ours_median = statistics.median(raw), statistics.median(ours)
    # The minimum is the steadier figure on a shared machine (other load only ever adds time).
    print(
        f"{label:<44} raw git {raw_median * 1000:8.1f} ms   catui {ours_median * 1000:8.1f} ms   "
        f"ratio {ours_median / raw_median:5.2f}x (median)   min {min(raw) * 1000:8.1f} / "
        f"{min(ours) * 1000:8.1f} ms = {min(ours) / min(raw):5.2f}x"
    )
    return raw_median, ours_median


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,20000", help="comma-separated file counts")
    parser.add_argument("--repeat", type=int, default=0, help="samples per variant (default: by size)")
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="catui-bench-wt-") as tmp:
        counter = [0]
        for size in sizes:
            repo = Path(tmp) / f"repo{size}"
            start = time.perf_counter()
            build_repo(repo, size)
            print(f"built {size}-file repository in {time.perf_counter() - start:.1f}s")
            repeat = args.repeat or (21 if size <= 1000 else 8)
            state = StateDB(repo)
            full_raw, _ = await compare(f"{size} files: create + remove", repo, state, repeat, counter, {})
            if size == max(sizes) and size >= 1000:
                folders = max(1, size // 100 // 100)  # 1% of the folders
                sparse = [f"pkg{i:03}" for i in range(folders)]
                settings: dict[str, object] = {"worktree": {"sparsePaths": sparse}}
                _, sparse_ours = await compare(
                    f"{size} files, sparsePaths 1% vs raw sparse",
                    repo,
                    state,
                    repeat,
                    counter,
                    settings,
                    sparse,
                )
                print(
                    f"{'  sparse catui vs raw full checkout':<44} {sparse_ours * 1000:8.1f} ms vs "
                    f"{full_raw * 1000:8.1f} ms: {sparse_ours / full_raw:5.2f}x of the full checkout's time"
                )
            state.close()


if __name__ == "__main__":
    asyncio.run(main())
