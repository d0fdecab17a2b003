"""The official claude-agent-sdk drives the real ``catui`` CLI (``cli_path``) on the loopback Anthropic server.

Each test runs claude-agent-sdk's own ``query()`` or ``ClaudeSDKClient``
unchanged; catui is started by the SDK's subprocess transport with Claude
Code's flags and speaks the control protocol over stdin/stdout. The tests
check what the SDK yielded and what the loopback server received.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.loopback import started_servers  # noqa: E402

GUARD_S = 60  # a broken protocol stops the test here instead of hanging the suite (not a timing assertion)
CATUI = str(Path(sys.executable).with_name("catui"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI inherits the environment: a fresh HOME and CATUI_HOME, no inherited model or settings."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("CATUI_MAX_RETRIES", "0")
    for name in ("CATUI_MODEL", "ANTHROPIC_MODEL", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)


def options_for(server: AnthropicTestServer, tmp_path: Path, **fields: Any) -> ClaudeAgentOptions:
    """claude-agent-sdk options that run this checkout's ``catui`` against ``server`` in a fresh folder."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=CATUI, cwd=str(work), model="claude-sonnet-4-6", env=server.env(),
                              **fields)


async def run_query(prompt: Any, options: ClaudeAgentOptions) -> list[Any]:
    async def gather() -> list[Any]:
        return [message async for message in query(prompt=prompt, options=options)]

    return await asyncio.wait_for(gather(), GUARD_S)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for message in body["messages"] if isinstance(message.get("content"), list)
            for block in message["content"] if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def texts(messages: list[Any]) -> str:
    return "".join(block.text for m in messages if isinstance(m, AssistantMessage)
                   for block in m.content if isinstance(block, TextBlock))


ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    """``loopback(script)`` starts a Messages API server on 127.0.0.1; all stop after the test."""
    yield from started_servers(AnthropicTestServer)


async def test_query_runs_catui_and_yields_the_sdk_messages(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "Hello from catui"}]}]})
    messages = await run_query("Say hello", options_for(server, tmp_path))

    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["model"] == "claude-sonnet-4-6"
    assert texts(messages) == "Hello from catui"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error and result.result == "Hello from catui"
    (body,) = server.bodies()
    # claude-agent-sdk's default system_prompt=None passes --system-prompt "": no system text is sent
    assert "system" not in body
    assert body["model"] == "claude-sonnet-4-6"
    assert "Say hello" in json.dumps(body["messages"][-1])


async def test_an_in_process_sdk_mcp_tool_is_called_through_the_control_protocol(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "mcp__calc__add", "input": {"a": 2, "b": 40}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "It is 42."}]},
    ]})
    options = options_for(server, tmp_path, mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
                          allowed_tools=["mcp__calc__add"])
    messages = await run_query("Add 2 and 40", options)

    assert calls == [{"a": 2, "b": 40}]
    first, second = server.bodies()
    assert "mcp__calc__add" in [t["name"] for t in first["tools"]]
    (answer,) = tool_results(second)
    assert result_text(answer) == "sum=42" and not answer.get("is_error")
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "It is 42."
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]


