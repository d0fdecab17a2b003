"""Cost of the limit checks per model turn: per-agent limits and the session budget (goal: under 0.1 ms).

    .venv/bin/python benchmarks/bench_limits.py [--turns N]

One model turn of a limited child costs the watcher: one usage event through ``observe`` (stall
timer re-armed, usage sampled, budgets compared) and the before-turn ``sample`` (nothing new to
count). Measured in the same run against a baseline: the same events through ``observe`` of a
watcher-less path (a plain counter update, what an unlimited child does). The session budget
(``--max-budget-usd``) is measured the same way: each response through the shared ``UsageTracker``
with ``SessionBudget.observe`` as its listener, against the tracker alone. Prints the per-turn
costs and the ratios; there are no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from catui.session.budget import SessionBudget
from catui.session.events import UsageEvent
from catui.session.usage import UsageTracker, add_usage, empty_usage
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


def budget_per_turn_ms(turns: int, with_budget: bool) -> float:
    """One response into the shared tracker (every run does this), with or without the session budget."""
    tracker = UsageTracker()
    if with_budget:
        tracker.listeners.append(SessionBudget(1e9).observe)  # never reached: the check runs every turn
    one = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 5000}
    started = time.perf_counter()
    for _ in range(turns):
        tracker.add("claude-sonnet-4-6", one)
    return (time.perf_counter() - started) * 1000 / turns


async def main(turns: int) -> None:
    baseline = [per_turn_ms(turns, False) for _ in range(5)]
    limited = [per_turn_ms(turns, True) for _ in range(5)]
    base, lim = statistics.median(baseline), statistics.median(limited)
    print(f"baseline (no limits):   {base * 1000:.2f} µs per turn")
    print(f"limits (all four set):  {lim * 1000:.2f} µs per turn")
    print(f"checks cost:            {(lim - base) * 1000:.2f} µs per turn (goal < 100 µs); ratio {lim / base:.1f}x")
    tracker_only = statistics.median(budget_per_turn_ms(turns, False) for _ in range(5))
    budgeted = statistics.median(budget_per_turn_ms(turns, True) for _ in range(5))
    print(f"usage tracker alone:    {tracker_only * 1000:.2f} µs per response")
    print(f"with --max-budget-usd:  {budgeted * 1000:.2f} µs per response")
    print(f"budget check cost:      {(budgeted - tracker_only) * 1000:.2f} µs per response (goal < 100 µs); "
          f"ratio {budgeted / tracker_only:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20000)
    asyncio.run(main(parser.parse_args().turns))
