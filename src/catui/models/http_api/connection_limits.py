"""How the lean pool limits and opens connections: a cap per origin, and its own connect schedule.

A fan-out of a hundred sub-agents would otherwise open a hundred connections
to one server at the same moment. A server with a small accept backlog drops
the SYNs it has no room for, and the kernel then retries them on its own
back-off (1 s, 3 s, 7 s, … after the first try), which turned a 0.3 s turn into
55 s (issue 13). Two things prevent that:

- :class:`OriginLimits` caps the connections open to one origin (in use and
  idle alike: both occupy the server); a request beyond the cap waits for a
  connection of that origin to come free and reuses it, or for one to close.
- :func:`connect_attempts` is the schedule of TCP connect attempts: each try
  gets a short timeout, and one that is not accepted in time is abandoned and
  tried again with a fresh SYN, instead of waiting on the kernel's back-off.
- A try that is not accepted in time also tells :class:`OriginLimits` that the
  origin is congested (:meth:`OriginLimits.not_accepted`): the origin's
  ceiling on new connections drops to the connections already established,
  and the request waits for one of them to come free (or for a place under
  the ceiling) instead of retrying all at once with every other request that
  was dropped at the same moment. Each connect that succeeds raises the
  ceiling by one again, up to the cap, and the ceiling lapses
  :data:`CONGESTION_HOLD_S` after the last try that was not accepted (so that
  a passing congestion never caps an origin for the rest of the session).

The cap is ``CATUI_MAX_CONNECTIONS_PER_HOST`` (default
:data:`DEFAULT_MAX_CONNECTIONS_PER_HOST`), read by
:class:`~catui.models.http_api.transport_settings.TransportSettings`.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Hashable, Iterator
from typing import Generic, TypeVar

DEFAULT_MAX_CONNECTIONS_PER_HOST = 32
"""Connections open at once to one origin. Above the default tool-call window (10) plus the default cap on
running background agents (20), so that neither waits on the pool by default."""

CONNECT_ATTEMPT_S: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
"""Timeouts of successive TCP connect attempts; the last repeats until the connect timeout is spent.
The first is above most round trips on the internet and well below the kernel's first SYN retry (1 s)."""

CONGESTION_HOLD_S = 1.0
"""How long a lowered ceiling holds after the last connect try an origin did not accept in time
(the kernel's own first SYN retry comes after 1 s)."""

ConnectionT = TypeVar("ConnectionT")


def connect_attempts(total_s: float) -> Iterator[float]:
    """Timeouts for each connect attempt, adding up to ``total_s`` (the last one shortened to fit)."""
    left = total_s
    index = 0
    while left > 0:
        attempt = min(CONNECT_ATTEMPT_S[min(index, len(CONNECT_ATTEMPT_S) - 1)], left)
        yield attempt
        left -= attempt
        index += 1


CATCH_UP_STEPS = 8
"""Loop iterations a connect try gets after its timer fired, to finish a handshake the kernel already completed
(a completed connect needs about four: the socket's readiness, the transport, ``connection_made``, the return)."""

ResultT = TypeVar("ResultT")


async def within_attempt(connect: Awaitable[ResultT], attempt_s: float) -> ResultT:
    """Await ``connect`` for one try of the connect schedule; raises :class:`TimeoutError` when it was not accepted.

    When the process was starved (a loaded machine), the try's timer and the
    connection's readiness are seen in the same loop iteration and the timer
    would win, abandoning a connection the server had accepted long before
    (the server then counts one connection more). So a try whose timer fired
    gets :data:`CATCH_UP_STEPS` loop iterations, no wall time, to finish what
    is already ready; a SYN the server really did not accept cannot finish in them.
    """
    attempt = asyncio.ensure_future(connect)
    try:
        await asyncio.wait({attempt}, timeout=attempt_s)
        for _ in range(CATCH_UP_STEPS):
            if attempt.done():
                break
            await asyncio.sleep(0)
    except BaseException:
        attempt.cancel()
        raise
    if attempt.done():
        return attempt.result()
    attempt.cancel()
    try:
        await attempt
    except asyncio.CancelledError:
        pass
    except Exception:  # the try failed while it was being abandoned: it timed out all the same
        pass
    else:  # it connected while being abandoned: take it after all
        return attempt.result()
    raise TimeoutError(f"connect try not accepted within {attempt_s:g} s")


