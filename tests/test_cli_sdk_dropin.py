"""catui as a drop-in CLI under the official Python SDK (claude-agent-sdk): session readers, API errors,
truncating resume, origin, the flags the SDKs pass and what catui refuses by name.

The TypeScript SDK's counterparts are in tests/test_ts_sdk.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    get_session_messages,
    list_sessions,
    query,
)

from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.loopback import started_servers  # noqa: E402

GUARD_S = 60
CATUI = str(Path(sys.executable).with_name("catui"))
ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CATUI_LINK_CLAUDE_SESSIONS", "1")
    monkeypatch.setenv("CATUI_MAX_RETRIES", "0")
    for name in ("CATUI_MODEL", "ANTHROPIC_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    yield from started_servers(AnthropicTestServer)


def options_for(server: AnthropicTestServer, tmp_path: Path, **fields: Any) -> ClaudeAgentOptions:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=CATUI, cwd=str(work), model=fields.pop("model", "claude-sonnet-4-6"),
                              env=server.env(), **fields)


async def run_query(prompt: Any, options: ClaudeAgentOptions) -> tuple[list[Any], BaseException | None]:
    """The messages the SDK yielded, and what it raised at the end (None: nothing)."""
    messages: list[Any] = []

    async def gather() -> None:
        async for message in query(prompt=prompt, options=options):
            messages.append(message)

    try:
        await asyncio.wait_for(gather(), GUARD_S)
    except Exception as exc:
        return messages, exc
    return messages, None


async def test_the_python_sdks_session_readers_find_catuis_session(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "noted"}]}]})
    messages, raised = await run_query("Remember the word teapot", options_for(server, tmp_path))
    assert raised is None
    session_id = messages[-1].session_id

    (listed,) = list_sessions(directory=str(tmp_path / "work"))
    assert listed.session_id == session_id and listed.cwd == str(tmp_path / "work")
    read = get_session_messages(session_id, directory=str(tmp_path / "work"))
    assert [m.type for m in read] == ["user", "assistant"]
    assert "teapot" in json.dumps(read[0].message) and "noted" in json.dumps(read[1].message)
    # the transcript catui wrote under its own home is the same file, so catui's reader sees it too
    import catui

    assert [s.session_id for s in catui.list_sessions(directory=str(tmp_path / "work"))] == [session_id]


async def test_an_unknown_model_ends_in_an_api_error_result(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"repeat": True, "error": {"status": 404, "type": "not_found_error",
                                                            "message": "model: claude-nope"}}]})
    messages, _raised = await run_query("hi", options_for(server, tmp_path, model="claude-nope"))
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "success" and result.is_error is True
    assert result.api_error_status == 404 and result.terminal_reason == "api_error"
    assert result.result is not None and "model: claude-nope" in result.result


async def test_resume_session_at_forks_the_conversation_cut_after_a_message(loopback: ServerFactory,
                                                                           tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "first"}, "content": [{"type": "text", "text": "answer one"}]},
        {"match": {"last_user_contains": "second"}, "content": [{"type": "text", "text": "answer two"}]},
        {"match": {"last_user_contains": "third"}, "content": [{"type": "text", "text": "answer three"}]},
    ]})

    async def two_prompts() -> AsyncIterator[dict[str, Any]]:
        for text in ("first question", "second question"):
            yield {"type": "user", "message": {"role": "user", "content": text}}

    messages, raised = await run_query(two_prompts(), options_for(server, tmp_path))
    assert raised is None
    session_id = messages[-1].session_id
    stored = get_session_messages(session_id, directory=str(tmp_path / "work"))
    first_answer = next(m for m in stored if m.type == "assistant" and "answer one" in json.dumps(m.message))
    second_prompt = next(m for m in stored if m.type == "user" and "second question" in json.dumps(m.message))

    options = options_for(server, tmp_path, resume=session_id, fork_session=True,
                          resume_session_at=first_answer.uuid, resume_drops_turn=second_prompt.uuid)
    forked, raised = await run_query("third question", options)
    assert raised is None and forked[-1].result == "answer three" and forked[-1].session_id != session_id
    sent = json.dumps(server.bodies()[-1]["messages"])
    assert "answer one" in sent and "second question" not in sent and "answer two" not in sent

    # a cut that would drop more than the declared turn is refused, as Claude Code refuses it
    refused = options_for(server, tmp_path, resume=session_id, fork_session=True,
                          resume_session_at=first_answer.uuid, resume_drops_turn=first_answer.uuid)
    _, raised = await run_query("third question", refused)
    assert raised is not None


async def test_a_streamed_prompts_origin_is_on_its_result(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "hi"}]}]})

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": "hello"}, "origin": {"kind": "human"}}

    messages, raised = await run_query(prompts(), options_for(server, tmp_path))
    assert raised is None
    assert messages[-1].origin == {"kind": "human"}


async def test_clear_resets_the_conversation_with_a_conversation_reset_message(loopback: ServerFactory,
                                                                            tmp_path: Path) -> None:
    from claude_agent_sdk import ClaudeSDKClient, ConversationResetMessage

    server = loopback({"turns": [{"repeat": True, "content": [{"type": "text", "text": "hi"}]}]})

    async def response(client: Any) -> list[Any]:
        return [m async for m in client.receive_response()]

    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        await client.query("remember the word teapot")
        before = await asyncio.wait_for(response(client), GUARD_S)
        await client.query("/clear")
        cleared = await asyncio.wait_for(response(client), GUARD_S)
        await client.query("what was the word?")
        after = await asyncio.wait_for(response(client), GUARD_S)
    old_id = before[-1].session_id
    (reset,) = [m for m in cleared if isinstance(m, ConversationResetMessage)]
    assert reset.session_id == old_id and reset.new_conversation_id
    assert isinstance(cleared[-1], ResultMessage) and not cleared[-1].is_error
    assert after[-1].session_id not in (old_id, None)
    assert len(server.bodies()) == 2  # /clear itself asks the model nothing
    assert "teapot" not in json.dumps(server.bodies()[-1]["messages"])
    assert not any(isinstance(m, AssistantMessage) for m in cleared)
    # the old session stays on disk, resumable
    assert {s.session_id for s in list_sessions(directory=str(tmp_path / "work"))} == {old_id, after[-1].session_id}


async def test_session_store_mirrors_the_transcript_and_resumes_from_it(loopback: ServerFactory,
                                                                       tmp_path: Path) -> None:
    import shutil

    from claude_agent_sdk import InMemorySessionStore, project_key_for_directory

    server = loopback({"turns": [
        {"match": {"last_user_contains": "teapot"}, "content": [{"type": "text", "text": "noted"}]},
        {"match": {"last_user_contains": "which word"}, "content": [{"type": "text", "text": "teapot"}]},
    ]})
    store = InMemorySessionStore()
    messages, raised = await run_query("Remember the word teapot", options_for(server, tmp_path, session_store=store))
    assert raised is None
    session_id = messages[-1].session_id
    key = {"project_key": project_key_for_directory(str(tmp_path / "work")), "session_id": session_id}
    mirrored = await store.load(key)  # type: ignore[arg-type]
    assert mirrored is not None
    assert [e["type"] for e in mirrored if e.get("type") in ("user", "assistant")] == ["user", "assistant"]

    # every local copy gone: the SDK writes the stored session into a temporary Claude config folder and
    # catui resumes it from there
    shutil.rmtree(tmp_path / "catui-home" / "projects")
    shutil.rmtree(tmp_path / "claude-config" / "projects")
    resumed, raised = await run_query("which word was it?", options_for(server, tmp_path, session_store=store,
                                                                         resume=session_id))
    assert raised is None and resumed[-1].result == "teapot" and resumed[-1].session_id == session_id
    sent = json.dumps(server.bodies()[-1]["messages"])
    assert "Remember the word teapot" in sent and "noted" in sent


# Every flag the official SDKs pass (TypeScript current and 0.2.92, Python 0.2.189) with a sample value:
# none may end in a bare usage error (exit 2); each is honoured or refused by name.
SDK_FLAGS: list[list[str]] = [
    ["--allow-dangerously-skip-permissions"], ["--dangerously-skip-permissions"], ["--await-initialize"],
    ["--debug"], ["--debug-to-stderr"], ["--no-session-persistence"], ["--forward-subagent-text"],
    ["--initialize-fields", "settings,disallowedTools"], ["--permission-prompts", "none"],
    ["--plugin-dir-no-mcp", "."], ["--no-optional-locks"], ["--workload", "ci"], ["--hard-fail"],
    ["--porcelain"], ["--proactive"], ["--assistant"], ["--channels", "x"], ["--sdk-url", "ws://127.0.0.1:1"],
    ["--managed-settings", "{}"], ["--managed-settings-in-initialize"], ["--project-config-root", "."],
    ["--task-budget", "1000"], ["--betas", "x"], ["--session-mirror"], ["--thinking-display", "summarized"],
    ["--resume-session-at", "00000000-0000-0000-0000-000000000000"], ["--resume-drops-turn", "x"],
    ["--setting-sources=user,project"], ["--thinking=adaptive"], ["--permission-prompt-tool=stdio"],
    ["--tools=default"], ["--include-hook-events"], ["--include-partial-messages"], ["--strict-mcp-config"],
    ["--fork-session"], ["--continue"], ["--effort", "high"], ["--max-budget-usd", "1"],
]


@pytest.mark.parametrize("flag", SDK_FLAGS, ids=lambda flag: flag[0])
def test_no_sdk_flag_ends_in_a_bare_usage_error(flag: list[str], tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text("turns:\n  - content: [{type: text, text: hi}]\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CATUI_HOME": str(tmp_path / "catui-home"),
           "CATUI_MODEL": "scripted:script.yaml", "CATUI_LINK_CLAUDE_SESSIONS": "0"}
    done = subprocess.run([sys.executable, "-m", "catui", "--output-format", "stream-json", "--verbose",
                           "--input-format", "stream-json", *flag], input="", capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    assert "No such option" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    if done.returncode != 0:
        # refused: one line naming the flag (and what catui does instead, or what the flag needs)
        assert done.stderr.count("\n") == 1 and flag[0].split("=")[0] in done.stderr, done.stderr


def test_every_control_request_of_the_sdks_is_answered_by_name(tmp_path: Path) -> None:
    """Each request the SDKs can send is carried out or refused with an error naming it and saying what
    catui does instead; none is left unanswered or called unknown."""
    from catui.cli.stream.control_requests import UNSUPPORTED

    (tmp_path / "script.yaml").write_text("turns:\n  - content: [{type: text, text: hi}]\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CATUI_HOME": str(tmp_path / "catui-home"),
           "CATUI_MODEL": "scripted:script.yaml", "CATUI_LINK_CLAUDE_SESSIONS": "0"}
    requests = [{"subtype": "initialize"}, *({"subtype": name} for name in sorted(UNSUPPORTED)),
                {"subtype": "get_settings"}, {"subtype": "rename_session", "title": "renamed"}]
    lines = [json.dumps({"type": "control_request", "request_id": f"r{i}", "request": r})
             for i, r in enumerate(requests)]
    done = subprocess.run([sys.executable, "-m", "catui", "--output-format", "stream-json", "--verbose",
                           "--input-format", "stream-json"], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    answers = {obj["response"]["request_id"]: obj["response"] for obj in map(json.loads, done.stdout.splitlines())
               if obj.get("type") == "control_response"}
    assert len(answers) == len(requests)
    for index, request in enumerate(requests[1:-2], start=1):
        answer = answers[f"r{index}"]
        assert answer["subtype"] == "error" and f"'{request['subtype']}'" in answer["error"]
        assert UNSUPPORTED[request["subtype"]] in answer["error"]
    assert answers[f"r{len(requests) - 2}"]["subtype"] == "success"  # get_settings
    assert "settings" in answers[f"r{len(requests) - 2}"]["response"]
    # rename_session before any prompt: no transcript to title yet (an empty session file is never made)
    assert "send a prompt first" in answers[f"r{len(requests) - 1}"]["error"]
    assert not list((tmp_path / "catui-home").glob("projects/*/*.jsonl"))


@pytest.mark.parametrize("how", ["default", "flag", "env"])
def test_print_mode_forwards_sub_agent_text_only_when_asked(how: str, tmp_path: Path) -> None:
    import yaml

    script = {"turns": [
        {"match": {"first_user_contains": "CHILD-TASK"}, "content": [{"type": "text", "text": "child words"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
         "input": {"description": "talk", "prompt": "CHILD-TASK: talk", "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ]}
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CATUI_HOME": str(tmp_path / "catui-home"),
           "CATUI_LINK_CLAUDE_SESSIONS": "0"}
    if how == "env":
        env["CLAUDE_CODE_FORWARD_SUBAGENT_TEXT"] = "1"
    flags = ["--forward-subagent-text"] if how == "flag" else []
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "Delegate", "--model", "scripted:script.yaml",
                           "--output-format", "stream-json", "--verbose", *flags], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    child = [obj for obj in map(json.loads, done.stdout.splitlines()) if obj.get("parent_tool_use_id") == "toolu_agent"]
    assert any(obj["type"] == "user" and "CHILD-TASK" in json.dumps(obj["message"]) for obj in child)
    forwarded = any(obj["type"] == "assistant" and "child words" in json.dumps(obj["message"]) for obj in child)
    assert forwarded is (how != "default")
