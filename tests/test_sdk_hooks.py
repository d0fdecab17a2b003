"""catui's own SDK: ``hooks=`` with Python functions, on the scripted provider and a loopback Anthropic server.

The script's turns match on text that only a working hook puts in the
conversation (its additional context, its refusal reason), so a hook that did
not run, or whose answer was not read, leaves a request no turn fits.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import catui
from catui.sdk.hooks import HookMatcher
from tests.support.sdk_backend import (  # noqa: F401 - backend_fixture and isolated_sdk_home are fixtures
    Backend,
    backend_fixture,
    collect,
    isolated_sdk_home,
    texts,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep\n", encoding="utf-8")
    return folder


def bash(command: str, call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}


def tool_result_texts(messages: list[Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for message in messages:
        if isinstance(message, catui.UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, catui.ToolResultBlock):
                    content = block.content
                    found[block.tool_use_id] = content if isinstance(content, str) else "".join(
                        part.get("text", "") for part in content or [])
    return found


async def test_a_pre_tool_use_hook_refuses_bash_and_sees_the_call(backend: Backend, project: Path) -> None:
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def guard(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((input_data, tool_use_id))
        if "rm " in input_data["tool_input"].get("command", ""):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "REFUSED-BY-HOOK: no rm"}}
        return {}

    options = backend.options([
        {"match": {"last_is_tool_result": False}, "content": [bash("rm keep.txt", "toolu_rm"), bash("ls", "toolu_ls")]},
        {"match": {"last_user_contains": "REFUSED-BY-HOOK"}, "content": [{"type": "text", "text": "understood"}]},
    ], cwd=project, permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]})
    messages = await collect("tidy up", options)

    assert sorted(tool_use_id or "" for _, tool_use_id in seen) == ["toolu_ls", "toolu_rm"]
    first = next(data for data, call in seen if call == "toolu_rm")
    assert first["hook_event_name"] == "PreToolUse" and first["tool_name"] == "Bash"
    assert first["session_id"] and first["cwd"] == str(project.resolve()) and "agent_id" not in first
    results = tool_result_texts(messages)
    assert "REFUSED-BY-HOOK: no rm" in results["toolu_rm"] and "keep.txt" in results["toolu_ls"]
    assert (project / "keep.txt").exists()
    assert texts(next(m for m in reversed(messages) if isinstance(m, catui.AssistantMessage))) == "understood"


async def test_hooks_fire_for_a_sub_agents_tool_calls_with_its_id_and_type(backend: Backend, project: Path) -> None:
    events: list[dict[str, Any]] = []

    async def record(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        events.append(input_data)
        return {}

    async def add_context(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CHILD-SAW-CONTEXT"}}

    options = backend.options([
        {"match": {"first_user_contains": "CHILD-JOB", "last_is_tool_result": False},
         "content": [bash("ls", "toolu_child_ls")]},
        {"match": {"first_user_contains": "CHILD-JOB", "last_user_contains": "CHILD-SAW-CONTEXT"},
         "content": [{"type": "text", "text": "child done"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
         "input": {"description": "list", "prompt": "CHILD-JOB: list files", "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ], cwd=project, permission_mode="bypassPermissions", hooks={
        "PreToolUse": [HookMatcher(matcher="Bash", hooks=[record])],
        "PostToolUse": [HookMatcher(matcher="Bash", hooks=[add_context])],
        "SubagentStart": [HookMatcher(matcher="general-purpose", hooks=[record])],
        "SubagentStop": [HookMatcher(hooks=[record])],
    })
    messages = await collect("delegate", options)

    by_event = {e["hook_event_name"]: e for e in events}
    assert set(by_event) == {"PreToolUse", "SubagentStart", "SubagentStop"}
    agent_id = by_event["SubagentStart"]["agent_id"]
    assert agent_id and by_event["SubagentStart"]["agent_type"] == "general-purpose"
    assert by_event["PreToolUse"]["agent_id"] == agent_id
    assert by_event["PreToolUse"]["agent_type"] == "general-purpose"
    assert by_event["SubagentStop"]["agent_id"] == agent_id
    assert by_event["SubagentStop"]["last_assistant_message"] == "child done"
    assert isinstance(messages[-1], catui.ResultMessage) and messages[-1].result == "parent done"


async def test_prompt_and_stop_hooks_add_context_and_send_the_agent_back(backend: Backend, project: Path) -> None:
    stops: list[bool] = []

    async def on_prompt(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        assert input_data["prompt"] == "start"
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "PROMPT-CONTEXT"}}

    async def on_stop(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        stops.append(input_data["stop_hook_active"])
        if input_data["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "CHECK-AGAIN first"}

    options = backend.options([
        {"match": {"last_user_contains": "CHECK-AGAIN"}, "content": [{"type": "text", "text": "checked twice"}]},
        {"match": {"last_user_contains": "PROMPT-CONTEXT"}, "content": [{"type": "text", "text": "first answer"}]},
    ], cwd=project, hooks={"UserPromptSubmit": [HookMatcher(hooks=[on_prompt])],
                           "Stop": [HookMatcher(hooks=[on_stop])]})
    messages = await collect("start", options)

    assert stops == [False, True]
    assert [texts(m) for m in messages if isinstance(m, catui.AssistantMessage)] == ["first answer", "checked twice"]


async def test_a_failing_hook_is_reported_and_the_call_goes_on(backend: Backend, project: Path) -> None:
    async def broken(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raise RuntimeError("hook bug")

    async def wrong_answer(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        return "allow"

    options = backend.options([
        {"match": {"last_is_tool_result": False}, "content": [bash("ls", "toolu_ls")]},
        {"match": {"last_user_contains": "keep.txt"}, "content": [{"type": "text", "text": "listed"}]},
    ], cwd=project, permission_mode="bypassPermissions", include_hook_events=True,  # notices are hook events
        hooks={"PreToolUse": [HookMatcher(hooks=[broken, wrong_answer])]})
    messages = await collect("list", options)

    notices = [m.data for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "hook_response"
               and "message" in m.data]  # the notices, not the runs' own responses
    joined = " | ".join(n["message"] for n in notices)
    runs = [m.data for m in messages if isinstance(m, catui.HookEventMessage) and "outcome" in m.data
            and "message" not in m.data]
    assert [r["outcome"] for r in runs] == ["error", "error"] and "hook bug" in runs[0]["stderr"]
    assert "raised RuntimeError: hook bug" in joined and "returned str" in joined
    assert isinstance(messages[-1], catui.ResultMessage) and messages[-1].result == "listed"


async def test_a_slow_hook_times_out_and_an_async_answer_decides_nothing(backend: Backend, project: Path) -> None:
    async def stuck(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"decision": "block"}

    async def later(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"async_": True, "decision": "block", "reason": "ignored"}

    options = backend.options([
        {"match": {"last_is_tool_result": False}, "content": [bash("ls", "toolu_ls")]},
        {"match": {"last_user_contains": "keep.txt"}, "content": [{"type": "text", "text": "listed"}]},
    ], cwd=project, permission_mode="bypassPermissions", include_hook_events=True,  # notices are hook events
        hooks={"PreToolUse": [HookMatcher(hooks=[stuck], timeout=0.2), HookMatcher(hooks=[later])]})
    messages = await collect("list", options)

    notices = [m.data["message"] for m in messages if isinstance(m, catui.SystemMessage)
               and m.subtype == "hook_response" and "message" in m.data]
    assert any("did not answer within 0.2s" in n for n in notices)
    assert "keep.txt" in tool_result_texts(messages)["toolu_ls"]


async def test_claude_agent_sdks_own_hook_matcher_objects_work(backend: Backend, project: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    calls: list[str] = []

    async def note(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        calls.append(input_data["tool_name"])
        return {"continue_": False, "stopReason": "STOPPED-BY-HOOK"}

    options = backend.options([
        {"match": {"last_is_tool_result": False}, "content": [bash("ls", "toolu_ls")]},
        {"content": [{"type": "text", "text": "should not be asked"}]},
    ], cwd=project, permission_mode="bypassPermissions",
        hooks={"PostToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[note])]})
    messages = await collect("list", options)

    assert calls == ["Bash"]
    assert not any(isinstance(m, catui.AssistantMessage) and texts(m) == "should not be asked" for m in messages)


@pytest.mark.parametrize(("hooks", "message"), [
    ({"PreToolUse": "check"}, "must be a list of HookMatcher"),
    ({"BeforeTool": [HookMatcher(hooks=[])]}, "'BeforeTool' is not a hook event"),
    ({"PreToolUse": [HookMatcher(matcher="Bash(", hooks=[print])]}, "not a valid regular expression"),
    ({"PreToolUse": [HookMatcher(hooks=["check"])]}, "is str, not a function"),
    ({"PreToolUse": [HookMatcher(hooks=[print], timeout=0)]}, "positive number of seconds"),
    ("PreToolUse", "must be a dict like"),
    ({"PreToolUse": [{"hooks": [print], "on_failure": "block"}]}, "on_failure='block' is not supported"),
])
async def test_a_malformed_hooks_option_is_a_configuration_error(hooks: Any, message: str, tmp_path: Path) -> None:
    options = catui.CatuiOptions(model="scripted:unused.yaml", cwd=tmp_path, hooks=hooks)
    with pytest.raises(catui.ConfigurationError, match=r"CatuiOptions\.hooks") as raised:
        await collect("hi", options)
    assert message in str(raised.value)
