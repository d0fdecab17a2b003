"""File checkpoints and rewind_files: catui's SDK and claude-agent-sdk driving the real CLI.

Each prompt's first change to a file keeps the file's state before it (tests/…/file-history on disk);
rewinding to a prompt puts back every file changed at or after it, sub-agents' changes included.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import catui
from catui.session.file_history import FileHistory, RewindError
from tests.support.sdk_backend import GUARD_S, Backend, backend_fixture, isolated_sdk_home

__all__ = ["backend_fixture", "isolated_sdk_home"]


def write(path: Path, content: str, tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Write", "input": {"file_path": str(path), "content": content}}


def turns(work: Path) -> list[dict[str, Any]]:
    done = {"type": "text", "text": "done"}
    return [
        {"match": {"last_user_contains": "STEP-ONE"}, "content": [write(work / "a.txt", "one\n", "toolu_1")]},
        {"match": {"last_user_contains": "STEP-TWO"},
         "content": [write(work / "a.txt", "two\n", "toolu_2"), write(work / "b.txt", "bee\n", "toolu_3")]},
        {"match": {"last_user_contains": "STEP-THREE"}, "content": [{
            "type": "tool_use", "id": "toolu_4", "name": "Agent",
            "input": {"description": "write c", "prompt": "CHILD-WRITE", "subagent_type": "general-purpose"}}]},
        {"match": {"first_user_contains": "CHILD-WRITE", "last_is_tool_result": False},
         "content": [write(work / "c.txt", "sea\n", "toolu_5")]},
        {"match": {"last_is_tool_result": True}, "content": [done], "repeat": True},
    ]


async def prompt_uuid(client: catui.CatuiClient, text: str) -> str:
    """Send ``text``; the uuid of the user message that echoes it (what rewind_files takes)."""
    await client.query(text)

    async def read() -> list[Any]:
        return [m async for m in client.receive_response()]

    messages = await asyncio.wait_for(read(), GUARD_S)
    assert isinstance(messages[-1], catui.ResultMessage) and not messages[-1].is_error, messages[-1]
    echoed = [m for m in messages if isinstance(m, catui.UserMessage) and m.parent_tool_use_id is None
              and text in str(m.content)]
    assert echoed and echoed[0].uuid
    return echoed[0].uuid


async def test_rewind_puts_back_the_files_of_every_later_prompt(backend: Backend, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    options = backend.options(turns(work), cwd=str(work), permission_mode="bypassPermissions",
                              enable_file_checkpointing=True, replay_user_messages=True)
    async with catui.CatuiClient(options) as client:
        one = await prompt_uuid(client, "STEP-ONE")
        two = await prompt_uuid(client, "STEP-TWO")
        assert (work / "a.txt").read_text() == "two\n" and (work / "b.txt").exists()
        await client.rewind_files(two)
        assert (work / "a.txt").read_text() == "one\n" and not (work / "b.txt").exists()
        three = await prompt_uuid(client, "STEP-THREE")
        assert (work / "c.txt").read_text() == "sea\n"  # written by the sub-agent
        await client.rewind_files(three)
        assert not (work / "c.txt").exists() and (work / "a.txt").read_text() == "one\n"
        await client.rewind_files(one)
        assert sorted(p.name for p in work.iterdir() if p.suffix == ".txt") == []
        with pytest.raises(catui.CatuiError, match="no file checkpoint for user message 'nope'"):
            await client.rewind_files("nope")


async def test_rewind_with_checkpointing_off_says_how_to_turn_it_on(backend: Backend, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with catui.CatuiClient(backend.options(turns(work), cwd=str(work), permission_mode="bypassPermissions",
                                                 replay_user_messages=True)) as client:
        one = await prompt_uuid(client, "STEP-ONE")
        with pytest.raises(catui.CatuiError, match=r"file checkpointing is off.*enable_file_checkpointing"):
            await client.rewind_files(one)
    assert (work / "a.txt").read_text() == "one\n"


def test_checkpoints_are_read_back_from_disk(tmp_path: Path) -> None:
    folder, work = tmp_path / "history", tmp_path / "work"
    work.mkdir()
    (work / "kept.txt").write_bytes(b"\x00binary\xff")
    first = FileHistory(folder)
    first.begin_prompt("p1")
    first.before_tool("Write", {"file_path": str(work / "kept.txt")}, work)
    first.before_tool("NotebookEdit", {"notebook_path": "new.ipynb"}, work)  # relative: to the cwd
    first.before_tool("Bash", {"command": "rm -rf /"}, work)  # not a file tool: nothing kept
    (work / "kept.txt").write_text("changed")
    (work / "new.ipynb").write_text("{}")
    again = FileHistory(folder)  # a resumed session
    assert again.knows("p1") and not again.knows("p2")
    outcome = again.rewind("p1")
    assert (work / "kept.txt").read_bytes() == b"\x00binary\xff" and not (work / "new.ipynb").exists()
    assert outcome.restored == [str(work / "kept.txt")] and outcome.removed == [str(work / "new.ipynb")]
    with pytest.raises(RewindError, match="'p2'"):
        again.rewind("p2")


async def test_a_continued_session_rewinds_a_prompt_of_its_earlier_run(backend: Backend, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fields: dict[str, Any] = {"cwd": str(work), "permission_mode": "bypassPermissions",
                              "enable_file_checkpointing": True, "replay_user_messages": True}
    async with catui.CatuiClient(backend.options(turns(work), **fields)) as client:
        one = await prompt_uuid(client, "STEP-ONE")
    assert (work / "a.txt").read_text() == "one\n"
    async with catui.CatuiClient(backend.options(turns(work), continue_conversation=True, **fields)) as client:
        await client.rewind_files(one)
    assert not (work / "a.txt").exists()
