"""Connection limits of the lean pool (issue 13): a cap per host, reuse, and a server that accepts slowly.

The servers count the connections they hold open at once
(``max_open_connections``); the small-backlog server listens with a queue of 2
and pauses before every accept, as a busy ``http.server`` does.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catui.models.base import ModelRequest
from catui.models.http_api import lean_http
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.http_api.post import aclose_http_client
from catui.models.http_api.retry import RetryPolicy
from tests.support.cli_env import cli_env
from tests.support.inflight_server import InFlightServer
from tests.test_tool_window import (
    CHILD,
    HOLD_S,
    PARENT,
    assert_all_answered_in_order,
    fan_out_script,
    make_repo,
)

REQUEST = ModelRequest(
    model="claude-sonnet-4-6", system=[], messages=[{"role": "user", "content": "CAPPED hi"}], max_tokens=64
)


@pytest.fixture(autouse=True)
def _lean_without_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


async def stream_text(provider: AnthropicProvider) -> str:
    parts = []
    async for event in provider.stream(REQUEST):
        if event.get("type") == "content_block_delta":
            parts.append(event["delta"].get("text", ""))
    return "".join(parts)


def test_the_pool_opens_at_most_the_cap_per_host_and_reuses_them() -> None:
    script = {"turns": [{"repeat": True, "content": [{"type": "text", "text": "capped"}]}]}
    with InFlightServer(script, marker="CAPPED", hold_until=3, hold_timeout_s=HOLD_S) as server:
        provider = AnthropicProvider(base_url=server.url, api_key="k", retry=RetryPolicy(max_retries=0),
                                     env={"CATUI_HTTP_CLIENT": "lean", "CATUI_MAX_CONNECTIONS_PER_HOST": "3"})

        async def main() -> tuple[list[str], int]:
            try:
                texts = await asyncio.gather(*(stream_text(provider) for _ in range(12)))
                return list(texts), lean_http.pool().connections_opened
            finally:
                await aclose_http_client()

        texts, opened = asyncio.run(main())
    assert texts == ["capped"] * 12
    assert server.max_in_flight == 3  # three at once: the cap, reached
    assert server.max_open_connections == 3
    assert opened == 3  # the other nine requests reused those three connections


def test_a_bad_connection_cap_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    make_repo(tmp_path)
    with InFlightServer(fan_out_script(1), marker=CHILD) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", PARENT],
            cwd=tmp_path / "repo", env=cli_env(tmp_path, server, CATUI_MAX_CONNECTIONS_PER_HOST="lots"),
            capture_output=True, text=True, timeout=60,
        )
    assert done.returncode != 0
    assert "CATUI_MAX_CONNECTIONS_PER_HOST='lots' is not a positive whole number" in done.stderr
    assert not server.requests


def test_a_100_way_fan_out_finishes_against_a_server_that_accepts_slowly(tmp_path: Path) -> None:
    make_repo(tmp_path)
    server = InFlightServer(fan_out_script(100), marker=CHILD)
    server.listen_backlog = 2
    server.accept_delay_s = 0.02
    with server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", PARENT, "--output-format", "json"],
            cwd=tmp_path / "repo",
            env=cli_env(tmp_path, server, CATUI_TELEMETRY="0", CATUI_MAX_TOOL_USE_CONCURRENCY="100",
                        CATUI_MAX_CONNECTIONS_PER_HOST="4"),
            capture_output=True, text=True, timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_all_answered_in_order(server, 100)
    assert 1 <= server.max_open_connections <= 4  # the pool never held more than its cap open


def test_a_connect_not_accepted_in_time_lowers_the_ceiling_until_connects_succeed_again() -> None:
    """The requests dropped together by a full accept queue wait for established connections, not retry at once."""
    from catui.models.http_api.connection_limits import OriginLimits

    async def main() -> None:
        limits: OriginLimits[str] = OriginLimits()
        idle: list[str] = []
        origin = "server"

        def take_idle() -> str | None:
            return idle.pop() if idle else None

        for _ in range(4):  # four connects start at once under a cap of 10
            assert await limits.claim(origin, 10, take_idle) is None
        limits.connected(origin, 10)
        limits.connected(origin, 10)  # two were accepted ...
        limits.not_accepted(origin)  # ... and one was dropped: the ceiling becomes the two established
        assert limits.open_count(origin) == 3
        assert limits.would_wait(origin, 10)
        retry = asyncio.ensure_future(limits.claim(origin, 10, take_idle))
        await asyncio.sleep(0)
        assert not retry.done()  # no fresh SYN while the server is congested
        idle.append("conn-1")
        limits.freed(origin)  # an established connection came back: the waiting request reuses it
        assert await retry == "conn-1"
        limits.connected(origin, 10)  # the fourth connect got through late: the ceiling is three, all open
        assert limits.would_wait(origin, 10)
        limits.closed(origin)  # one closes: its place may be reopened
        assert await limits.claim(origin, 10, take_idle) is None
        for _ in range(7):  # every connect that succeeds raises the ceiling by one, back to the cap
            limits.connected(origin, 10)
            assert await limits.claim(origin, 10, take_idle) is None
        assert limits.open_count(origin) == 10
        assert limits.would_wait(origin, 10)

    asyncio.run(main())


def test_a_lowered_ceiling_lapses_after_the_congestion_hold() -> None:
    """A passing congestion must not cap the origin for the rest of the session."""
    from catui.models.http_api.connection_limits import CONGESTION_HOLD_S, OriginLimits

    async def main() -> None:
        limits: OriginLimits[str] = OriginLimits()
        origin = "server"
        for _ in range(3):
            assert await limits.claim(origin, 10, lambda: None) is None
        limits.connected(origin, 10)
        limits.not_accepted(origin)
        limits.not_accepted(origin)  # one established, ceiling one; nothing comes free
        waiting = asyncio.ensure_future(limits.claim(origin, 10, lambda: None))
        await asyncio.sleep(CONGESTION_HOLD_S / 2)
        assert not waiting.done()
        await asyncio.sleep(CONGESTION_HOLD_S)
        assert waiting.done() and waiting.result() is None  # the hold ran out: it may open a connection
        assert limits.open_count(origin) == 2

    asyncio.run(main())
