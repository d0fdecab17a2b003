"""Pieces of the slash commands and compaction that need no terminal: the command registry's parsing, the
agent file the short form writes (read back by the real loader), and the context-window table."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from catui.agents.authoring import NewAgent, split_tools, write_agent_file
from catui.agents.markdown import load_markdown_agent
from catui.cli.tui.slash_commands import SlashCommand, SlashCommands
from catui.errors import ConfigurationError
from catui.session.compaction import keep_from
from catui.session.context_window import ContextPolicy, context_policy, table_context_window


class Host:
    app: Any = None
    context_tokens: int | None = None

    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str, style: str | None = None) -> None:
        self.lines.append(text)

    async def ask(self, prompt: str) -> str | None:
        return None

    async def switch_session(self, resume: str | None, reason: str) -> bool:
        return False


def test_only_registered_commands_are_taken_and_paths_go_to_the_model() -> None:
    seen: list[str] = []

    async def echo(host: Any, argument: str) -> None:
        seen.append(argument)

    async def refuse(host: Any, argument: str) -> None:
        raise ConfigurationError("not like that")

    commands = SlashCommands([SlashCommand("echo", "repeat", echo), SlashCommand("bad", "fails", refuse)])
    host = Host()
    assert asyncio.run(commands.dispatch(host, "/echo  two words ")) is True
    assert seen == ["two words"]
    assert asyncio.run(commands.dispatch(host, "/usr/bin/env python")) is False
    assert asyncio.run(commands.dispatch(host, "/unknown thing")) is False
    assert asyncio.run(commands.dispatch(host, "/bad")) is True and host.lines == ["/bad: not like that"]
    with pytest.raises(ValueError, match="registered twice"):
        commands.register(SlashCommand("echo", "again", echo))


def test_the_short_form_writes_a_file_the_loader_reads_back(tmp_path: Path) -> None:
    agent = NewAgent(name="reviewer", description="Reviews diffs: before a commit #1.", prompt="You review code.",
                     tools=split_tools("Read, Grep Bash(git diff:*)"), model="haiku")
    path = write_agent_file(tmp_path / "agents", agent)
    loaded = load_markdown_agent(path.read_text(), path=str(path), source="projectSettings")
    definition = loaded.definition
    assert definition is not None, loaded.error
    assert definition.agent_type == "reviewer" and definition.description == "Reviews diffs: before a commit #1."
    assert definition.tools == ["Read", "Grep", "Bash(git diff:*)"] and definition.model == "haiku"
    with pytest.raises(ConfigurationError, match="exists already"):
        write_agent_file(tmp_path / "agents", agent)
    with pytest.raises(ConfigurationError, match="description must not be empty"):
        write_agent_file(tmp_path / "agents", NewAgent(name="x", description=" ", prompt="p"))


def test_window_table_and_overrides() -> None:
    assert table_context_window("claude-sonnet-4-6") == 200_000
    assert table_context_window("claude-sonnet-4-6[1m]") == 1_000_000
    assert table_context_window("openai:gpt-4o-mini") == 128_000
    policy = context_policy({}, {"contextWindow": {"claude-sonnet": 50_000}})
    assert policy.window("claude-sonnet-4-6") == 50_000 and policy.window("claude-opus-4-1") == 200_000
    assert context_policy({"CATUI_CONTEXT_WINDOW": "8000"}, {"contextWindow": 50_000}).window("any") == 8000
    assert not context_policy({"DISABLE_AUTO_COMPACT": "1"}, {}).auto_enabled
    assert not context_policy({}, {"autoCompactEnabled": False}).auto_enabled
    with pytest.raises(ConfigurationError, match="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE='150'"):
        context_policy({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}, {})
    with pytest.raises(ConfigurationError, match=r"setting contextWindow.x=-3"):
        context_policy({}, {"contextWindow": {"x": -3}})
    small = ContextPolicy(every_model=10_000)
    assert small.usable("m", 32_000) == 7_500 and small.auto_threshold("m", 32_000) == 6_900


def test_the_kept_tail_starts_at_an_assistant_message_and_fits_its_budget() -> None:
    big = "x" * 4000
    messages = [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": big}]},
    ]
    assert keep_from(messages, 1500) == 3  # the second call and its result
    assert keep_from(messages, 100) == 5  # nothing fits: everything is summarised
    assert keep_from(messages, 10_000) == 1
