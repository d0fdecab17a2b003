"""claude-agent-sdk's session controls against the real ``catui`` CLI: context usage, MCP reconnect and toggle,
``include_hook_events``.

The official SDK starts catui (``cli_path``) on the loopback Anthropic server with a real stdio MCP
server (tests/support/mcp_servers/tools_server.py); the controls are answered by the same code that
serves catui's own ``CatuiClient`` (catui.app.status).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeSDKClient, HookEventMessage, HookMatcher, ResultMessage, UserMessage  # noqa: E402
from claude_agent_sdk import ToolResultBlock as SdkToolResultBlock  # noqa: E402

from tests.support.mcp_wait import MCP_WAIT_ENV  # noqa: E402
from tests.test_cli_sdk_protocol import (  # noqa: E402
    GUARD_S,
    ServerFactory,
    collect_response,
    isolated_home,
    loopback,
    options_for,
    run_query,
)

TOOLS_SERVER = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"
__all__ = ["isolated_home", "loopback"]  # fixtures used by name


def mcp_options(server: Any, tmp_path: Path) -> Any:
    options = options_for(server, tmp_path, allowed_tools=["mcp__tools"], mcp_servers={
        "tools": {"type": "stdio", "command": sys.executable, "args": [str(TOOLS_SERVER)],
                  "env": {"PYTHONPATH": str(Path(__file__).parent.parent)}}})
    options.env = {**options.env, **MCP_WAIT_ENV}
    return options


async def ask_pid(client: Any) -> tuple[str | None, str | None]:
    """One prompt; the turn's result text and the pid the MCP tool reported (None when it was not called)."""
    await client.query("pid?")
    messages = await asyncio.wait_for(collect_response(client), GUARD_S)
    pid = next((str(block.content) for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
                for block in m.content if isinstance(block, SdkToolResultBlock)), None)
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    return result.result, pid


async def test_the_sdk_toggles_and_reconnects_an_mcp_server(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"tools_include": ["mcp__tools__pid"], "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "mcp__tools__pid", "input": {}}], "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "got pid"}], "repeat": True},
        {"match": {"tools_exclude": ["mcp__tools__pid"]}, "content": [{"type": "text", "text": "no tool"}],
         "repeat": True},
    ]})
    async with ClaudeSDKClient(mcp_options(server, tmp_path)) as client:
        first, first_pid = await ask_pid(client)
        await client.toggle_mcp_server("tools", False)
        off_status = (await client.get_mcp_status())["mcpServers"]
        off, _ = await ask_pid(client)
        await client.toggle_mcp_server("tools", True)
        on, on_pid = await ask_pid(client)
        await client.reconnect_mcp_server("tools")
        again, again_pid = await ask_pid(client)
        with pytest.raises(Exception, match=r"no MCP server named 'nope'.*configured: tools"):
            await client.reconnect_mcp_server("nope")
        with pytest.raises(Exception, match=r"needs enabled true or false, not 'yes'"):
            await client.toggle_mcp_server("tools", "yes")  # type: ignore[arg-type]
    assert [s["status"] for s in off_status if s["name"] == "tools"] == ["disabled"]
    assert (first, off, on, again) == ("got pid", "no tool", "got pid", "got pid")
    assert len({first_pid, on_pid, again_pid}) == 3  # each connection is a new server process


async def test_the_sdk_reads_the_context_usage_of_the_last_request(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}],
                                  "usage": {"input_tokens": 1200, "output_tokens": 30}}]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        before = await client.get_context_usage()
        await client.query("hi")
        await asyncio.wait_for(collect_response(client), GUARD_S)
        after = await client.get_context_usage()
    assert before["totalTokens"] == 0 and before["model"] == "claude-sonnet-4-6"
    assert after["totalTokens"] == 1230 and after["maxTokens"] > 1230 and 0 < after["percentage"] < 100
    categories = {c["name"]: c["tokens"] for c in after["categories"]}
    assert categories["Messages"] == 1200 and categories["Last answer"] == 30
    assert json.dumps(after)  # plain JSON, as the SDK's TypedDict describes


async def sent_prompt_uuid(client: Any, text: str) -> str:
    """Send ``text``; the uuid of its echo (``--replay-user-messages``), which rewind_files takes."""
    await client.query(text)
    messages = await asyncio.wait_for(collect_response(client), GUARD_S)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error, messages[-1]
    echoed = [m for m in messages if isinstance(m, UserMessage) and m.parent_tool_use_id is None
              and text in str(m.content)]
    assert echoed and echoed[0].uuid
    return str(echoed[0].uuid)


async def test_the_sdk_rewinds_files_to_a_prompt(loopback: ServerFactory, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "kept.txt").write_text("original\n")

    def write(name: str, content: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": "Write", "input": {"file_path": str(work / name), "content": content}}

    server = loopback({"turns": [
        {"match": {"last_user_contains": "FIRST"}, "content": [write("new.txt", "made\n")]},
        {"match": {"last_user_contains": "SECOND"}, "content": [
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(work / "kept.txt")}},
            write("kept.txt", "changed\n")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]})
    options = options_for(server, tmp_path, permission_mode="bypassPermissions", enable_file_checkpointing=True,
                          extra_args={"replay-user-messages": None})
    async with ClaudeSDKClient(options) as client:
        first = await sent_prompt_uuid(client, "FIRST")
        second = await sent_prompt_uuid(client, "SECOND")
        assert (work / "kept.txt").read_text() == "changed\n" and (work / "new.txt").exists()
        await client.rewind_files(second)
        after_second = ((work / "kept.txt").read_text(), (work / "new.txt").exists())
        await client.rewind_files(first)
        after_first = ((work / "kept.txt").read_text(), (work / "new.txt").exists())
        with pytest.raises(Exception, match="no file checkpoint for user message 'nope'"):
            await client.rewind_files("nope")
    assert after_second == ("original\n", True)
    assert after_first == ("original\n", False)


async def test_rewind_files_without_checkpointing_says_how_to_turn_it_on(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}]}]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        with pytest.raises(Exception, match="file checkpointing is off"):
            await client.rewind_files("some-message-id")


async def test_include_hook_events_reports_every_hook_run_of_parent_and_child(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    async def allow(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_child_ls", "name": "Bash", "input": {"command": "ls"}}], "repeat": True},
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child finished"}], "repeat": True},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
         "input": {"description": "look around", "prompt": "CHILD-TASK: list the files",
                   "subagent_type": "general-purpose"}}], "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}], "repeat": True},
    ]})

    async def hook_events(include: bool) -> list[Any]:
        options = options_for(server, tmp_path, permission_mode="bypassPermissions", include_hook_events=include,
                              hooks={"PreToolUse": [HookMatcher(matcher="Bash|Agent", hooks=[allow])]})
        messages = await run_query("Delegate", options)
        assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "parent done"
        return [m for m in messages if isinstance(m, HookEventMessage)]

    assert await hook_events(False) == []
    events = await hook_events(True)
    assert [(e.subtype, e.hook_event_name) for e in events] == [
        ("hook_started", "PreToolUse"), ("hook_response", "PreToolUse")] * 2
    parent_started, parent_done, child_started, child_done = (e.data for e in events)
    assert parent_started["hook_id"] == parent_done["hook_id"] != child_started["hook_id"] == child_done["hook_id"]
    assert parent_done["outcome"] == child_done["outcome"] == "success" and parent_done["exit_code"] == 0
    assert parent_started["hook_name"] == "callback" and "agent_id" not in parent_started
    assert child_started["agent_type"] == "general-purpose" and child_started["agent_id"]
