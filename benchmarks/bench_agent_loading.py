"""Agent loading speed: 1,000 definition files, cold load and no-change reload, against a plain read.

    .venv/bin/python benchmarks/bench_agent_loading.py [--files N] [--repeat R]

Writes N agent files (cycled from the shared corpus when it is present, else
synthetic ones) into a temporary project's ``.claude/agents`` tree, then
measures in the same run:

- baseline: reading the same files' bytes in a plain Python loop (walk + open + read);
- cold load: ``load_agent_registry`` from scratch (scan, read, parse every frontmatter with PyYAML's
  C loader, build definitions);
- no-change reload: ``registry.reload_if_changed()`` when nothing changed;
- change reload: one file touched, then ``reload_if_changed()``.

Goals: cold load no worse than 10x the plain read (issue 12: one YAML path, PyYAML for every file;
the hand-written readers it replaced kept it under 5x, issue 4); no-change reload under 5 ms.
Prints the medians and the ratios; there are no assertions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

SYNTHETIC = """---
name: agent-{i}
description: Agent number {i}. Use it for task {i}; it reviews code and reports findings.
tools: Read, Grep, Glob, Bash
model: sonnet
color: blue
---

You are agent {i}. Review the code you are pointed at and report findings with absolute paths.
"""


def corpus_texts() -> list[str]:
    import json

    expectations = CORPUS / "expectations.json"
    if not expectations.is_file():
        return []
    entries = json.loads(expectations.read_text(encoding="utf-8"))
    return [(CORPUS / e["path"]).read_text(encoding="utf-8") for e in entries if e["valid"]]


def write_files(root: Path, count: int, *, synthetic: bool = False) -> None:
    texts = [] if synthetic else corpus_texts()
    folder = root / ".claude" / "agents"
    for i in range(count):
        sub = folder / f"group-{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        if texts:
            text = texts[i % len(texts)]
            # Give every copy its own name so that all of them stay active.
            text = text.replace("\nname:", f"\nname: copy-{i}-", 1).replace(
                f"name: copy-{i}- ", f"name: copy-{i}-", 1
            )
        else:
            text = SYNTHETIC.format(i=i)
        (sub / f"agent-{i}.md").write_text(text, encoding="utf-8")


def plain_read(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(dirpath, name), "rb") as handle:
                    total += len(handle.read())
    return total


def median_ms(func, repeat: int, clock=time.perf_counter) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = clock()
        func()
        times.append((clock() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--synthetic", action="store_true", help="simple generated files instead of the corpus"
    )
    args = parser.parse_args()

    from catui.agents.registry import load_agent_registry

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / ".git").mkdir(parents=True)
        home = Path(tmp) / "home"
        write_files(root, args.files, synthetic=args.synthetic)
        folder = root / ".claude" / "agents"

        load_agent_registry(root, home=home)  # warm imports and the OS cache for both sides
        plain = median_ms(lambda: plain_read(folder), args.repeat)
        cold = median_ms(lambda: load_agent_registry(root, home=home), args.repeat)
        # CPU time too: on a busy machine wall-clock ratios swing with other processes.
        plain_cpu = median_ms(lambda: plain_read(folder), args.repeat, time.process_time)
        cold_cpu = median_ms(lambda: load_agent_registry(root, home=home), args.repeat, time.process_time)
        registry = load_agent_registry(root, home=home)
        idle = median_ms(registry.reload_if_changed, max(args.repeat, 50))
        target = next(folder.rglob("*.md"))

        def touch_and_reload() -> None:
            os.utime(target, None)
            registry.reload_if_changed()

        changed = median_ms(touch_and_reload, args.repeat)
        active = len(registry.active)
        failed = len(registry.failed_files)

    print(
        f"files: {args.files} ({'synthetic' if args.synthetic or not corpus_texts() else 'corpus copies'}); "
        f"active agents {active}, failed {failed}"
    )
    print(f"plain read of the same bytes : {plain:8.2f} ms")
    print(f"cold load                    : {cold:8.2f} ms   ratio {cold / plain:5.1f}x  (goal <= 10x)")
    print(
        f"cold load, CPU time          : {cold_cpu:8.2f} ms   ratio {cold_cpu / plain_cpu:5.1f}x  (plain read {plain_cpu:.2f} ms)"
    )
    print(f"no-change reload             : {idle:8.3f} ms                (goal < 5 ms)")
    print(f"reload after one change      : {changed:8.2f} ms   ratio {changed / plain:5.1f}x")


if __name__ == "__main__":
    main()
