"""claude-agent-sdk parity, part two: options, permissions, and what a client reports about its session.

Ported from claude-agent-sdk-python's e2e tests and examples (test_forward_subagent_text,
test_stderr_callback, test_tool_permissions, test_agents_and_settings, tools_option.py,
setting_sources.py, system_prompt.py, plugin_example.py): their behaviour is the reference, the
code and wording are catui's. Scenarios with a ``backend`` run on the scripted provider and on the
loopback Anthropic server; MCP servers are real stdio subprocesses.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.mcp_wait import MCP_WAIT_ENV
from tests.support.sdk_backend import (  # noqa: F401 - backend_fixture and isolated_sdk_home are fixtures
    Backend,
    backend_fixture,
    collect,
    isolated_sdk_home,
    texts,
)

GREETER = catui.AgentDefinition(description="Greets.", prompt="You are the greeter agent.", tools=["Glob"])
TOOLS_SERVER = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


def greeter_turns() -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "Greet", "last_is_tool_result": False},
         "content": [{"type": "text", "text": "Asking the greeter."}, {"type": "tool_use", "name": "Agent", "input": {
             "description": "Greet", "prompt": "say hi", "subagent_type": "greeter"}}]},
        {"match": {"system_contains": "greeter agent", "last_is_tool_result": False},
         "content": [{"type": "thinking", "thinking": "A greeting.", "signature": "sig"},
                     {"type": "text", "text": "Let me look first."},
                     {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"system_contains": "greeter agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Hi there!"}]},
        {"match": {"first_user_contains": "Greet", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "DONE"}]},
    ]


# -- forward_subagent_text -------------------------------------------------------------------------


@pytest.mark.parametrize("forward", [False, True])
async def test_sub_agent_text_is_forwarded_only_when_asked(backend: Backend, project: Path, forward: bool) -> None:
    options = backend.options(greeter_turns(), cwd=project, agents={"greeter": GREETER}, forward_subagent_text=forward)
    messages = await collect("Greet the user", options)
    agent_use = next(
        b for m in messages if isinstance(m, catui.AssistantMessage) and m.parent_tool_use_id is None
        for b in m.content if isinstance(b, catui.ToolUseBlock) and b.name == "Agent"
    )
    attributed = [m for m in messages if isinstance(m, catui.AssistantMessage | catui.UserMessage)
                  and m.parent_tool_use_id is not None]
    assert {m.parent_tool_use_id for m in attributed} == {agent_use.id}
    kinds = {type(b).__name__ for m in attributed for b in m.content}
    if forward:
        assert {"TextBlock", "ThinkingBlock", "ToolUseBlock", "ToolResultBlock"} <= kinds
        assert any(texts(m) == "Hi there!" for m in attributed if isinstance(m, catui.AssistantMessage))
    else:  # claude-agent-sdk's default: the prompt, the calls and their results, no text or thinking
        assert kinds == {"TextBlock", "ToolUseBlock", "ToolResultBlock"}
        answers = {type(b).__name__ for m in attributed if isinstance(m, catui.AssistantMessage) for b in m.content}
        assert answers == {"ToolUseBlock"}
        assert any(isinstance(m, catui.UserMessage) and any(isinstance(b, catui.TextBlock) for b in m.content)
                   for m in attributed)
    assert messages[-1].result == "DONE"


# -- tools: names and the preset -------------------------------------------------------------------


async def test_tools_names_choose_the_built_ins_and_the_preset_keeps_them_all(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: ok}]\n    repeat: true\n", encoding="utf-8")

    async def tools_of(tools: Any) -> list[str]:
        options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[], tools=tools)
        messages = await collect("hi", options)
        return list(messages[0].data["tools"])

    assert await tools_of(["Read", "Glob"]) == ["Glob", "Read"]
    assert await tools_of([]) == []
    everything = await tools_of({"type": "preset", "preset": "claude_code"})
    assert {"Bash", "Read", "Agent", "Edit"} <= set(everything)
    assert await tools_of(None) == everything
    with pytest.raises(catui.ConfigurationError, match=r"CatuiOptions\.tools: 'Raed' is not a built-in tool; use names"):
        await tools_of(["Raed"])


# -- setting_sources and system_prompt defaults ----------------------------------------------------


async def test_default_system_prompt_is_minimal_and_the_preset_is_catuis(project: Path, tmp_path: Path) -> None:
    from tests.support.anthropic_server import AnthropicTestServer

    turns = {"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}
    with AnthropicTestServer(turns) as api:
        base = {"model": "claude-sonnet-4-6", "cwd": project, "env": api.env(), "setting_sources": []}
        await collect("hi", catui.CatuiOptions(**base))
        await collect("hi", catui.CatuiOptions(**base, system_prompt={"type": "preset", "preset": "claude_code",
                                                                     "append": "APPENDED-MARK"}))
        await collect("hi", catui.CatuiOptions(**base, system_prompt={"type": "custom", "prompt": "CUSTOM-MARK"}))
        prompt_file = tmp_path / "prompt.md"
        prompt_file.write_text("FILE-MARK", encoding="utf-8")
        await collect("hi", catui.CatuiOptions(**base, system_prompt={"type": "file", "path": str(prompt_file)}))
        minimal, preset, custom, from_file = (r.body.get("system") for r in api.requests)
    assert not minimal  # no system prompt at all: claude-agent-sdk's minimal default
    assert "APPENDED-MARK" in json.dumps(preset) and str(project.resolve()) in json.dumps(preset)
    assert [b["text"] for b in custom] == ["CUSTOM-MARK"] and [b["text"] for b in from_file] == ["FILE-MARK"]


async def test_settings_files_are_read_by_default_and_not_with_an_empty_list(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Glob"]}}))
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}], "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}), encoding="utf-8")

    async def glob_result(**fields: Any) -> str:
        messages = await collect("list", catui.CatuiOptions(model=f"scripted:{script}", cwd=project, **fields))
        block = next(b for m in messages if isinstance(m, catui.UserMessage) for b in m.content
                     if isinstance(b, catui.ToolResultBlock))
        return str(block.content)

    assert "app.py" not in await glob_result()  # the project's deny rule applies (every source is read)
    assert "app.py" in await glob_result(setting_sources=[])


# -- can_use_tool: rewriting the call, permission updates, suggestions -----------------------------


async def test_allow_with_updated_input_runs_the_rewritten_call(backend: Backend, project: Path) -> None:
    asked: list[tuple[str, dict[str, Any], catui.ToolPermissionContext]] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        asked.append((name, data, context))
        rewritten = {**data, "command": data["command"].replace("first.txt", "rewritten.txt")}
        rule = catui.PermissionUpdate(
            "addRules", rules=[catui.PermissionRuleValue("Bash", "touch:*")], behavior="allow", destination="session"
        )
        return catui.PermissionResultAllow(updated_input=rewritten, updated_permissions=[rule])

    turns = [  # turns without "repeat" are used once, in file order
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch first.txt"}}]},
        {"match": {"last_is_tool_result": True},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch second.txt"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "touched"}]},
    ]
    options = backend.options(turns, cwd=project, can_use_tool=can_use_tool)
    messages = await collect("Touch the files", options)
    assert (project / "rewritten.txt").exists() and not (project / "first.txt").exists()
    assert (project / "second.txt").exists()  # allowed by the rule the answer added: not asked again
    assert len(asked) == 1
    name, data, context = asked[0]
    assert (name, data["command"], context.agent_type) == ("Bash", "touch first.txt", "main")
    assert context.suggestions and context.suggestions[0].type == "addRules"
    assert messages[-1].result == "touched"


async def test_an_updated_input_that_does_not_fit_the_tool_is_an_error_result(project: Path, tmp_path: Path) -> None:
    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        return catui.PermissionResultAllow(updated_input={"command": 42})

    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch x.txt"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "saw the error"}]},
    ]}), encoding="utf-8")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[], can_use_tool=can_use_tool)
    messages = await collect("go", options)
    block = next(b for m in messages if isinstance(m, catui.UserMessage) for b in m.content
                 if isinstance(b, catui.ToolResultBlock))
    assert block.is_error and "InputValidationError" in str(block.content)
    assert not (project / "x.txt").exists() and messages[-1].result == "saw the error"


def test_permission_update_round_trips_claude_codes_wire_shape() -> None:
    wire = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}, {"toolName": "Read"}],
            "behavior": "allow", "destination": "localSettings"}
    update = catui.PermissionUpdate.from_dict(wire)
    assert update.rules == [catui.PermissionRuleValue("Bash", "npm test:*"), catui.PermissionRuleValue("Read")]
    assert update.to_dict() == wire
    assert catui.PermissionUpdate("setMode", mode="acceptEdits").to_dict() == {
        "type": "setMode", "mode": "acceptEdits", "destination": "session"}
    with pytest.raises(ValueError, match="needs behavior"):
        catui.PermissionUpdate("addRules", rules=[]).to_dict()
    with pytest.raises(ValueError, match="needs directories"):
        catui.PermissionUpdate("addDirectories").to_dict()


def test_suggestions_are_what_claude_code_offers(tmp_path: Path) -> None:
    from catui.permissions.context import PermissionRequest
    from catui.sdk.permissions import permission_suggestions

    inside = permission_suggestions(PermissionRequest("Edit", file_path=tmp_path / "a.py", is_edit=True), tmp_path)
    outside = permission_suggestions(PermissionRequest("Read", file_path=Path("/etc/hosts")), tmp_path)
    command = permission_suggestions(PermissionRequest("Bash", subject="npm test --watch"), tmp_path)
    assert [u.to_dict() for u in inside] == [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    assert [u.to_dict() for u in outside] == [{"type": "addDirectories", "directories": ["/etc"],
                                               "destination": "session"}]
    assert command[0].rules == [catui.PermissionRuleValue("Bash", "npm test:*")]


# -- stderr, hook events, plugins ------------------------------------------------------------------


async def test_stderr_gets_nothing_on_a_clean_run_and_warnings_otherwise(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: ok}]\n    repeat: true\n", encoding="utf-8")
    lines: list[str] = []
    clean = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[], stderr=lines.append)
    await collect("What is 1+1?", clean)
    assert lines == []
    noisy = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[], stderr=lines.append,
                               env={"CATUI_MAX_TOOL_USE_CONCURRENCY": "many"})
    await collect("What is 1+1?", noisy)
    assert lines and all(line.startswith("warning: ") for line in lines)
    assert any("CATUI_MAX_TOOL_USE_CONCURRENCY" in line for line in lines)


async def test_hook_events_show_only_with_include_hook_events(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    hook = {"type": "command", "command": "echo '{\"systemMessage\": \"glob checked\"}'"}
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Glob", "hooks": [hook]}]}}))
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}], "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}), encoding="utf-8")

    async def hook_messages(include: bool) -> list[Any]:
        options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=["project"],
                                     include_hook_events=include)
        return [m for m in await collect("list", options) if isinstance(m, catui.HookEventMessage)]

    assert await hook_messages(False) == []
    shown = await hook_messages(True)
    # The run itself (started, then its response with the command's output), then the notice of its message.
    assert [(m.subtype, m.hook_event_name) for m in shown] == [
        ("hook_started", "PreToolUse"), ("hook_response", "PreToolUse"), ("hook_response", "PreToolUse")]
    started, finished, notice = (m.data for m in shown)
    assert started["hook_id"] == finished["hook_id"] and started["hook_name"] == hook["command"]
    assert finished["outcome"] == "success" and finished["exit_code"] == 0
    assert json.loads(finished["stdout"]) == {"systemMessage": "glob checked"}
    assert notice["message"] == "glob checked"


async def test_local_plugins_load_their_agents_and_appear_in_the_init_message(project: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "demo-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "demo", "version": "1.0.0"}))
    (plugin / "agents").mkdir()
    (plugin / "agents" / "helper.md").write_text("---\nname: helper\ndescription: Helps.\n---\nHelp.\n")
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: ok}]\n", encoding="utf-8")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[],
                                 plugins=[{"type": "local", "path": str(plugin)}])
    init = (await collect("hi", options))[0]
    assert init.data["plugins"] == [{"name": "demo", "path": str(plugin)}]
    assert "demo:helper" in init.data["agents"]
    assert init.data["output_style"] == "default" and init.data["slash_commands"] == ["compact"] and init.data["skills"] == []


# -- what the client reports; MCP reconnect and toggle ---------------------------------------------


def _mcp_project(project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"tools": {"command": sys.executable, "args": [str(TOOLS_SERVER)]}}}))
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.local.json").write_text(json.dumps(
        {"enableAllProjectMcpServers": True, "permissions": {"allow": ["mcp__tools"]}}))


async def test_server_info_mcp_status_and_context_usage(project: Path, tmp_path: Path) -> None:
    _mcp_project(project)
    skill = project / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello.\n---\nSay hello.\n")

    @catui.tool("ping", "Answers pong", {})
    async def ping(args: dict[str, Any]) -> str:
        return "pong"

    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [{"content": [{"type": "text", "text": "ok"}],
                                             "usage": {"input_tokens": 1200, "output_tokens": 30}}]}))
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=["project", "local"],
                                 mcp_servers={"local": catui.create_sdk_mcp_server("local", tools=[ping])},
                                 env={"PYTHONPATH": os.pathsep.join(sys.path), **MCP_WAIT_ENV})
    async with catui.CatuiClient(options) as client:
        before = await client.get_context_usage()
        await client.query("hi")
        received = [m async for m in client.receive_response()]
        init = received[0]
        info = await client.get_server_info()
        status = await client.get_mcp_status()
        usage = await client.get_context_usage()
    assert init.data["slash_commands"] == ["greet", "compact"] and init.data["skills"] == ["greet"]
    assert [c["name"] for c in info["commands"]] == ["greet", "compact"] and info["output_style"] == "default"
    assert info["commands"][-1]["builtin"] is True  # catui's own, listed as the init message lists it
    servers = {s["name"]: s for s in status["mcpServers"]}
    assert servers["tools"]["status"] == "connected" and "echo" in [t["name"] for t in servers["tools"]["tools"]]
    assert servers["local"] == {"name": "local", "status": "connected",
                                "tools": [{"name": "ping", "description": "Answers pong"}]}
    assert before["totalTokens"] == 0
    assert usage["totalTokens"] == 1230 and usage["maxTokens"] > 1230 and 0 < usage["percentage"] < 100


async def test_toggle_and_reconnect_an_mcp_server(project: Path, tmp_path: Path) -> None:
    _mcp_project(project)
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"tools_include": ["mcp__tools__pid"], "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "mcp__tools__pid", "input": {}}], "repeat": True},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "got pid"}], "repeat": True},
        {"match": {"tools_exclude": ["mcp__tools__pid"]}, "content": [{"type": "text", "text": "no tool"}],
         "repeat": True},
    ]}))
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=["project", "local"],
                                 env={"PYTHONPATH": os.pathsep.join(sys.path), **MCP_WAIT_ENV})

    async def ask(client: catui.CatuiClient) -> tuple[str | None, str | None]:
        await client.query("pid?")
        messages = [m async for m in client.receive_response()]
        pid = next((str(b.content) for m in messages if isinstance(m, catui.UserMessage) for b in m.content
                    if isinstance(b, catui.ToolResultBlock)), None)
        return messages[-1].result, pid

    async with catui.CatuiClient(options) as client:
        first, first_pid = await ask(client)
        await client.toggle_mcp_server("tools", False)
        off_status = (await client.get_mcp_status())["mcpServers"][0]["status"]
        off, _ = await ask(client)
        await client.toggle_mcp_server("tools", True)
        on, on_pid = await ask(client)
        await client.reconnect_mcp_server("tools")
        again, again_pid = await ask(client)
        with pytest.raises(catui.ConfigurationError, match=r"no MCP server named 'nope'.*configured: tools"):
            await client.reconnect_mcp_server("nope")
    assert (first, off_status, off, on, again) == ("got pid", "disabled", "no tool", "got pid", "got pid")
    assert len({first_pid, on_pid, again_pid}) == 3  # each connection is a new server process


def test_a_shadowed_can_use_tool_is_warned_about(project: Path) -> None:
    from catui.sdk.options import run_options_from

    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        return catui.PermissionResultAllow()

    with pytest.warns(catui.CanUseToolShadowedWarning, match="approves every call of Read, Bash"):
        run_options_from(catui.CatuiOptions(cwd=project, can_use_tool=can_use_tool, allowed_tools=["Read", "Bash(*)"]))
    with pytest.warns(catui.CanUseToolShadowedWarning, match="bypassPermissions"):
        run_options_from(catui.CatuiOptions(cwd=project, can_use_tool=can_use_tool, permission_mode="bypassPermissions"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a narrow rule shadows nothing: no warning
        run_options_from(catui.CatuiOptions(cwd=project, can_use_tool=can_use_tool, allowed_tools=["Bash(ls:*)"]))


async def test_a_streamed_prompt_with_only_can_use_tool_gets_its_verdict(
    backend: Backend, project: Path, tmp_path: Path
) -> None:
    """test_tool_permissions: query() with an async-iterable prompt and can_use_tool as the only callback."""
    target = tmp_path / "outside" / "hello.txt"
    target.parent.mkdir()
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        asked.append(name)
        return catui.PermissionResultAllow()

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": f"Write hello to {target}"}}

    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(target), "content": "hello"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "written"}]},
    ]
    options = backend.options(turns, cwd=project, can_use_tool=can_use_tool, disallowed_tools=["Bash"], max_turns=3)
    messages = await collect(prompt(), options)  # type: ignore[arg-type]
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage) and not result.is_error and result.result == "written"
    assert asked == ["Write"] and target.read_text() == "hello"


async def test_an_external_mcp_server_given_in_options_is_used(project: Path, tmp_path: Path) -> None:
    # claude-agent-sdk's mcp_servers takes external servers' configs beside in-process ones.
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"turns": [
        {"match": {"tools_include": ["mcp__ext__add"], "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "mcp__ext__add", "input": {"a": 2, "b": 3}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "added"}]},
        {"content": [{"type": "text", "text": "no tool"}], "repeat": True},
    ]}))
    server = {"command": sys.executable, "args": [str(TOOLS_SERVER)],
              "env": {"PYTHONPATH": os.pathsep.join(sys.path)}}
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project, setting_sources=[],
                                 mcp_servers={"ext": server}, permission_mode="bypassPermissions", env=MCP_WAIT_ENV)
    async with catui.CatuiClient(options) as client:
        await client.query("add 2 and 3")
        received = [m async for m in client.receive_response()]
        status = await client.get_mcp_status()
    results = [b for m in received if isinstance(m, catui.UserMessage) and isinstance(m.content, list)
               for b in m.content if isinstance(b, catui.ToolResultBlock)]
    assert received[-1].result == "added"
    assert "5" in str(results[0].content) and not results[0].is_error
    assert [s["name"] for s in status["mcpServers"]] == ["ext"]