async def test_can_use_tool_rewrites_one_call_and_denies_another(loopback: ServerFactory,
                                                                 tmp_path: Path) -> None:
    asked: list[tuple[str, dict[str, Any], str | None]] = []
    suggested: dict[str, Any] = {}

    async def can_use_tool(name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((name, tool_input, context.tool_use_id))
        suggested[name] = [s.to_dict() for s in context.suggestions]
        if name == "Bash":
            return PermissionResultAllow(updated_input={**tool_input, "command": "mkdir made-by-sdk"})
        return PermissionResultDeny(message="writing files is not allowed here")

    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "mkdir made-by-model"}},
            {"type": "tool_use", "id": "toolu_write", "name": "Write",
             "input": {"file_path": str(tmp_path / "work" / "x.txt"), "content": "x"}},
        ]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}]},
    ]})
    messages = await run_query("Run it", options_for(server, tmp_path, can_use_tool=can_use_tool))

    assert sorted(a[0] for a in asked) == ["Bash", "Write"]
    assert ("Bash", {"command": "mkdir made-by-model"}, "toolu_bash") in asked
    # Claude Code's suggestions, the same catui's own SDK offers: a local-settings rule for the command,
    # acceptEdits for an edit inside the working folder
    (bash_rule,) = suggested["Bash"]
    assert bash_rule["type"] == "addRules" and bash_rule["destination"] == "localSettings"
    assert bash_rule["rules"][0]["toolName"] == "Bash" and bash_rule["rules"][0]["ruleContent"].startswith("mkdir")
    assert suggested["Write"] == [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    results = {block["tool_use_id"]: block for block in tool_results(server.bodies()[-1])}
    assert not results["toolu_bash"].get("is_error")
    assert (tmp_path / "work" / "made-by-sdk").is_dir() and not (tmp_path / "work" / "made-by-model").exists()
    assert results["toolu_write"].get("is_error") is True
    assert "writing files is not allowed here" in result_text(results["toolu_write"])
    assert not (tmp_path / "work" / "x.txt").exists()
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"


async def test_a_pre_tool_use_hook_callback_blocks_bash(loopback: ServerFactory, tmp_path: Path) -> None:
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def no_rm(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((input_data, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "rm is blocked by the SDK hook"}}

    marker = tmp_path / "work" / "keep.txt"
    (tmp_path / "work").mkdir()
    marker.write_text("keep", encoding="utf-8")
    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_rm", "name": "Bash", "input": {"command": f"rm {marker}"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "ok"}]},
    ]})
    options = options_for(server, tmp_path, permission_mode="bypassPermissions",
                          hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_rm])]})
    await run_query("Clean up", options)

    ((hook_input, hook_tool_use_id),) = seen
    assert hook_input["hook_event_name"] == "PreToolUse" and hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": f"rm {marker}"} and hook_tool_use_id == "toolu_rm"
    assert "agent_id" not in hook_input
    (blocked,) = tool_results(server.bodies()[-1])
    assert blocked.get("is_error") is True and "rm is blocked by the SDK hook" in result_text(blocked)
    assert marker.exists()


