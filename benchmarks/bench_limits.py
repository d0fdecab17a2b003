"""Cost of the per-agent limit checks per model turn (issue 18 goal: under 0.1 ms).

    .venv/bin/python benchmarks/bench_limits.py [--turns N]

One model turn of a limited child costs the watcher: one usage event through ``observe`` (stall
timer re-armed, usage sampled, budgets compared) and the before-turn ``sample`` (nothing new to
count). Measured in the same run against a baseline: the same events through ``observe`` of a
watcher-less path (a plain counter update, what an unlimited child does). Prints the per-turn
cost and the ratio; there are no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from catui.session.events import UsageEvent
from catui.session.usage import add_usage, empty_usage
from catui.subagents.limits import LimitWatcher, RunLimits


def per_turn_ms(turns: int, limited: bool) -> float:
    usage = empty_usage()
    watcher = LimitWatcher(RunLimits(max_budget_usd=1e9, max_tokens=10**12, timeout_s=3600, stall_timeout_s=3600),
                           lambda hit: None)
    watcher.start(usage)
    one = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 5000}
    event = UsageEvent(model="claude-sonnet-4-6", usage=one, agent_id="a1")
    last: dict[str, int] = {}
    started = time.perf_counter()
    for _ in range(turns):
        add_usage(usage, one)  # the session's own bookkeeping, in both runs
        if limited:
            watcher.sample(usage, "claude-sonnet-4-6")  # before the turn
            watcher.observe(event, True, usage)
        else:
            last = dict(event.usage)  # what SubagentRun.observe does without limits
    elapsed = time.perf_counter() - started
    watcher.stop()
    del last
    return elapsed * 1000 / turns


async def main(turns: int) -> None:
    baseline = [per_turn_ms(turns, False) for _ in range(5)]
    limited = [per_turn_ms(turns, True) for _ in range(5)]
    base, lim = statistics.median(baseline), statistics.median(limited)
    print(f"baseline (no limits):   {base * 1000:.2f} µs per turn")
    print(f"limits (all four set):  {lim * 1000:.2f} µs per turn")
    print(f"checks cost:            {(lim - base) * 1000:.2f} µs per turn (goal < 100 µs); ratio {lim / base:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20000)
    asyncio.run(main(parser.parse_args().turns))
