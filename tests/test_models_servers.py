"""The loopback test servers work as other tests use them: standalone, and serving a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx2

from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.http_api.anthropic import AnthropicProvider
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_server import anthropic_server as anthropic_server  # the fixture factory
from tests.support.openai_server import OpenAITestServer

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "turns:\n  - repeat: true\n    content: [{type: text, text: standalone answer}]\n"


async def test_standalone_server_process(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.anthropic_server", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["url"]
        provider = AnthropicProvider(base_url=url, api_key="k", env={})
        accumulator = MessageAccumulator()
        async for event in provider.stream(
            ModelRequest(model="claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}])
        ):
            accumulator.feed(event)
        assert accumulator.message["content"][0]["text"] == "standalone answer"
    finally:
        process.terminate()
        process.wait(timeout=10)


CLIENT = """
import asyncio, os, sys
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator

async def main():
    acc = MessageAccumulator()
    request = ModelRequest(model="claude-haiku-4-5", messages=[{"role": "user", "content": "from a subprocess"}])
    async for event in AnthropicProvider().stream(request):
        acc.feed(event)
    print(acc.message["content"][0]["text"])

asyncio.run(main())
"""


def test_a_subprocess_talks_to_a_server_in_a_background_thread(
    anthropic_server: Callable[..., AnthropicTestServer],
) -> None:
    server = anthropic_server(
        {"turns": [{"match": {"model_contains": "haiku"}, "content": [{"type": "text", "text": "threaded"}]}]}
    )
    env = {"PATH": "/usr/bin:/bin", **server.env()}
    out = subprocess.run(
        [sys.executable, "-c", CLIENT], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "threaded"
    assert server.requests[0].body["messages"][0]["content"][0]["text"] == "from a subprocess"


def test_servers_report_a_missing_turn_and_unknown_routes() -> None:
    with AnthropicTestServer(
        {"turns": [{"match": {"last_user_contains": "x"}, "content": [{"type": "text", "text": "a"}]}]}
    ) as server:
        answer = httpx2.post(
            f"{server.url}/v1/messages",
            json={"model": "m", "messages": [{"role": "user", "content": "y"}], "stream": True},
        )
        assert answer.status_code == 400 and "no turn left" in answer.json()["error"]["message"]
        assert httpx2.post(f"{server.url}/v2/other", json={}).status_code == 404
        plain = httpx2.post(
            f"{server.url}/v1/messages", json={"model": "m", "messages": [{"role": "user", "content": "x"}]}
        )
        assert plain.json()["content"] == [{"type": "text", "text": "a"}]
    with OpenAITestServer(None) as openai_server:
        assert httpx2.post(f"{openai_server.url}/v1/other", json={}).status_code == 404
