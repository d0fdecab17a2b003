"""The SDK's resume / continue_conversation / fork_session and claude-agent-sdk's session helpers, on
transcripts written by real runs against the loopback Anthropic server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.sdk_backend import collect, isolated_sdk_home  # noqa: F401 - isolated_sdk_home is a fixture

SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"first_user_contains": "HELPER-JOB"}, "repeat": True,
     "content": [{"type": "text", "text": "Helper done."}]},
    {"match": {"last_user_contains": "DELEGATE", "last_is_tool_result": False}, "content": [
        {"type": "tool_use", "id": "toolu_helper", "name": "Agent",
         "input": {"description": "help out", "prompt": "HELPER-JOB: list files", "subagent_type": "Explore"}}]},
    {"match": {"last_is_tool_result": True}, "repeat": True, "content": [{"type": "text", "text": "Delegated."}]},
    {"match": {"last_user_contains": "FIRST"}, "repeat": True, "content": [{"type": "text", "text": "Answer one."}]},
    {"repeat": True, "content": [{"type": "text", "text": "Later answer."}]},
]}


@pytest.fixture
def server() -> Any:
    with AnthropicTestServer(SCRIPT) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def options(server: AnthropicTestServer, project: Path, **fields: Any) -> catui.CatuiOptions:
    return catui.CatuiOptions(model="claude-sonnet-4-6", cwd=project, env=server.env(), **fields)


async def run(prompt: str, server: AnthropicTestServer, project: Path, **fields: Any) -> catui.ResultMessage:
    messages = await collect(prompt, options(server, project, **fields))
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage) and not result.is_error, result
    return result


def last_request_roles_and_texts(server: AnthropicTestServer) -> list[tuple[str, str]]:
    pairs = []
    for message in server.bodies()[-1]["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        pairs.append((message["role"], " ".join(
            b["text"] for b in blocks if b.get("type") == "text" and not b["text"].startswith("<system-reminder>"))))
    return pairs


async def test_resume_continue_and_fork_carry_the_old_conversation(server: Any, project: Path) -> None:
    first = await run("FIRST question", server, project)
    resumed = await run("go on", server, project, resume=first.session_id)
    assert resumed.session_id == first.session_id
    assert last_request_roles_and_texts(server) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "go on")]
    continued = await run("and then?", server, project, continue_conversation=True)
    assert continued.session_id == first.session_id
    assert len(server.bodies()[-1]["messages"]) == 5
    before = catui.get_session_messages(first.session_id, directory=str(project))
    forked = await run("another path", server, project, resume=first.session_id, fork_session=True)
    assert forked.session_id != first.session_id
    assert len(server.bodies()[-1]["messages"]) == 7
    # The old session is unchanged; the fork holds the old messages and its own.
    assert catui.get_session_messages(first.session_id, directory=str(project)) == before
    assert len(catui.get_session_messages(forked.session_id, directory=str(project))) == 8


async def test_session_helpers_read_real_transcripts(server: Any, project: Path) -> None:
    first = await run("FIRST question", server, project)
    second = await run("DELEGATE this", server, project)

    listed = catui.list_sessions(directory=str(project))
    assert [info.session_id for info in listed] == [second.session_id, first.session_id]
    info = listed[1]
    assert isinstance(info, catui.SDKSessionInfo)
    assert info.summary == info.first_prompt == "FIRST question" and info.custom_title is None
    assert info.cwd == str(project.resolve()) and info.file_size and info.file_size > 0
    assert info.last_modified > 0 and info.created_at and info.created_at > 0
    assert catui.list_sessions(directory=str(project), limit=1) == listed[:1]
    assert catui.list_sessions(directory=str(project), offset=1) == listed[1:]
    assert {i.session_id for i in catui.list_sessions()} == {first.session_id, second.session_id}
    assert catui.get_session_info(first.session_id) == info
    assert catui.get_session_info("00000000-0000-4000-8000-000000000000") is None

    messages = catui.get_session_messages(first.session_id, directory=str(project))
    assert [(m.type, m.session_id) for m in messages] == [("user", first.session_id), ("assistant", first.session_id)]
    assert messages[1].message["content"][0]["text"] == "Answer one." and messages[0].uuid
    assert catui.get_session_messages(first.session_id, limit=1, offset=1) == messages[1:]
    assert catui.get_session_messages("not a session id") == []

    agents = catui.list_subagents(second.session_id, directory=str(project))
    assert len(agents) == 1 and catui.list_subagents(first.session_id) == []
    child = catui.get_subagent_messages(second.session_id, agents[0], directory=str(project))
    assert [m.type for m in child] == ["user", "assistant"]
    assert "HELPER-JOB" in json.dumps(child[0].message) and child[1].message["content"][0]["text"] == "Helper done."
    assert {m.parent_tool_use_id for m in child} == {"toolu_helper"}
    assert catui.get_subagent_messages(second.session_id, "nope") == []

    catui.rename_session(first.session_id, "  Release checklist  ")
    catui.rename_session(first.session_id, "Release plan", directory=str(project))
    renamed = catui.get_session_info(first.session_id, directory=str(project))
    assert renamed is not None and renamed.custom_title == renamed.summary == "Release plan"
    # A title line is not a message: resuming the renamed session still works and sends only messages.
    await run("after the rename", server, project, resume=first.session_id)
    assert len(server.bodies()[-1]["messages"]) == 3
    with pytest.raises(ValueError, match="non-empty"):
        catui.rename_session(first.session_id, "   ")

    catui.delete_session(second.session_id, directory=str(project))
    assert [i.session_id for i in catui.list_sessions(directory=str(project))] == [first.session_id]
    assert catui.list_subagents(second.session_id) == []
    # The sub-agents' folder went with it.
    assert not list(Path(os.environ["CATUI_HOME"]).rglob(f"{second.session_id}*"))
    with pytest.raises(FileNotFoundError, match=second.session_id):
        catui.delete_session(second.session_id)
    with pytest.raises(ValueError, match="Invalid session_id"):
        catui.delete_session("../escape")


async def test_resume_options_with_bad_values_fail_in_one_line(server: Any, project: Path) -> None:
    with pytest.raises(catui.ConfigurationError, match=r"CatuiOptions\.resume '\.\./x' is not a session id"):
        await collect("hi", options(server, project, resume="../x"))
    with pytest.raises(catui.ConfigurationError, match="no saved session 00000000-0000-4000-8000-000000000000"):
        await collect("hi", options(server, project, resume="00000000-0000-4000-8000-000000000000"))
    with pytest.raises(catui.ConfigurationError, match=r"fork_session \(--fork-session\) needs a session to fork"):
        await collect("hi", options(server, project, fork_session=True))
    assert server.requests == []


async def test_tag_and_fork_a_session_then_resume_the_fork(server: Any, project: Path) -> None:
    first = await run("FIRST question", server, project)
    await run("go on", server, project, resume=first.session_id)
    catui.tag_session(first.session_id, "  experiment ")
    info = catui.get_session_info(first.session_id, directory=str(project))
    assert info is not None and info.tag == "experiment"
    catui.tag_session(first.session_id, None)
    info = catui.get_session_info(first.session_id, directory=str(project))
    assert info is not None and info.tag is None
    with pytest.raises(ValueError, match="tag must be non-empty"):
        catui.tag_session(first.session_id, "  ")

    original = catui.get_session_messages(first.session_id, directory=str(project))
    whole = catui.fork_session(first.session_id, directory=str(project))
    assert isinstance(whole, catui.ForkSessionResult) and whole.session_id != first.session_id
    copied = catui.get_session_messages(whole.session_id, directory=str(project))
    assert [m.message for m in copied] == [m.message for m in original]
    assert not {m.uuid for m in copied} & {m.uuid for m in original}  # fresh uuids
    assert all(m.session_id == whole.session_id for m in copied)
    fork_info = catui.get_session_info(whole.session_id, directory=str(project))
    assert fork_info is not None and fork_info.custom_title == "FIRST question (fork)"

    cut = catui.fork_session(first.session_id, up_to_message_id=original[1].uuid, title="Branch A")
    assert len(catui.get_session_messages(cut.session_id, directory=str(project))) == 2
    resumed = await run("from the branch", server, project, resume=cut.session_id)
    assert resumed.session_id == cut.session_id  # the copy is a session like any other
    assert last_request_roles_and_texts(server) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "from the branch")]
    with pytest.raises(ValueError, match="is not in session"):
        catui.fork_session(first.session_id, up_to_message_id="no-such-message")
    with pytest.raises(FileNotFoundError):
        catui.fork_session("0" * 8 + "-0000-4000-8000-" + "0" * 12)
