"""Run a batch of awaitables at most N at a time, as a sliding window, results in batch order.

One assistant message's concurrency-safe tool calls (Agent calls included)
run through :func:`run_windowed`: as soon as one finishes the next starts, so
at most ``limit`` run at any moment (Claude Code 2.1.92 does the same with a
width of 10; observed section 14).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def run_windowed(starters: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Await ``starters[i]()`` for every i, at most ``limit`` at once; returns the results in order.

    A starter is only called when its slot opens, so work that has not started
    holds no resources. If one raises, the others are cancelled and the error
    propagates (as :func:`asyncio.gather` would, minus the stragglers).
    """
    if limit < 1:
        raise ValueError(f"the window must be at least 1 wide, not {limit}")
    results: list[T | None] = [None] * len(starters)
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < len(starters):
            index = next_index
            next_index += 1
            results[index] = await starters[index]()

    workers = [asyncio.ensure_future(worker()) for _ in range(min(limit, len(starters)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for pending in workers:
            if not pending.done():
                pending.cancel()
    return results  # type: ignore[return-value]  # every slot was filled once gather returned