class OriginLimits(Generic[ConnectionT]):
    """Counts open connections per origin and makes requests beyond the cap wait their turn (one event loop).

    :meth:`claim` returns an idle connection to reuse, or ``None``: the caller
    may open one (its place is counted already and must be given back with
    :meth:`closed` if the connect fails). Whoever returns a connection to the
    idle list calls :meth:`freed`; whoever closes one calls :meth:`closed`.
    """

    def __init__(self) -> None:
        self._open: dict[Hashable, int] = {}
        self._connecting: dict[Hashable, int] = {}
        self._ceiling: dict[Hashable, int] = {}
        self._ceiling_lapse: dict[Hashable, asyncio.TimerHandle] = {}
        self._waiters: dict[Hashable, collections.deque[asyncio.Future[None]]] = {}

    def open_count(self, origin: Hashable) -> int:
        """Connections to ``origin`` open now (in use, idle, or being opened)."""
        return self._open.get(origin, 0)

    async def claim(
        self, origin: Hashable, limit: int, take_idle: Callable[[], ConnectionT | None]
    ) -> ConnectionT | None:
        """An idle connection of ``origin``, else ``None`` once one more may be opened (waits at the cap)."""
        while True:
            connection = take_idle()
            if connection is not None:
                return connection
            if self._open.get(origin, 0) < self._effective_limit(origin, limit):
                self._open[origin] = self._open.get(origin, 0) + 1
                self._connecting[origin] = self._connecting.get(origin, 0) + 1
                return None
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            queue = self._waiters.setdefault(origin, collections.deque())
            queue.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake(origin)  # the turn it was given passes to the next waiter
                elif waiter in queue:
                    queue.remove(waiter)
                raise

    def would_wait(self, origin: Hashable, limit: int) -> bool:
        """Whether a claim without an idle connection would have to wait now."""
        return self._open.get(origin, 0) >= self._effective_limit(origin, limit)

    def connected(self, origin: Hashable, limit: int) -> None:
        """A connect claimed by :meth:`claim` succeeded: a congested origin's ceiling rises by one."""
        self._settle(origin)
        ceiling = self._ceiling.get(origin)
        if ceiling is not None:
            if ceiling + 1 >= limit:
                del self._ceiling[origin]
            else:
                self._ceiling[origin] = ceiling + 1
            self._wake(origin)

    def not_accepted(self, origin: Hashable) -> None:
        """A connect try was not accepted in time: its place is given back and the origin's ceiling lowered.

        The ceiling becomes the connections established now (at least one), so that the requests
        dropped together wait for those to come free instead of all retrying at once.
        """
        self._settle(origin)
        established = self._open.get(origin, 0) - 1 - self._connecting.get(origin, 0)
        self._ceiling[origin] = max(1, established)
        previous = self._ceiling_lapse.pop(origin, None)
        if previous is not None:
            previous.cancel()
        self._ceiling_lapse[origin] = asyncio.get_running_loop().call_later(
            CONGESTION_HOLD_S, self._lift_ceiling, origin
        )
        self.closed(origin)

    def connect_failed(self, origin: Hashable) -> None:
        """A connect claimed by :meth:`claim` failed for good: its place is free."""
        self._settle(origin)
        self.closed(origin)

    def freed(self, origin: Hashable) -> None:
        """A connection of ``origin`` went back to the idle list: one waiter may take it."""
        self._wake(origin)

    def closed(self, origin: Hashable) -> None:
        """A connection of ``origin`` was closed (or never opened): its place is free."""
        count = self._open.get(origin, 0) - 1
        if count > 0:
            self._open[origin] = count
        else:
            self._open.pop(origin, None)
        self._wake(origin)

    def reset(self) -> None:
        """Forget every count (the pool closed all its connections); waiters are woken to find it closed."""
        self._open.clear()
        self._connecting.clear()
        self._ceiling.clear()
        for handle in self._ceiling_lapse.values():
            handle.cancel()
        self._ceiling_lapse.clear()
        for queue in self._waiters.values():
            for waiter in queue:
                if not waiter.done():
                    waiter.set_result(None)
        self._waiters.clear()

    def _lift_ceiling(self, origin: Hashable) -> None:
        """The congestion hold ran out: every waiter looks again (each one re-queues if still at the cap)."""
        self._ceiling_lapse.pop(origin, None)
        if self._ceiling.pop(origin, None) is None:
            return
        for waiter in self._waiters.pop(origin, collections.deque()):
            if not waiter.done():
                waiter.set_result(None)

    def _effective_limit(self, origin: Hashable, limit: int) -> int:
        return max(1, min(limit, self._ceiling.get(origin, limit)))

    def _settle(self, origin: Hashable) -> None:
        """One connect of ``origin`` is over (whichever way it ended)."""
        count = self._connecting.get(origin, 0) - 1
        if count > 0:
            self._connecting[origin] = count
        else:
            self._connecting.pop(origin, None)

    def _wake(self, origin: Hashable) -> None:
        queue = self._waiters.get(origin)
        while queue:
            waiter = queue.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
