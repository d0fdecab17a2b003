"""A run's merged environment (RunOptions.env, the settings' env block) reaches the providers' HTTP transport.

The proxy, timeout and client choice are read from the environment the app
merged, not from ``os.environ``: each test here keeps those variables out of
the process environment and shows, over real loopback HTTP, that the run
still obeys them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from catui.app import RunOptions, build_app
from catui.models.http_api.post import aclose_http_client
from catui.session.events import ResultEvent
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.http_proxy import ForwardProxy

SCRIPT: dict[str, Any] = {"turns": [{"repeat": True, "content": [{"type": "text", "text": "pong"}]}]}
TRANSPORT_VARIABLES = ("CATUI_HTTP_CLIENT", "CATUI_API_TIMEOUT_MS", "API_TIMEOUT_MS")


@pytest.fixture(autouse=True)
def _nothing_in_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in TRANSPORT_VARIABLES or name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)


async def run_once(tmp_path: Path, **options: Any) -> ResultEvent:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    app = build_app(
        RunOptions(cwd=project, model="sonnet", setting_sources=(), write_transcript=False, **options)
    )
    try:
        events = [event async for event in app.session.run("ping")]
    finally:
        await app.aclose()
        await aclose_http_client()
    assert not any(name.lower().endswith("_proxy") or name in TRANSPORT_VARIABLES for name in os.environ)
    return next(event for event in events if isinstance(event, ResultEvent))


@pytest.mark.parametrize("where", ["options", "settings"])
async def test_a_proxy_in_the_runs_env_carries_the_providers_requests(tmp_path: Path, where: str) -> None:
    with AnthropicTestServer(SCRIPT) as server, ForwardProxy() as proxy:
        proxy_env = {"HTTP_PROXY": proxy.url}
        if where == "options":
            result = await run_once(tmp_path, env={**server.env(), **proxy_env})
        else:
            result = await run_once(tmp_path, env=server.env(), settings_arg=json.dumps({"env": proxy_env}))
    assert not result.is_error and result.result == "pong"
    assert proxy.targets == [f"{server.url}/v1/messages"]
    # The server saw the request the proxy forwarded, in origin form.
    assert [r.path for r in server.requests] == ["/v1/messages"]


async def test_no_proxy_in_the_runs_env_exempts_the_server(tmp_path: Path) -> None:
    with AnthropicTestServer(SCRIPT) as server, ForwardProxy() as proxy:
        env = {**server.env(), "HTTP_PROXY": proxy.url, "NO_PROXY": "localhost,127.0.0.1"}
        result = await run_once(tmp_path, env=env)
    assert result.result == "pong"
    assert proxy.targets == [] and len(server.requests) == 1


@pytest.mark.parametrize("client", ["lean", "httpx"])
async def test_the_api_timeout_in_the_runs_env_reaches_either_transport(tmp_path: Path, client: str) -> None:
    slow = {"turns": [{"repeat": True, "delay_ms": 3000, "content": [{"type": "text", "text": "late"}]}]}
    with AnthropicTestServer(slow) as server:
        env = {
            **server.env(),
            "CATUI_HTTP_CLIENT": client,
            "CATUI_API_TIMEOUT_MS": "200",
            "CATUI_MAX_RETRIES": "0",
        }
        result = await run_once(tmp_path, env=env)
    assert result.is_error
    assert "timed out (ReadTimeout)" in result.result
    assert len(server.requests) == 1
