"""CatuiOptions → RunOptions: defaults that keep a library call hermetic, and clear errors for bad options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catui.agents.definition import AgentDefinition
from catui.errors import CatuiError, ConfigurationError
from catui.permissions.context import PermissionRequest
from catui.sdk.options import CatuiOptions, decision_from_result, run_options_from
from catui.sdk.tools import create_sdk_mcp_server, tool
from catui.sdk.types import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from catui.tools.base import Tool, ToolContext


@tool("ping", "Ping", {})
async def ping(args: dict[str, Any]) -> str:
    return "pong"


def test_defaults_follow_claude_agent_sdk_and_map_every_field(tmp_path: Path) -> None:
    agent = AgentDefinition(description="Reviews", prompt="Review.", disallowedTools=["Write"])
    options = CatuiOptions(
        agents={"reviewer": agent},
        model="haiku",
        fallback_model="sonnet",
        max_turns=3,
        permission_mode="acceptEdits",
        allowed_tools=["Read"],
        disallowed_tools=["WebFetch"],
        system_prompt={"type": "preset", "preset": "claude_code", "append": "Be brief."},
        cwd=tmp_path,
        add_dirs=[tmp_path],
        env={"FOO": "1"},
        tools=[ping, create_sdk_mcp_server("util", tools=[ping])],
        include_partial_messages=True,
        write_transcript=False,
    )
    run = run_options_from(options)
    # claude-agent-sdk: setting_sources=None reads every source, as the CLI does ([] reads none).
    assert run.setting_sources == ("user", "project", "local")
    assert run_options_from(CatuiOptions(setting_sources=[])).setting_sources == ()
    # system_prompt=None is the minimal prompt; the preset keeps catui's own.
    assert run_options_from(CatuiOptions()).system_prompt == ""
    # Only in-process tools given: every built-in stays (WebFetch is denied by disallowed_tools, nothing else).
    assert run.disallowed_tools == ["WebFetch"]
    assert run.cwd == tmp_path and run.model == "haiku" and run.fallback_model == "sonnet"
    assert run.max_turns == 3 and run.permission_mode == "acceptEdits"
    assert run.allowed_tools == ["Read"] and run.disallowed_tools == ["WebFetch"]
    assert run.system_prompt is None and run.append_system_prompt == "Be brief."
    assert run.sdk_agents == {"reviewer": agent} and agent.disallowed_tools == ["Write"]
    assert [t.name for t in run.extra_tools] == ["ping", "mcp__util__ping"]
    assert run.env == {"FOO": "1"} and run.add_dirs == [str(tmp_path)]
    assert run.include_partial_messages and not run.write_transcript and not run.interactive
    assert run.can_use_tool is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (CatuiOptions(permission_mode="yolo"), "unknown mode 'yolo'"),
        (CatuiOptions(max_turns=0), "max_turns must be a positive integer"),
        (CatuiOptions(setting_sources=["user", "global"]), "unknown source 'global'"),
        (CatuiOptions(cwd="/definitely/not/here"), "is not a directory"),
        (CatuiOptions(system_prompt={"type": "file"}), "system_prompt must be"),
        (CatuiOptions(tools={"type": "preset", "preset": "minimal"}), "the only preset is"),
        (CatuiOptions(tools=[42]), "neither a built-in tool's name nor a tool"),
        (CatuiOptions(plugins=[{"type": "remote", "url": "x"}]), r"plugins\[0\].*is not supported"),
        (CatuiOptions(plugins=[{"type": "local"}]), r"plugins\[0\] needs a \"path\""),
        (CatuiOptions(output_format={"type": "json"}), "output_format must be"),
        (CatuiOptions(system_prompt={"type": "file", "path": "/nope/prompt.md"}), "cannot read the prompt file"),
        (CatuiOptions(tools=[ping, ping]), "two tools are named 'ping'"),
        (CatuiOptions(mcp_servers={"x": 42}), r"mcp_servers\['x'\]: give an in-process server"),
        (CatuiOptions(agents={"": {"description": "d", "prompt": "p"}}), "non-empty strings"),
    ],
)
def test_bad_options_name_the_problem(options: CatuiOptions, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        run_options_from(options)


async def test_the_permission_bridge_passes_the_calling_agent(tmp_path: Path) -> None:
    seen: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        seen.append((name, data, context))
        return PermissionResultDeny(message="not today")

    run = run_options_from(CatuiOptions(can_use_tool=can_use_tool, cwd=tmp_path))
    assert run.can_use_tool is not None
    child = ToolContext(cwd=tmp_path, project_root=tmp_path, agent_id="a42", agent_type="reviewer")
    decision = await run.can_use_tool(ping, {"x": 1}, PermissionRequest("ping", file_path=tmp_path / "f"), child)
    assert (decision.behavior, decision.reason) == ("deny", "not today")
    name, data, context = seen[0]
    assert (name, data, context.agent_id, context.agent_type) == ("ping", {"x": 1}, "a42", "reviewer")
    # The "don't ask again" choice Claude Code offers: an allow rule for the tool, kept in local settings.
    assert [u.to_dict() for u in context.suggestions] == [
        {"type": "addRules", "destination": "localSettings", "behavior": "allow", "rules": [{"toolName": "ping"}]}
    ]
    assert context.blocked_path == str(tmp_path / "f")

    main = ToolContext(cwd=tmp_path, project_root=tmp_path)
    await run.can_use_tool(ping, {}, PermissionRequest("ping"), main)
    assert (seen[1][2].agent_id, seen[1][2].agent_type) == (None, "main")


def test_deny_with_interrupt_aborts_and_bad_answers_are_errors(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    aborted: list[bool] = []
    decision = decision_from_result("Bash", {}, PermissionResultDeny(interrupt=True), ctx, lambda: aborted.append(True))
    assert decision.behavior == "deny" and "Bash" in decision.reason
    assert ctx.abort.is_set() and aborted == [True]
    allow = decision_from_result("Bash", {"a": 1}, PermissionResultAllow(updated_input={"a": 1}), ctx, None)
    assert allow.behavior == "allow" and allow.updated_input is None  # the same input is no rewrite
    rewrite = decision_from_result("Bash", {"a": 1}, PermissionResultAllow(updated_input={"a": 2}), ctx, None)
    assert rewrite.behavior == "allow" and rewrite.updated_input == {"a": 2}
    with pytest.raises(CatuiError, match="updated_input of type list"):
        decision_from_result("Bash", {"a": 1}, PermissionResultAllow(updated_input=[1]), ctx, None)  # type: ignore[arg-type]
    with pytest.raises(CatuiError, match=r"return catui\.PermissionResultAllow"):
        decision_from_result("Bash", {}, True, ctx, None)


async def test_a_raising_callback_becomes_a_catui_error(tmp_path: Path) -> None:
    async def broken(name: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        raise ValueError("oops")

    run = run_options_from(CatuiOptions(can_use_tool=broken, cwd=tmp_path))
    assert run.can_use_tool is not None
    tool_obj: Tool = ping
    with pytest.raises(CatuiError, match="can_use_tool raised ValueError: oops") as caught:
        await run.can_use_tool(tool_obj, {}, PermissionRequest("ping"), ToolContext(cwd=tmp_path, project_root=tmp_path))
    assert isinstance(caught.value.__cause__, ValueError)


def test_the_call_id_is_found_in_the_calling_agents_last_message(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from catui.sdk.permissions import _tool_use_id_of

    given = {"command": "make"}
    last = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "make"}},
        {"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": given},
        {"type": "tool_use", "id": "toolu_c", "name": "ping", "input": {}},
    ]}
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    ctx.session = SimpleNamespace(messages=[{"role": "user", "content": "x"}, last])
    assert _tool_use_id_of(ctx, "Bash", given) == "toolu_b"  # the very dict, though another call is equal
    assert _tool_use_id_of(ctx, "ping", {}) == "toolu_c"  # empty input: the one equal call
    assert _tool_use_id_of(ctx, "Bash", {"command": "make"}) is None  # two equal calls: unsure
    assert _tool_use_id_of(ToolContext(cwd=tmp_path, project_root=tmp_path), "Bash", given) is None
