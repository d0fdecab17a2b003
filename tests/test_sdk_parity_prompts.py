"""claude-agent-sdk parity, part one: streamed prompts, origin, structured output, errors, event loops.

Ported from claude-agent-sdk-python's e2e tests and examples (test_message_origin,
test_structured_output, test_error_results, streaming_mode.py, streaming_mode_trio.py): the
behaviour they check is the reference; the code and wording are catui's. Each scenario with a
``backend`` runs on the scripted provider and on the loopback Anthropic server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio

import catui
from tests.support.sdk_backend import (  # noqa: F401 - backend_fixture and isolated_sdk_home are fixtures
    GUARD_S,
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
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": None, **extra}


async def stream(*messages: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    for message in messages:
        await asyncio.sleep(0)  # a real stream yields to the loop between messages
        yield message


# -- prompts as async iterables --------------------------------------------------------------------


async def test_query_runs_each_streamed_message_as_a_prompt_in_turn(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "first question"}, "content": [{"type": "text", "text": "one"}]},
        {"match": {"last_user_contains": "second question"}, "content": [{"type": "text", "text": "two"}]},
    ]
    blocks = [{"type": "text", "text": "second question, as blocks"}]
    messages = await collect(
        stream(user("first question", origin={"kind": "human"}), user(blocks)),  # type: ignore[arg-type]
        backend.options(turns, cwd=project),
    )
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    inits = [m for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "init"]
    assert [r.result for r in results] == ["one", "two"] and len(inits) == 2
    # test_message_origin: a host's {"kind": "human"} stamp comes back on that turn's result; none otherwise.
    assert [r.origin for r in results] == [{"kind": "human"}, None]
    assert all(r.session_id == results[0].session_id for r in results)  # one conversation
    if backend.kind == "anthropic":
        bodies = [json.dumps(r.body) for r in backend.servers[0].requests]
        assert "first question" in bodies[1] and "second question, as blocks" in bodies[1]


async def test_the_client_takes_an_async_iterable_and_keeps_the_conversation(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "hello"}, "content": [{"type": "text", "text": "hi"}]},
        {"match": {"last_user_contains": "again"}, "content": [{"type": "text", "text": "hi again"}]},
    ]
    async with catui.CatuiClient(backend.options(turns, cwd=project)) as client:
        await client.query(stream(user("hello"), user("again")))
        first = [m async for m in client.receive_response()]
        second = [m async for m in client.receive_response()]
    assert (first[-1].result, second[-1].result) == ("hi", "hi again")
    assert texts(next(m for m in second if isinstance(m, catui.AssistantMessage))) == "hi again"


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"type": "assistant", "message": {"role": "assistant", "content": "x"}}, "only \"user\" messages"),
        ({"type": "user", "message": {"role": "user", "content": ""}}, "message.content must be a non-empty"),
        ("just text", "is a str; send dicts like"),
    ],
)
async def test_a_bad_streamed_message_is_a_clear_error(project: Path, tmp_path: Path, message: Any, problem: str) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: fine}]\n", encoding="utf-8")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[])
    with pytest.raises(catui.ConfigurationError, match=rf"streamed prompt message 1.*{problem}"):
        await asyncio.wait_for(collect(stream(user("ok"), message), options), GUARD_S)  # type: ignore[arg-type]


async def test_a_prompt_that_is_neither_text_nor_a_stream_is_refused(project: Path) -> None:
    with pytest.raises(catui.ConfigurationError, match="non-empty prompt string or an async iterable"):
        await collect(42, catui.CatuiOptions(cwd=project))  # type: ignore[arg-type]


# -- output_format → structured_output -------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"file_count": {"type": "number"}, "has_tests": {"type": "boolean"}},
    "required": ["file_count", "has_tests"],
}


async def test_structured_output_is_validated_and_returned(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"last_is_tool_result": False, "tools_include": ["StructuredOutput"]},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"last_user_contains": "app.py"},
         "content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"file_count": "one"}}]},
        {"match": {"last_user_contains": "does not match the schema"},
         "content": [{"type": "tool_use", "name": "StructuredOutput",
                      "input": {"file_count": 1, "has_tests": False}}]},
        {"match": {"last_user_contains": "Structured output recorded"}, "content": [{"type": "text", "text": "Done."}]},
    ]
    options = backend.options(turns, cwd=project, output_format={"type": "json_schema", "schema": SCHEMA})
    messages = await collect("Count the Python files", options)
    result = messages[-1]
    assert (result.subtype, result.is_error) == ("success", False)
    assert result.structured_output == {"file_count": 1, "has_tests": False}
    rejected = [
        b for m in messages if isinstance(m, catui.UserMessage) for b in m.content
        if isinstance(b, catui.ToolResultBlock) and b.is_error
    ]
    assert len(rejected) == 1 and "'one' is not of type 'number'" in str(rejected[0].content)
    if backend.kind == "anthropic":
        first = backend.servers[0].requests[0].body
        offered = {t["name"]: t for t in first["tools"]}
        assert offered["StructuredOutput"]["input_schema"] == SCHEMA
        assert "StructuredOutput" in json.dumps(first["system"])


async def test_a_run_that_never_hands_back_the_object_is_an_error(backend: Backend, project: Path) -> None:
    turns = [{"content": [{"type": "text", "text": "There is one file."}]}]
    options = backend.options(turns, cwd=project, output_format={"type": "json_schema", "schema": SCHEMA})
    result = (await collect("Count", options))[-1]
    assert result.is_error and result.structured_output is None
    assert "never called StructuredOutput" in (result.errors or [""])[0]


async def test_three_bad_objects_end_with_the_retries_subtype(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    bad = {"content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"file_count": 1}}], "repeat": True}
    script.write_text(json.dumps({"turns": [bad]}), encoding="utf-8")
    options = catui.CatuiOptions(
        model=f"scripted:{script}", cwd=project, setting_sources=[],
        output_format={"type": "json_schema", "schema": SCHEMA},
    )
    with pytest.raises(catui.ResultError) as raised:
        async for _ in catui.query("Count", options):
            pass
    assert raised.value.subtype == "error_max_structured_output_retries"
    assert "'has_tests' is a required property" in (raised.value.result or "")


@pytest.mark.parametrize(
    ("output_format", "problem"),
    [
        ({"type": "json_schema", "schema": {"type": "array"}}, "needs an object schema"),
        ({"type": "json_schema", "schema": {"type": "object", "properties": 3}}, "not valid JSON Schema"),
    ],
)
def test_bad_output_formats_are_named(output_format: dict[str, Any], problem: str) -> None:
    from catui.sdk.options import run_options_from

    with pytest.raises(catui.ConfigurationError, match=problem):
        run_options_from(catui.CatuiOptions(output_format=output_format))


# -- errors ----------------------------------------------------------------------------------------


async def test_an_api_failure_raises_result_error_after_the_result(backend: Backend, project: Path) -> None:
    """test_error_results: the error result is yielded, then ResultError (a ProcessError) carries it."""
    turns = [{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}, "repeat": True}]
    options = backend.options(turns, cwd=project, env={"CATUI_MAX_RETRIES": "0"})
    seen: list[Any] = []
    with pytest.raises(catui.ResultError) as raised:
        async for message in catui.query("Reply with: pong", options):
            seen.append(message)
    result, error = seen[-1], raised.value
    assert isinstance(result, catui.ResultMessage) and result.is_error
    assert isinstance(error, catui.ProcessError) and isinstance(error, catui.CatuiError) and error.exit_code == 1
    assert (error.subtype, error.terminal_reason, error.api_error_status) == ("success", "api_error", 529)
    assert (error.result, error.session_id, error.data["uuid"]) == (result.result, result.session_id, result.uuid)
    assert "error result: success" not in str(error) and "Overloaded" in str(error)


async def test_max_turns_raises_result_error_with_its_subtype(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    loop = {"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}], "repeat": True}
    script.write_text(json.dumps({"turns": [loop]}), encoding="utf-8")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, max_turns=2, setting_sources=[])
    with pytest.raises(catui.ResultError) as raised:
        async for _ in catui.query("go", options):
            pass
    assert (raised.value.subtype, raised.value.terminal_reason) == ("error_max_turns", "max_turns")


def test_claude_agent_sdk_error_names_are_catui_errors() -> None:
    assert catui.ClaudeSDKError is catui.CatuiError
    for name in ("CLIConnectionError", "CLINotFoundError", "ProcessError", "ResultError", "CLIJSONDecodeError",
                 "MessageParseError", "ConfigurationError", "ProviderError", "UnsupportedEventLoopError"):
        assert issubclass(getattr(catui, name), catui.CatuiError), name
    assert issubclass(catui.CLINotFoundError, catui.CLIConnectionError)
    assert issubclass(catui.ResultError, catui.ProcessError)
    assert str(catui.CLINotFoundError(cli_path="/x")).endswith(": /x")
    decoded = catui.CLIJSONDecodeError("{oops", ValueError("bad"))
    assert decoded.line == "{oops" and "not valid JSON" in str(decoded)


async def test_a_client_used_before_connect_raises_cli_connection_error(project: Path) -> None:
    client = catui.CatuiClient(catui.CatuiOptions(cwd=project))
    with pytest.raises(catui.CLIConnectionError, match="not connected"):
        await client.get_server_info()


# -- event loops -----------------------------------------------------------------------------------


def test_trio_is_refused_with_a_clear_catui_error(project: Path) -> None:
    """streaming_mode_trio.py runs claude-agent-sdk under trio; catui's agent needs asyncio and says so."""

    async def main() -> None:
        async for _ in catui.query("hi", catui.CatuiOptions(cwd=project)):
            pass

    with pytest.raises(catui.UnsupportedEventLoopError, match=r"runs under trio.*asyncio\.run"):
        trio.run(main)

    async def client_main() -> None:
        await catui.CatuiClient(catui.CatuiOptions(cwd=project)).connect()

    with pytest.raises(catui.CatuiError, match=r"CatuiClient\.connect"):
        trio.run(client_main)


