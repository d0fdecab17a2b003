"""Custom slash commands from the official claude-agent-sdk (driving the real CLI) and from catui's SDK.

Both send ``/greet Ada`` as the prompt, as a program would; the command's expansion reaches the model and
the init message lists the commands.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, SystemMessage  # noqa: E402

GUARD_S = 60  # a broken protocol stops the test here instead of hanging the suite (not a timing assertion)
CATUI = str(Path(sys.executable).with_name("catui"))
OK = {"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}
EXPANDED = "Say hello to Ada.\n"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("CATUI_MAX_RETRIES", "0")
    for name in ("CATUI_MODEL", "ANTHROPIC_MODEL", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "greet.md").write_text(
        "---\ndescription: Greets\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n")
    return work


def last_texts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for b in body["messages"][-1]["content"] if b.get("type") == "text"]


async def test_the_official_sdk_runs_a_command_and_sees_it_listed(project: Path) -> None:
    with AnthropicTestServer(OK) as server:
        options = ClaudeAgentOptions(cli_path=CATUI, cwd=str(project), model="claude-sonnet-4-6", env=server.env(),
                                     setting_sources=["project"])

        async def converse() -> tuple[list[Any], dict[str, Any] | None]:
            async with ClaudeSDKClient(options) as client:
                info = await client.get_server_info()
                await client.query("/greet Ada")
                return [m async for m in client.receive_response()], info

        messages, info = await asyncio.wait_for(converse(), GUARD_S)
        bodies = [r.body for r in server.requests]
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "greet" in init.data["slash_commands"]
    assert info is not None and {"name": "greet", "description": "Greets", "argumentHint": "<name>"} in info["commands"]
    result = next(m for m in messages if isinstance(m, ResultMessage))
    assert result.result == "ok" and not result.is_error
    assert last_texts(bodies[0])[-2:] == [
        "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>Ada</command-args>\n",
        EXPANDED]


async def test_catuis_sdk_runs_a_command(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(OK))
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=["project"],
                                 env={"PYTHONPATH": os.pathsep.join(sys.path)})
    messages = [m async for m in catui.query(prompt="/greet Ada", options=options)]
    init = messages[0]
    assert init.data["slash_commands"] == ["greet", "compact"]
    assert messages[-1].result == "ok"
    unknown = [m async for m in catui.query(prompt="/nope", options=options)]
    assert unknown[-1].result == "Unknown skill: nope"


async def test_a_commands_model_holds_for_its_own_prompt(project: Path) -> None:
    (project / ".claude" / "commands" / "quick.md").write_text("---\nmodel: claude-haiku-4-5\n---\nBe quick.\n")
    (project / ".claude" / "commands" / "odd.md").write_text("---\nmodel: openai:gpt-4.1\n---\nOdd.\n")
    with AnthropicTestServer(OK) as server:
        options = ClaudeAgentOptions(cli_path=CATUI, cwd=str(project), model="claude-sonnet-4-6", env=server.env(),
                                     setting_sources=["project"])

        async def converse() -> list[list[Any]]:
            turns = []
            async with ClaudeSDKClient(options) as client:
                for prompt in ("/quick", "plain again", "/odd"):
                    await client.query(prompt)
                    turns.append([m async for m in client.receive_response()])
            return turns

        turns = await asyncio.wait_for(converse(), GUARD_S)
        models = [r.body["model"] for r in server.requests]
    assert models == ["claude-haiku-4-5", "claude-sonnet-4-6"]
    # a model the session cannot reach (no OpenAI key here) ends that prompt with the reason, nothing sent
    failed = turns[2][-1]
    assert isinstance(failed, ResultMessage) and failed.is_error and "openai:gpt-4.1" in str(failed.result)
