"""The retry policy shared by the HTTP providers.

It follows the official SDKs: retry 408, 409, 429 and every 5xx (529
"overloaded" included) and dropped connections, obey ``x-should-retry`` when
the server sends it, wait what ``retry-after-ms`` / ``retry-after`` say, and
otherwise back off exponentially with jitter. A stream that fails part-way
(cut before its end, or an overloaded/api error event) is retried on the same
budget; the events already handed over are withdrawn by a
:data:`~catui.models.base.STREAM_RETRY` event before the new attempt's first
event, so the consumer never keeps half a message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

from catui.errors import ProviderError
from catui.models.base import STREAM_RETRY, StreamEvent

RETRYABLE_STATUSES = frozenset({408, 409, 429})
MAX_RETRY_AFTER_S = 60.0
"""The longest wait catui accepts from a retry-after header; a longer one is cut to this."""

log = logging.getLogger("catui.models")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry.

    ``base_delay_s`` doubles on each attempt up to ``max_delay_s``; each wait
    is then shortened by up to 25 % at random so that many clients do not
    retry in lock-step.
    """

    max_retries: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RetryPolicy:
        """From ``CATUI_MAX_RETRIES`` (or ``CLAUDE_CODE_MAX_RETRIES``) and ``CATUI_RETRY_BASE_MS``."""
        env = os.environ if env is None else env
        max_retries = cls.max_retries
        raw = env.get("CATUI_MAX_RETRIES") or env.get("CLAUDE_CODE_MAX_RETRIES")
        if raw:
            try:
                max_retries = max(0, int(raw))
            except ValueError:
                pass
        base = cls.base_delay_s
        raw_base = env.get("CATUI_RETRY_BASE_MS")
        if raw_base:
            try:
                base = max(0.0, float(raw_base) / 1000.0)
            except ValueError:
                pass
        return cls(
            max_retries=max_retries, base_delay_s=base, max_delay_s=max(base, min(cls.max_delay_s, base * 64))
        )

    def backoff(self, attempt: int) -> float:
        """The wait before retry number ``attempt + 1`` when the server gave no retry-after."""
        delay = min(self.base_delay_s * (2.0 ** min(attempt, 30)), self.max_delay_s)
        return delay * (1.0 - 0.25 * random.random())


class RetryableFailure(ProviderError):
    """A failure that a new attempt may cure; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        max_retries: int | None = None,
    ) -> None:
        super().__init__(message, status=status, retryable=True)
        self.retry_after = retry_after
        # Some failures (a refused connection) deserve fewer attempts than the policy allows.
        self.max_retries = max_retries


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    import email.utils  # lazy (catui.lazy): an HTTP date in Retry-After is rare

    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def should_retry_status(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an HTTP error status is worth another attempt (``x-should-retry`` wins when present)."""
    hint = (headers.get("x-should-retry") or "").strip().lower()
    if hint == "true":
        return True
    if hint == "false":
        return False
    return status in RETRYABLE_STATUSES or status >= 500


async def stream_with_retries(
    attempt: Callable[[], AsyncIterator[StreamEvent]], policy: RetryPolicy
) -> AsyncIterator[StreamEvent]:
    """Run ``attempt()`` and yield its events, starting it again after a :class:`RetryableFailure`.

    When the failed attempt had already yielded events, a :data:`STREAM_RETRY`
    event is yielded before the retry so that the consumer discards them.
    Once ``policy.max_retries`` retries are spent the failure is raised as a
    plain :class:`ProviderError` whose ``retryable`` flag says it was transient in kind.
    """
    retries = 0
    while True:
        yielded = False
        try:
            async for event in attempt():
                yielded = True
                yield event
            return
        except RetryableFailure as failure:
            limit = (
                policy.max_retries
                if failure.max_retries is None
                else min(policy.max_retries, failure.max_retries)
            )
            if retries >= limit:
                suffix = "" if retries == 0 else f" (gave up after {retries} retries)"
                raise ProviderError(f"{failure}{suffix}", status=failure.status, retryable=True) from failure
            wait = failure.retry_after
            if wait is None or wait > MAX_RETRY_AFTER_S:
                wait = policy.backoff(retries) if wait is None else MAX_RETRY_AFTER_S
            retries += 1
            log.info("%s; retrying in %.2f s (retry %d of %d)", failure, wait, retries, limit)
            if yielded:
                yield {
                    "type": STREAM_RETRY,
                    "error": str(failure),
                    "attempt": retries,
                    "max_retries": limit,
                    "retry_delay_ms": int(wait * 1000),
                }
            await asyncio.sleep(wait)