def test_anyio_on_asyncio_runs_a_query(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: from anyio}]\n", encoding="utf-8")

    async def main() -> str | None:
        options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[])
        results = [m async for m in catui.query("hi", options) if isinstance(m, catui.ResultMessage)]
        return results[-1].result

    assert anyio.run(main, backend="asyncio") == "from anyio"


# -- AgentDefinition as claude-agent-sdk's dataclass is used -------------------------------------


def test_agent_definition_copies_and_dumps_like_the_sdks_dataclass() -> None:
    definition = catui.AgentDefinition(
        description="Reviews code", prompt="Review.", tools=["Read"], model="sonnet", effort="xhigh"
    )
    # dataclasses.replace(definition, model="haiku") in claude-agent-sdk:
    faster = definition.model_copy(update={"model": "haiku"})
    assert (faster.model, faster.prompt, faster.effort, definition.model) == ("haiku", "Review.", "xhigh", "sonnet")
    # dataclasses.asdict(definition):
    dumped = definition.model_dump()
    assert dumped["description"] == "Reviews code" and dumped["tools"] == ["Read"] and dumped["effort"] == "xhigh"
    assert catui.AgentDefinition(**{k: dumped[k] for k in ("description", "prompt", "tools")}).tools == ["Read"]
    with pytest.raises(TypeError):
        dataclasses.asdict(definition)  # type: ignore[call-overload]  # documented: use model_dump()