async def test_a_sub_agents_messages_carry_parent_tool_use_id_and_its_hooks_name_it(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    hook_inputs: list[dict[str, Any]] = []

    async def record(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        hook_inputs.append(input_data)
        return {}

    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_child_ls", "name": "Bash", "input": {"command": "ls"}}]},
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child finished"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
         "input": {"description": "look around", "prompt": "CHILD-TASK: list the files",
                   "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ]})
    options = options_for(server, tmp_path, permission_mode="bypassPermissions",
                          hooks={"PreToolUse": [HookMatcher(matcher="Bash|Agent", hooks=[record])]})
    messages = await run_query("Delegate", options)

    child = [m for m in messages if getattr(m, "parent_tool_use_id", None) == "toolu_agent"]
    # As Claude Code: the child's prompt and tool calls reach the parent's stream, its text only on request
    assert not any(isinstance(m, AssistantMessage) and texts([m]) for m in child)
    assert any(isinstance(m, UserMessage) and "CHILD-TASK" in json.dumps(m.content, default=repr) for m in child)
    assert any(isinstance(m, AssistantMessage) and any(getattr(b, "id", None) == "toolu_child_ls" for b in m.content)
               for m in child)
    assert all(getattr(m, "parent_tool_use_id", None) is None for m in messages
               if isinstance(m, AssistantMessage) and texts([m]) == "parent done")
    by_tool = {h["tool_name"]: h for h in hook_inputs}
    assert "agent_id" not in by_tool["Agent"]
    assert by_tool["Bash"]["agent_type"] == "general-purpose" and by_tool["Bash"]["agent_id"]
    assert by_tool["Bash"]["tool_use_id"] == "toolu_child_ls"


async def test_forward_subagent_text_shows_the_childs_text(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK"}, "content": [{"type": "text", "text": "child finished"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
         "input": {"description": "look around", "prompt": "CHILD-TASK: say something",
                   "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ]})
    options = options_for(server, tmp_path, permission_mode="bypassPermissions", forward_subagent_text=True)
    messages = await run_query("Delegate", options)

    child = [m for m in messages if getattr(m, "parent_tool_use_id", None) == "toolu_agent"]
    assert any(isinstance(m, AssistantMessage) and texts([m]) == "child finished" for m in child)


async def test_the_client_interrupts_a_turn_then_switches_model_and_mode(loopback: ServerFactory,
                                                                         tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "slow"}, "delay_ms": 30000, "content": [{"type": "text", "text": "late"}]},
        {"match": {"last_user_contains": "again"}, "content": [{"type": "text", "text": "second answer"}]},
    ]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        info = await client.get_server_info()
        assert info is not None and "general-purpose" in [a["name"] for a in info["agents"]]
        await client.query("slow question")
        while not server.requests:  # the request is in flight: the server holds it for 30 s
            await asyncio.sleep(0.05)
        await client.interrupt()
        first = await asyncio.wait_for(collect_response(client), GUARD_S)
        assert isinstance(first[-1], ResultMessage) and first[-1].is_error
        assert first[-1].subtype == "error_during_execution"

        await client.set_model("claude-haiku-4-5")
        await client.set_permission_mode("acceptEdits")
        await client.query("again please")
        second = await asyncio.wait_for(collect_response(client), GUARD_S)
    assert texts(second) == "second answer"
    init = next(m for m in second if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["permissionMode"] == "acceptEdits" and init.data["model"] == "claude-haiku-4-5"
    assert server.bodies()[-1]["model"] == "claude-haiku-4-5"


async def collect_response(client: Any) -> list[Any]:
    return [message async for message in client.receive_response()]


async def test_an_interrupt_withdraws_a_pending_permission_question(loopback: ServerFactory, tmp_path: Path) -> None:
    asked = asyncio.Event()
    cancelled: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        asked.set()
        try:
            await asyncio.sleep(GUARD_S)  # nobody answers: the interrupt must not wait for this
        except asyncio.CancelledError:
            cancelled.append(name)  # catui withdrew the question (control_cancel_request)
            raise
        return PermissionResultAllow()

    server = loopback({"turns": [
        {"match": {"last_user_contains": "make"},
         "content": [{"type": "tool_use", "id": "toolu_mk", "name": "Bash", "input": {"command": "mkdir asked"}}]},
        {"match": {"last_user_contains": "after"}, "content": [{"type": "text", "text": "still serving"}]},
    ]})
    async with ClaudeSDKClient(options_for(server, tmp_path, can_use_tool=can_use_tool)) as client:
        await client.query("make a folder")
        await asyncio.wait_for(asked.wait(), GUARD_S)
        await client.interrupt()
        first = await asyncio.wait_for(collect_response(client), GUARD_S)
        await client.query("after that")
        second = await asyncio.wait_for(collect_response(client), GUARD_S)

    assert isinstance(first[-1], ResultMessage) and first[-1].subtype == "error_during_execution"
    assert cancelled == ["Bash"]
    assert not (tmp_path / "work" / "asked").exists()
    assert texts(second) == "still serving"


async def test_a_deny_with_interrupt_stops_the_run(loopback: ServerFactory, tmp_path: Path) -> None:
    async def can_use_tool(name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        return PermissionResultDeny(message="stop everything", interrupt=True)

    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_mk", "name": "Bash", "input": {"command": "mkdir nope"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "went on"}]},
    ]})
    with pytest.raises(claude_agent_sdk.ClaudeSDKError):  # the SDK raises for the run's error result
        await run_query("make it", options_for(server, tmp_path, can_use_tool=can_use_tool))
    assert len(server.bodies()) == 1  # no request after the denied call: the run stopped there
    assert not (tmp_path / "work" / "nope").exists()


async def test_permission_updates_of_an_approval_apply_to_later_calls(loopback: ServerFactory, tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []
    stderr: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        asked.append(tool_input)
        rule = claude_agent_sdk.types.PermissionRuleValue(tool_name="Bash", rule_content="mkdir:*")
        return PermissionResultAllow(updated_permissions=[
            claude_agent_sdk.PermissionUpdate(type="addRules", rules=[rule], behavior="allow",
                                              destination="projectSettings")])

    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "mkdir one"}}]},
        {"match": {"last_is_tool_result": True},  # used up first, so the text turn answers the second result
         "content": [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "mkdir two"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "both made"}]},
    ]})
    await run_query("make folders", options_for(server, tmp_path, can_use_tool=can_use_tool,
                                                stderr=stderr.append))

    assert asked == [{"command": "mkdir one"}]  # the rule added with the first approval allowed the second
    assert (tmp_path / "work" / "one").is_dir() and (tmp_path / "work" / "two").is_dir()
    assert any("does not save it to projectSettings" in line for line in stderr)


