"""What the SDK end-to-end tests share: an isolated home, the two model backends, collecting a query.

The fixtures here are imported by the test modules that use them (pytest finds fixtures in a
module's namespace): ``isolated_sdk_home`` is autouse there, and ``backend_fixture`` provides the
``backend`` argument (a different function name, so that test arguments do not shadow the import).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import catui
from catui.models.resolve import clear_provider_cache
from tests.support.anthropic_server import AnthropicTestServer

GUARD_S = 20  # a failing scenario stops here instead of hanging the suite (not a timing assertion)


class Backend:
    """Turns a script into CatuiOptions for one of the two model backends."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.servers: list[AnthropicTestServer] = []
        self._count = 0

    def options(self, turns: list[dict[str, Any]], **fields: Any) -> catui.CatuiOptions:
        self._count += 1
        env = dict(fields.pop("env", {}))
        if self.kind == "scripted":
            path = self.tmp_path / f"script{self._count}.yaml"
            path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
            model = f"scripted:{path}"
        else:
            server = AnthropicTestServer({"turns": turns})
            server.start()
            self.servers.append(server)
            env.update(server.env())
            model = "claude-sonnet-4-6"
        # Hermetic by default (no settings files of the machine), and sub-agents' text shown, which these
        # tests check; tests of claude-agent-sdk's defaults (everything read, sub-agent text hidden) pass them.
        fields.setdefault("setting_sources", [])
        fields.setdefault("forward_subagent_text", True)
        return catui.CatuiOptions(model=model, env=env, **fields)

    def close(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture(autouse=True)
def isolated_sdk_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh CATUI_HOME and HOME per test; providers cached during the test are dropped after it."""
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield
    clear_provider_cache()


@pytest.fixture(name="backend", params=["scripted", "anthropic"])
def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each test that takes it runs twice: on the scripted provider and on a loopback Anthropic server."""
    chosen = Backend(request.param, tmp_path)
    yield chosen
    chosen.close()


async def collect(prompt: str, options: catui.CatuiOptions) -> list[Any]:
    """Every message of ``catui.query(prompt, options)``, failing after GUARD_S instead of hanging."""

    async def run() -> list[Any]:
        messages: list[Any] = []
        try:
            async for message in catui.query(prompt, options):
                messages.append(message)
        except catui.ResultError as error:
            # claude-agent-sdk raises after an error result; the result is the last message collected.
            last = messages[-1]
            assert isinstance(last, catui.ResultMessage) and last.is_error and error.subtype == last.subtype
        return messages

    return await asyncio.wait_for(run(), GUARD_S)


def texts(message: Any) -> str:
    """The text blocks of an AssistantMessage, joined."""
    return "".join(b.text for b in message.content if isinstance(b, catui.TextBlock))