# -- message types: rate limits, server tools ------------------------------------------------------


async def test_a_request_refused_with_429_reports_a_rate_limit_event(backend: Backend, project: Path) -> None:
    turns = [{"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}, "repeat": True}]
    messages = await collect("hi", backend.options(turns, cwd=project, env={"CATUI_MAX_RETRIES": "0"}))
    event, result = messages[-2:]
    assert isinstance(event, catui.RateLimitEvent) and event.rate_limit_info.status == "rejected"
    assert event.session_id == result.session_id and result.api_error_status == 429


async def test_server_tool_blocks_have_their_own_classes(backend: Backend, project: Path) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "catui"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Example"}]}
    turns = [{"content": [search, found, {"type": "text", "text": "Found it."}]}]
    messages = await collect("search", backend.options(turns, cwd=project))
    answer = next(m for m in messages if isinstance(m, catui.AssistantMessage))
    use, result, text = answer.content
    assert isinstance(use, catui.ServerToolUseBlock) and (use.id, use.name, use.input) == (
        "srvtoolu_1", "web_search", {"query": "catui"})
    assert isinstance(result, catui.ServerToolResultBlock) and result.tool_use_id == "srvtoolu_1"
    assert result.content["type"] == "web_search_tool_result" and result.content["content"][0]["title"] == "Example"
    assert isinstance(text, catui.TextBlock)


# -- names -----------------------------------------------------------------------------------------

# claude-agent-sdk 0.2.189's public names that catui has (ClaudeSDKClient is CatuiClient, ClaudeAgentOptions is
# CatuiOptions, SdkMcpTool is SdkTool). Hooks as Python callables, session stores, tag/fork_session, Transport
# and a few CLI-only types are the rest (docs/sdk.md, "Compared with claude-agent-sdk").
SDK_NAMES = ["query", "__version__", "PermissionMode", "EffortLevel", "McpServerStatus", "McpServerConnectionStatus", "McpServerInfo", "McpStatusResponse", "McpToolAnnotations", "McpToolInfo", "UserMessage", "AssistantMessage", "SystemMessage", "SystemInitData", "SystemInitMcpServer", "SystemInitPlugin", "TaskStartedMessage", "TaskProgressMessage", "TaskUpdatedMessage", "TaskNotificationMessage", "TaskNotificationStatus", "TaskUpdatedStatus", "TERMINAL_TASK_STATUSES", "TaskUsage", "ResultMessage", "ModelUsage", "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType", "StreamEvent", "Message", "MessageOrigin", "MessageOriginKind", "TaskNotificationOriginSubkind", "TextBlock", "ThinkingBlock", "ThinkingConfig", "ThinkingConfigAdaptive", "ThinkingConfigEnabled", "ThinkingConfigDisabled", "ToolUseBlock", "ToolResultBlock", "ServerToolName", "ServerToolUseBlock", "ServerToolResultBlock", "ContentBlock", "ContextUsageCategory", "ContextUsageResponse", "CanUseTool", "CanUseToolShadowedWarning", "ToolPermissionContext", "PermissionResult", "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate", "HookEventMessage", "AgentDefinition", "SettingSource", "SdkPluginConfig", "list_sessions", "get_session_info", "get_session_messages", "list_subagents", "get_subagent_messages", "SDKSessionInfo", "SessionMessage", "rename_session", "delete_session", "tag_session", "fork_session", "ForkSessionResult", "SandboxSettings", "SandboxNetworkConfig", "create_sdk_mcp_server", "tool", "ClaudeSDKError", "CLIConnectionError", "CLINotFoundError", "ProcessError", "ResultError", "CLIJSONDecodeError", "CatuiClient", "CatuiOptions", "SdkTool",
             "BaseHookInput", "PreToolUseHookInput", "PostToolUseHookInput", "PostToolUseFailureHookInput", "PostToolUseFailureHookSpecificOutput", "UserPromptSubmitHookInput", "StopHookInput", "SubagentStopHookInput", "SubagentStartHookInput", "SubagentStartHookSpecificOutput", "PreToolUseHookSpecificOutput", "PostToolUseHookSpecificOutput", "UserPromptSubmitHookSpecificOutput", "SessionStartHookSpecificOutput"]


def test_claude_agent_sdks_names_resolve_from_catui() -> None:
    missing = [name for name in SDK_NAMES if not hasattr(catui, name)]
    assert missing == []
    assert set(SDK_NAMES) <= set(dir(catui))
    assert frozenset({"completed", "failed", "stopped", "killed"}) == catui.TERMINAL_TASK_STATUSES


async def test_a_block_prompt_keeps_the_agents_initial_prompt_before_it(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"first_user_contains": ["INITIAL-MARK", "BLOCK-MARK"]}, "content": [{"type": "text", "text": "both"}]},
        {"content": [{"type": "text", "text": "one missing"}]},
    ]}), encoding="utf-8")
    lead = catui.AgentDefinition(description="Leads.", prompt="You lead.", initialPrompt="INITIAL-MARK")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[], agents={"lead": lead},
                                 agent="lead")
    messages = await collect(stream(user([{"type": "text", "text": "BLOCK-MARK"}])), options)  # type: ignore[arg-type]
    assert messages[-1].result == "both"