async def test_a_background_agent_reports_in_a_turn_of_its_own_before_the_run_ends(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    started: list[str] = []

    async def record(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        started.append(input_data["agent_type"])
        return {}

    server = loopback({"turns": [
        {"match": {"first_user_contains": "BG-JOB"}, "content": [{"type": "text", "text": "bg result"}]},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "bg reported"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
         "input": {"description": "background job", "prompt": "BG-JOB: report", "subagent_type": "general-purpose",
                   "run_in_background": True}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "started it"}]},
    ]})
    options = options_for(server, tmp_path, hooks={"SubagentStart": [HookMatcher(hooks=[record])]})
    messages = await run_query("start a background job", options)

    results = [m.result for m in messages if isinstance(m, ResultMessage)]
    assert results == ["started it", "bg reported"]
    kinds = [type(m).__name__ for m in messages]
    assert "TaskStartedMessage" in kinds and "TaskNotificationMessage" in kinds
    assert started == ["general-purpose"]


async def test_agents_sent_in_initialize_can_be_called(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"system_contains": "REVIEWER-PROMPT"}, "content": [{"type": "text", "text": "looks fine"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_review", "name": "Agent",
         "input": {"description": "review", "prompt": "review the change", "subagent_type": "reviewer"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "review done"}]},
    ]})
    reviewer = claude_agent_sdk.AgentDefinition(description="Reviews changes.", prompt="You are REVIEWER-PROMPT.",
                                                tools=["Read", "Grep"], model="inherit")
    messages = await run_query("get a review", options_for(server, tmp_path, agents={"reviewer": reviewer}))

    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "reviewer" in init.data["agents"]
    child = next(b for b in server.bodies() if "REVIEWER-PROMPT" in json.dumps(b.get("system", "")))
    assert sorted(t["name"] for t in child["tools"]) == ["Grep", "Read"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "review done"


async def test_a_streamed_prompt_of_two_messages_gets_two_turns(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "FIRST"}, "content": [{"type": "text", "text": "answer one"}]},
        {"match": {"last_user_contains": "SECOND"}, "content": [{"type": "text", "text": "answer two"}]},
    ]})

    async def prompts() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "FIRST question"}, "parent_tool_use_id": None,
               "session_id": ""}
        yield {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "SECOND one"}]},
               "parent_tool_use_id": None, "session_id": ""}

    messages = await run_query(prompts(), options_for(server, tmp_path))
    assert [m.result for m in messages if isinstance(m, ResultMessage)] == ["answer one", "answer two"]
    last = server.bodies()[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert [b.get("text") for b in last[-1]["content"]] == ["SECOND one"]  # blocks sent as given, no reminder


async def test_the_client_stops_a_background_agent_by_task_id(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"first_user_contains": "SLOW-JOB"}, "delay_ms": 30000,
         "content": [{"type": "text", "text": "too late"}]},
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "noted"}]},
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
         "input": {"description": "slow job", "prompt": "SLOW-JOB: wait", "subagent_type": "general-purpose",
                   "run_in_background": True}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "launched"}]},
    ]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        await client.query("start the slow job")
        first = await asyncio.wait_for(collect_response(client), GUARD_S)
        (started,) = [m for m in first if isinstance(m, claude_agent_sdk.TaskStartedMessage)]
        await client.stop_task(started.task_id)
        after = await asyncio.wait_for(collect_response(client), GUARD_S)

    (notice,) = [m for m in after if isinstance(m, claude_agent_sdk.TaskNotificationMessage)]
    assert notice.task_id == started.task_id and notice.status == "stopped"
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "noted"


async def test_output_format_gives_the_result_a_validated_structured_output(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
              "required": ["city", "population"]}
    server = loopback({"turns": [
        # the first call does not match the schema: an error result the model repairs
        {"content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"city": "Lyon"}}]},
        {"content": [{"type": "tool_use", "name": "StructuredOutput",
                      "input": {"city": "Lyon", "population": 522250}}]},
        {"content": [{"type": "text", "text": "done"}]},
    ]})
    messages = await run_query("Biggest city on the Rhone?", options_for(
        server, tmp_path, output_format={"type": "json_schema", "schema": schema}))

    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert result.structured_output == {"city": "Lyon", "population": 522250}
    first, second, _ = server.bodies()
    tool_names = [t["name"] for t in first["tools"]]
    assert "StructuredOutput" in tool_names
    assert next(t for t in first["tools"] if t["name"] == "StructuredOutput")["input_schema"]["required"] == [
        "city", "population"]
    (repair,) = tool_results(second)
    assert repair.get("is_error") and "population" in result_text(repair)
