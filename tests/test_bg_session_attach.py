"""Issue 31, point 5: a CatuiClient attached to a real background session (a detached ``catui.bgsessions.worker``
process against the loopback Anthropic server): turns sent, messages received as SDK objects, permission requests
answered by the client's can_use_tool, detaching leaves the session running; a SIGKILL while attached."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import GUARD_S, kill_all, main_bodies, wait_for
from tests.support.cli_env import cli_env, git_repo


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def write_call(tool_id: str, path: Path, content: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": tool_id, "name": "Write", "input": {"file_path": str(path), "content": content}}]


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    folder = git_repo(tmp_path)
    yield folder
    kill_all(tmp_path / "catui-home")


def use_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, repo: Path, server: AnthropicTestServer) -> None:
    for key, value in cli_env(tmp_path, server).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(repo)


def bodies_with(server: AnthropicTestServer, needle: str) -> list[dict[str, Any]]:
    return [b for b in main_bodies(server) if needle in json.dumps(b)]


def test_an_attached_client_sends_turns_gets_sdk_messages_answers_permissions_and_detaches(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "wait here"}, "content": text("ready")},
        {"match": {"last_user_contains": "write notes"}, "content": write_call("toolu_a", repo / "notes.txt", "draft\n")},
        {"match": {"last_is_tool_result": True, "last_user_contains": "notes.txt"}, "content": text("notes written")},
        {"match": {"last_user_contains": "write secrets"},
         "content": write_call("toolu_b", repo / "secrets.txt", "key\n")},
        {"match": {"last_is_tool_result": True}, "content": text("could not write secrets")},
    ]}
    with AnthropicTestServer(script) as server:
        use_server(monkeypatch, tmp_path, repo, server)
        session = catui.start_bg_session("wait here", name="scribe")["id"]
        wait_for("the first turn", lambda: catui.get_bg_session("scribe").get("status") == "idle")
        asked: list[tuple[str, dict[str, Any], catui.ToolPermissionContext]] = []

        async def allow_but_edit(name: str, tool_input: dict[str, Any],
                                 context: catui.ToolPermissionContext) -> catui.PermissionResult:
            asked.append((name, tool_input, context))
            return catui.PermissionResultAllow(updated_input={**tool_input, "content": "final\n"})

        async def first_client() -> list[Any]:
            options = catui.CatuiOptions(can_use_tool=allow_but_edit)
            async with catui.CatuiClient.attach("scribe", options) as client:
                assert client.session_id == catui.get_bg_session(session)["sessionId"]
                await client.query("write notes")
                return [message async for message in client.receive_response()]

        messages = asyncio.run(asyncio.wait_for(first_client(), GUARD_S))
        # the session's own messages, as the SDK's classes (not the turn before attaching)
        assert not any(isinstance(m, catui.AssistantMessage) and "ready" in str(m.content) for m in messages)
        calls = [b for m in messages if isinstance(m, catui.AssistantMessage) for b in m.content
                 if isinstance(b, catui.ToolUseBlock)]
        assert [(c.id, c.name) for c in calls] == [("toolu_a", "Write")]
        results = [b for m in messages if isinstance(m, catui.UserMessage) and isinstance(m.content, list)
                   for b in m.content if isinstance(b, catui.ToolResultBlock)]
        assert [r.tool_use_id for r in results] == ["toolu_a"] and not results[0].is_error
        final = messages[-1]
        assert isinstance(final, catui.ResultMessage) and final.result == "notes written" and not final.is_error
        # can_use_tool was asked with the call and its context, and its edited input is what ran
        ((name, tool_input, context),) = asked
        assert name == "Write" and tool_input["content"] == "draft\n" and context.tool_use_id == "toolu_a"
        assert all(isinstance(s, catui.PermissionUpdate) for s in context.suggestions)
        assert (repo / "notes.txt").read_text() == "final\n"

        # detached: the session is still running, idle, and another client finds it
        wait_for("idle again", lambda: catui.get_bg_session("scribe").get("status") == "idle")
        assert catui.get_bg_session("scribe")["state"] != "stopped"

        async def refuse(name: str, tool_input: dict[str, Any],
                         context: catui.ToolPermissionContext) -> catui.PermissionResult:
            return catui.PermissionResultDeny(message="secrets stay out of the repo")

        async def second_client() -> catui.ResultMessage:
            async with catui.CatuiClient.attach(session[:5], catui.CatuiOptions(can_use_tool=refuse)) as client:
                await client.query("write secrets")
                last = [m async for m in client.receive_response()][-1]
                assert isinstance(last, catui.ResultMessage)
                return last

        assert asyncio.run(asyncio.wait_for(second_client(), GUARD_S)).result == "could not write secrets"
        assert not (repo / "secrets.txt").exists()
        assert bodies_with(server, "secrets stay out of the repo"), "the denial reached the model"
        assert catui.get_bg_session("scribe")["state"] != "stopped"


def test_a_request_pending_before_attaching_is_answered_by_the_attached_client(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "make a file"}, "content": write_call("toolu_p", repo / "made.txt", "made\n")},
        {"match": {"last_is_tool_result": True}, "content": text("made it")},
    ]}
    with AnthropicTestServer(script) as server:
        use_server(monkeypatch, tmp_path, repo, server)
        catui.start_bg_session("make a file", name="maker")
        wait_for("the permission request", lambda: catui.get_bg_session("maker")["state"] == "blocked")
        seen: list[str] = []

        async def allow(name: str, tool_input: dict[str, Any], context: catui.ToolPermissionContext
                        ) -> catui.PermissionResult:
            seen.append(name)
            return catui.PermissionResultAllow()

        async def attached() -> list[Any]:
            async with catui.CatuiClient.attach("maker", catui.CatuiOptions(can_use_tool=allow)) as client:
                return [m async for m in client.receive_response()]

        messages = asyncio.run(asyncio.wait_for(attached(), GUARD_S))
        assert seen == ["Write"] and (repo / "made.txt").read_text() == "made\n"
        assert isinstance(messages[-1], catui.ResultMessage) and messages[-1].result == "made it"
        wait_for("done", lambda: catui.get_bg_session("maker")["state"] == "done")


def test_attaching_to_an_unknown_or_stopped_session_and_a_kill_while_attached(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "wait here"}, "content": text("ready")},
        {"match": {"last_user_contains": "slow answer"}, "content": text("too late"), "delay_ms": 20000},
    ]}
    with AnthropicTestServer(script) as server:
        use_server(monkeypatch, tmp_path, repo, server)

        async def attach_only(ref: str) -> None:
            async with catui.CatuiClient.attach(ref):
                pass

        with pytest.raises(catui.BackgroundSessionError, match="No session matching 'ghost'"):
            asyncio.run(attach_only("ghost"))
        session = catui.start_bg_session("wait here", name="victim")["id"]
        wait_for("the first turn", lambda: catui.get_bg_session("victim").get("status") == "idle")

        async def killed_while_waiting() -> None:
            async with catui.CatuiClient.attach("victim") as client:
                await client.query("slow answer please")
                while not bodies_with(server, "slow answer please"):
                    await asyncio.sleep(0.05)
                os.killpg(catui.get_bg_session("victim")["pid"], signal.SIGKILL)
                async for _ in client.receive_response():
                    pass

        with pytest.raises(catui.BackgroundSessionError, match=f"{session} \\(victim\\) stopped before it answered"):
            asyncio.run(asyncio.wait_for(killed_while_waiting(), GUARD_S))
        with pytest.raises(catui.BackgroundSessionError, match=r"is not running; catui\.respawn_bg_session"):
            asyncio.run(attach_only("victim"))
