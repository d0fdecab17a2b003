"""The SDK end to end: query() and CatuiClient on the scripted provider and on a loopback Anthropic server.

Each scenario runs twice (the ``backend`` fixture): once with ``scripted:<file>``
and once with the real Anthropic provider talking SSE to a Messages API server
on 127.0.0.1 that replays the same script.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

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
    (folder / "README.md").write_text("# demo\n", encoding="utf-8")
    return folder


def agent_call(prompt: str, subagent_type: str, description: str = "Do the task") -> dict[str, Any]:
    return {
        "type": "tool_use",
        "name": "Agent",
        "input": {"description": description, "prompt": prompt, "subagent_type": subagent_type},
    }


WORKER = catui.AgentDefinition(
    description="Does one small job.", prompt="You are the worker agent. Do the job.", tools=["Glob"]
)


# -- one prompt ------------------------------------------------------------------------------------


async def test_one_shot_query(backend: Backend, project: Path) -> None:
    options = backend.options(
        [{"match": {"first_user_contains": "Say hi"}, "content": [{"type": "text", "text": "Hi there."}]}],
        cwd=project,
    )
    messages = await collect("Say hi", options)
    assert [type(m).__name__ for m in messages] == ["SystemMessage", "AssistantMessage", "ResultMessage"]
    init, answer, result = messages
    assert init.subtype == "init" and init.data["cwd"] == str(project.resolve())
    assert texts(answer) == "Hi there." and answer.parent_tool_use_id is None
    assert (result.subtype, result.is_error, result.result, result.num_turns) == ("success", False, "Hi there.", 1)
    assert result.session_id == init.data["session_id"]
    assert result.usage["output_tokens"] > 0 and result.model_usage


async def test_foreground_subagent_messages_in_order_with_parent_tool_use_id(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"first_user_contains": "Find the code", "last_is_tool_result": False},
         "content": [{"type": "text", "text": "Delegating."}, agent_call("List the Python files", "worker")]},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "app.py is the only one."}]},
        {"match": {"first_user_contains": "Find the code", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The worker found app.py."}]},
    ]
    messages = await collect("Find the code", backend.options(turns, cwd=project, agents={"worker": WORKER}))
    kinds = [(type(m).__name__, getattr(m, "parent_tool_use_id", None) is not None) for m in messages]
    assert kinds == [
        ("SystemMessage", False),
        ("AssistantMessage", False),  # Delegating + Agent call
        ("TaskStartedMessage", False),
        ("UserMessage", True),  # the worker's prompt
        ("AssistantMessage", True),  # Glob
        ("TaskProgressMessage", False),
        ("UserMessage", True),  # Glob's result
        ("AssistantMessage", True),  # the worker's answer
        ("TaskProgressMessage", False),
        ("TaskNotificationMessage", False),
        ("TaskUpdatedMessage", False),  # its terminal status, as claude-agent-sdk's task_updated
        ("UserMessage", False),  # the Agent call's result
        ("AssistantMessage", False),
        ("ResultMessage", False),
    ]
    assert messages[10].status == "completed" and messages[10].task_id == messages[2].task_id
    agent_use = next(b for b in messages[1].content if isinstance(b, catui.ToolUseBlock))
    started, notification = messages[2], messages[9]
    assert (started.tool_use_id, started.task_type, started.description) == (agent_use.id, "local_agent", "Do the task")
    assert notification.task_id == started.task_id and notification.status == "completed"
    child_messages = [m for m in messages[3:9] if isinstance(m, catui.AssistantMessage | catui.UserMessage)]
    assert {m.parent_tool_use_id for m in child_messages} == {agent_use.id}
    assert "List the Python files" in texts(messages[3])
    agent_result = messages[11]
    assert agent_result.tool_use_result["agentType"] == "worker"
    assert agent_result.tool_use_result["status"] == "completed"
    assert isinstance(agent_result.content[0], catui.ToolResultBlock)
    assert messages[-1].result == "The worker found app.py."


# -- permissions -----------------------------------------------------------------------------------


SHELL = catui.AgentDefinition(description="Runs commands.", prompt="You are the shell agent.", tools=["Bash"])


def _shell_turns(command: str) -> list[dict[str, Any]]:
    return [
        {"match": {"first_user_contains": "Clean up", "last_is_tool_result": False},
         "content": [agent_call("Remove the cache", "shell")]},
        {"match": {"system_contains": "You are the shell agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]},
        {"match": {"system_contains": "You are the shell agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "I was not allowed to."}]},
        {"match": {"first_user_contains": "Clean up", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Nothing was removed."}]},
    ]


async def test_can_use_tool_refuses_a_subagents_call(backend: Backend, project: Path) -> None:
    (project / "cache").mkdir()
    asked: list[tuple[str, dict[str, Any], catui.ToolPermissionContext]] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        asked.append((name, data, context))
        return catui.PermissionResultDeny(message="Deleting is not allowed in this project.")

    options = backend.options(
        _shell_turns("rm -rf cache"), cwd=project, agents={"shell": SHELL}, can_use_tool=can_use_tool
    )
    messages = await collect("Clean up", options)
    assert (project / "cache").is_dir()
    assert len(asked) == 1
    name, data, context = asked[0]
    started = next(m for m in messages if isinstance(m, catui.TaskStartedMessage))
    assert (name, data["command"]) == ("Bash", "rm -rf cache")
    assert (context.agent_type, context.agent_id) == ("shell", started.task_id)
    # Claude Code's "don't ask again" choice for a command: an allow rule on its first word, in local settings.
    assert [u.to_dict() for u in context.suggestions] == [{
        "type": "addRules", "destination": "localSettings", "behavior": "allow",
        "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}],
    }]
    bash_use = next(
        b for m in messages if isinstance(m, catui.AssistantMessage) and m.parent_tool_use_id
        for b in m.content if isinstance(b, catui.ToolUseBlock)
    )
    assert context.tool_use_id == bash_use.id
    refusal = next(
        b for m in messages if isinstance(m, catui.UserMessage) and m.parent_tool_use_id
        for b in m.content if isinstance(b, catui.ToolResultBlock)
    )
    assert refusal.is_error and refusal.content == "Deleting is not allowed in this project."
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage) and not result.is_error
    assert result.result == "Nothing was removed."


async def test_deny_with_interrupt_stops_the_whole_run(backend: Backend, project: Path) -> None:
    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        return catui.PermissionResultDeny(message="Stop everything.", interrupt=True)

    options = backend.options(_shell_turns("rm -rf /tmp/x"), cwd=project, agents={"shell": SHELL},
                              can_use_tool=can_use_tool)
    messages = await collect("Clean up", options)
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage)
    assert (result.subtype, result.is_error) == ("error_during_execution", True)
    assert result.terminal_reason == "aborted_tools"  # stopped during the main agent's Agent call
    answers = [texts(m) for m in messages if isinstance(m, catui.AssistantMessage)]
    assert "Nothing was removed." not in answers and "I was not allowed to." not in answers


async def test_main_agent_calls_reach_can_use_tool_as_main(backend: Backend, project: Path) -> None:
    seen: list[catui.ToolPermissionContext] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        seen.append(context)
        return catui.PermissionResultAllow()

    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch made-by-main && echo allowed-run"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Ran it."}]},
    ]
    messages = await collect("Run echo", backend.options(turns, cwd=project, can_use_tool=can_use_tool))
    assert [(c.agent_id, c.agent_type) for c in seen] == [(None, "main")]
    bash_use = next(b for m in messages if isinstance(m, catui.AssistantMessage) for b in m.content
                    if isinstance(b, catui.ToolUseBlock))
    assert seen[0].tool_use_id == bash_use.id
    assert (project / "made-by-main").exists()
    tool_result = next(
        b for m in messages if isinstance(m, catui.UserMessage) for b in m.content if isinstance(b, catui.ToolResultBlock)
    )
    assert "allowed-run" in str(tool_result.content) and not tool_result.is_error


# -- in-process tools ------------------------------------------------------------------------------


async def test_custom_tool_used_by_a_subagent(backend: Backend, project: Path) -> None:
    calls: list[dict[str, Any]] = []

    @catui.tool("lookup_price", "Look up the price of a product.", {"product": str})
    async def lookup_price(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"{args['product']} costs 3 EUR"}]}

    pricer = catui.AgentDefinition(
        description="Knows prices.", prompt="You are the pricing agent.", tools=["lookup_price"]
    )
    turns = [
        {"match": {"first_user_contains": "price of tea", "last_is_tool_result": False},
         "content": [agent_call("Find the price of tea", "pricer")]},
        {"match": {"system_contains": "You are the pricing agent", "last_is_tool_result": False,
                   "tools_include": ["lookup_price"], "tools_exclude": ["Bash", "Agent"]},
         "content": [{"type": "tool_use", "name": "lookup_price", "input": {"product": "tea"}}]},
        {"match": {"system_contains": "You are the pricing agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Tea costs 3 EUR."}]},
        {"match": {"first_user_contains": "price of tea", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "3 EUR."}]},
    ]
    options = backend.options(
        turns, cwd=project, agents={"pricer": pricer}, tools=[lookup_price], allowed_tools=["lookup_price"]
    )
    messages = await collect("What is the price of tea?", options)
    assert calls == [{"product": "tea"}]
    child_result = next(
        b for m in messages if isinstance(m, catui.UserMessage) and m.parent_tool_use_id
        for b in m.content if isinstance(b, catui.ToolResultBlock)
    )
    assert child_result.content == [{"type": "text", "text": "tea costs 3 EUR"}]
    assert messages[-1].result == "3 EUR."
    init = messages[0]
    assert "lookup_price" in init.data["tools"] and "pricer" in init.data["agents"]


async def test_custom_tool_needs_permission_like_a_builtin(backend: Backend, project: Path) -> None:
    calls: list[dict[str, Any]] = []

    @catui.tool("deploy", "Deploy the app.", {})
    async def deploy(args: dict[str, Any]) -> str:
        calls.append(args)
        return "deployed"

    turns = [
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "name": "deploy", "input": {}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Could not deploy."}]},
    ]
    messages = await collect("Deploy", backend.options(turns, cwd=project, tools=[deploy]))
    assert calls == []
    result = messages[-1]
    assert [d["tool_name"] for d in result.permission_denials] == ["deploy"]


# -- conversations and control ---------------------------------------------------------------------


async def test_conversation_keeps_context_and_switches_model_and_mode(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "first question"}, "content": [{"type": "text", "text": "first answer"}]},
        {"match": {"last_user_contains": "second question", "first_user_contains": "first question"},
         "content": [{"type": "text", "text": "second answer"}]},
        # Only reachable once the model id has changed (the loopback backend switches ids on one server).
        {"match": {"last_user_contains": "third question", "model_contains": "opus"},
         "content": [{"type": "text", "text": "other model"}]},
    ]
    other = [{"match": {"last_user_contains": "third question"}, "content": [{"type": "text", "text": "other model"}]}]
    async with catui.CatuiClient(backend.options(turns, cwd=project)) as client:
        answers: list[str] = []
        for prompt in ("first question", "second question"):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, catui.ResultMessage):
                    answers.append(message.result or "")
        assert answers == ["first answer", "second answer"]

        if backend.kind == "scripted":
            await client.set_model(backend.options(other).model)
        else:
            await client.set_model("claude-opus-4-6")
        await client.set_permission_mode("plan")
        await client.query("third question")
        received = [m async for m in client.receive_response()]
        init = received[0]
        assert init.data["permissionMode"] == "plan"
        assert init.data["model"] == ("scripted" if backend.kind == "scripted" else "claude-opus-4-6")
        assert received[-1].result == "other model"
        with pytest.raises(catui.ConfigurationError, match="unknown permission mode"):
            await client.set_permission_mode("yolo")


async def test_interrupt_mid_run_stops_the_subagent_and_the_main_agent(backend: Backend, project: Path) -> None:
    entered, never = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []

    @catui.tool("slow_step", "A step that takes a while.", {}, read_only=True)
    async def slow_step(args: dict[str, Any]) -> str:
        entered.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "step finished"

    worker = catui.AgentDefinition(description="Works slowly.", prompt="You are the slow agent.", tools=["slow_step"])
    turns = [
        {"match": {"first_user_contains": "Start the job", "last_is_tool_result": False},
         "content": [agent_call("Do the slow step", "slow")]},
        {"match": {"system_contains": "You are the slow agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "slow_step", "input": {}}]},
        {"match": {"system_contains": "You are the slow agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child finished"}]},
        {"match": {"first_user_contains": "Start the job", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "main finished"}]},
        {"match": {"last_user_contains": "Are you there"}, "content": [{"type": "text", "text": "Still here."}]},
    ]
    options = backend.options(turns, cwd=project, agents={"slow": worker}, tools=[slow_step])
    async with catui.CatuiClient(options) as client:
        await client.query("Start the job")
        received: list[Any] = []

        async def read() -> None:
            async for message in client.receive_response():
                received.append(message)

        reader = asyncio.create_task(read())
        await asyncio.wait_for(entered.wait(), GUARD_S)
        await client.interrupt()
        await asyncio.wait_for(reader, GUARD_S)
        assert cancelled == [True]
        result = received[-1]
        assert isinstance(result, catui.ResultMessage)
        assert (result.subtype, result.is_error) == ("error_during_execution", True)
        answers = [texts(m) for m in received if isinstance(m, catui.AssistantMessage)]
        assert "child finished" not in answers and "main finished" not in answers

        await client.query("Are you there?")
        after = [m async for m in client.receive_response()]
        assert after[-1].result == "Still here." and not after[-1].is_error


async def test_two_clients_in_one_process_keep_their_own_options(backend: Backend, tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir()
    second_dir.mkdir()

    def turns(marker: str) -> list[dict[str, Any]]:
        return [
            {"match": {"last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "pwd"}}]},
            {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": marker}]},
        ]

    alpha = catui.AgentDefinition(description="Alpha.", prompt="alpha")
    beta = catui.AgentDefinition(description="Beta.", prompt="beta")
    first = backend.options(turns("from first"), cwd=first_dir, agents={"alpha": alpha}, allowed_tools=["Bash"])
    second = backend.options(turns("from second"), cwd=second_dir, agents={"beta": beta}, allowed_tools=["Bash"],
                             permission_mode="acceptEdits")
    one, two = await asyncio.gather(collect("Where are you?", first), collect("Where are you?", second))

    for messages, folder, marker, agent, mode in (
        (one, first_dir, "from first", "alpha", "default"),
        (two, second_dir, "from second", "beta", "acceptEdits"),
    ):
        init = messages[0]
        assert init.data["cwd"] == str(folder.resolve())
        assert agent in init.data["agents"] and ({"alpha", "beta"} - {agent}).isdisjoint(init.data["agents"])
        assert init.data["permissionMode"] == mode
        pwd = next(
            b for m in messages if isinstance(m, catui.UserMessage) for b in m.content
            if isinstance(b, catui.ToolResultBlock)
        )
        assert str(folder.resolve()) in str(pwd.content)
        assert messages[-1].result == marker
    if backend.kind == "anthropic":
        # Each client's env named its own server: every request of a client reached that server only.
        for server, folder in zip(backend.servers, (first_dir, second_dir), strict=True):
            assert len(server.requests) == 2
            # The second request carries the pwd result of that client's folder.
            assert str(folder.resolve()) in json.dumps(server.requests[-1].body)


# -- errors and background work --------------------------------------------------------------------


async def test_errors_are_catui_errors(project: Path) -> None:
    with pytest.raises(catui.ConfigurationError, match="unknown model"):
        await collect("hi", catui.CatuiOptions(model="sonet", cwd=project))
    with pytest.raises(catui.ConfigurationError, match="cannot read script"):
        await collect("hi", catui.CatuiOptions(model=f"scripted:{project / 'missing.yaml'}", cwd=project))
    client = catui.CatuiClient(catui.CatuiOptions(cwd=project))
    with pytest.raises(catui.CatuiError, match="not connected"):
        await client.query("hi")


async def test_stop_task_and_background_tasks_report_clearly(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "ok"}]}]}), encoding="utf-8")
    async with catui.CatuiClient(catui.CatuiOptions(model=f"scripted:{script}", cwd=project)) as client:
        with pytest.raises(catui.ConfigurationError, match="no background task with id 'nope'"):
            await client.stop_task("nope")
        runtime = client._driver.require_app().subagent_runtime
        if hasattr(runtime, "background_all_foreground"):
            assert await client.background_tasks() == []
        else:
            with pytest.raises(catui.CatuiError, match="background agents are not available"):
                await client.background_tasks()


# -- hermetic by default ---------------------------------------------------------------------------


def _write_script(folder: Path, turns: list[dict[str, Any]], name: str) -> str:
    path = folder / name
    path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return f"scripted:{path}"


async def test_empty_setting_sources_means_no_settings_agents_or_memory_files(project: Path, tmp_path: Path) -> None:
    (project / "CLAUDE.md").write_text("MEMORY-MARKER: always answer in French.\n", encoding="utf-8")
    agents_dir = project / ".claude" / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "file-agent.md").write_text(
        "---\nname: file-agent\ndescription: From a file.\n---\nYou come from a file.\n", encoding="utf-8"
    )
    (project / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}', encoding="utf-8")
    turns: list[dict[str, Any]] = [
        {"match": {"first_user_contains": "MEMORY-MARKER"}, "content": [{"type": "text", "text": "saw memory"}]},
        {"content": [{"type": "text", "text": "no memory"}]},
    ]
    hermetic = await collect(
        "Hello", catui.CatuiOptions(model=_write_script(tmp_path, turns, "a.yaml"), cwd=project, setting_sources=[])
    )
    assert hermetic[-1].result == "no memory"
    assert "file-agent" not in hermetic[0].data["agents"]
    # claude-agent-sdk's default (None) reads every source, as the CLI does: memory and file agents included.
    default = await collect("Hello", catui.CatuiOptions(model=_write_script(tmp_path, turns, "d.yaml"), cwd=project))
    assert default[-1].result == "saw memory" and "file-agent" in default[0].data["agents"]

    with_project = catui.CatuiOptions(
        model=_write_script(tmp_path, turns, "b.yaml"), cwd=project, setting_sources=["project"]
    )
    loaded = await collect("Hello", with_project)
    assert loaded[-1].result == "saw memory"
    assert "file-agent" in loaded[0].data["agents"]


async def test_an_agent_definition_that_does_not_load_is_a_configuration_error(project: Path, tmp_path: Path) -> None:
    options = catui.CatuiOptions(
        model=_write_script(tmp_path, [{"content": [{"type": "text", "text": "x"}]}], "c.yaml"),
        cwd=project,
        agents={"broken": {"description": "No prompt."}},
    )
    with pytest.raises(catui.ConfigurationError, match=r"CatuiOptions\.agents: agent 'broken'"):
        await collect("hi", options)
    with pytest.raises(catui.ConfigurationError, match="invalid agent definition"):
        catui.AgentDefinition(description="d", prompt="p", maxTurns=0)


# -- background agents (need the background-task layer) --------------------------------------------


def _require_background(client: catui.CatuiClient) -> None:
    app = client._driver.require_app()
    runtime = app.subagent_runtime
    assert runtime is not None and runtime.launcher is not None, "background agents should be installed"


async def _until(client: catui.CatuiClient, predicate: Any, received: list[Any]) -> Any:
    async def read() -> Any:
        async for message in client.receive_messages():
            received.append(message)
            if predicate(message):
                return message
        raise AssertionError("the client closed before the expected message")

    return await asyncio.wait_for(read(), GUARD_S)


def _is_main_result(message: Any) -> bool:
    return isinstance(message, catui.ResultMessage)


async def test_background_subagent_messages_and_notification_turn(backend: Backend, project: Path) -> None:
    turns = [
        {"match": {"last_user_contains": "<task-notification>"},
         "content": [{"type": "text", "text": "The background agent has finished."}]},
        {"match": {"first_user_contains": "Survey the code", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent", "input": {
             "description": "Survey in background", "prompt": "Look at the Python files",
             "subagent_type": "worker", "run_in_background": True}}]},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.py"}}]},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Found app.py."}]},
        {"match": {"first_user_contains": "Survey the code", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Started it in the background."}]},
    ]
    options = backend.options(turns, cwd=project, agents={"worker": WORKER})
    async with catui.CatuiClient(options) as client:
        _require_background(client)
    messages = await collect("Survey the code", options)

    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    assert [r.result for r in results] == ["Started it in the background.", "The background agent has finished."]
    started = next(m for m in messages if isinstance(m, catui.TaskStartedMessage))
    finished = next(m for m in messages if isinstance(m, catui.TaskNotificationMessage))
    assert started.task_type == "local_agent" and finished.task_id == started.task_id
    assert finished.status == "completed"
    assert messages.index(started) < messages.index(results[0])
    assert messages.index(finished) < messages.index(results[1])
    launch = next(
        b for m in messages if isinstance(m, catui.UserMessage) and not m.parent_tool_use_id
        for b in m.content if isinstance(b, catui.ToolResultBlock)
    )
    assert "Async agent launched successfully." in str(launch.content)
    child = [m for m in messages if isinstance(m, catui.AssistantMessage) and "Found app.py." in texts(m)]
    assert all(m.parent_tool_use_id == started.tool_use_id for m in child)


def _gated_tool(entered: asyncio.Event, gate: asyncio.Event, cancelled: list[bool]) -> Any:
    @catui.tool("long_job", "A job that runs until released.", {}, read_only=True)
    async def long_job(args: dict[str, Any]) -> str:
        entered.set()
        try:
            await gate.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "job done"

    return long_job


JOBBER = catui.AgentDefinition(description="Runs the long job.", prompt="You are the job agent.", tools=["long_job"])


def _job_turns(background: bool) -> list[dict[str, Any]]:
    call: dict[str, Any] = {"description": "Run the job", "prompt": "Run long_job", "subagent_type": "jobber"}
    if background:
        call["run_in_background"] = True
    return [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        {"match": {"first_user_contains": "Do the job", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent", "input": call}]},
        {"match": {"system_contains": "You are the job agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "long_job", "input": {}}]},
        {"match": {"system_contains": "You are the job agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The job is done."}]},
        {"match": {"first_user_contains": "Do the job", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The job runs on its own now."}]},
    ]


async def test_stop_task_stops_a_running_background_agent(backend: Backend, project: Path) -> None:
    entered, gate = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []
    options = backend.options(_job_turns(background=True), cwd=project, agents={"jobber": JOBBER},
                              tools=[_gated_tool(entered, gate, cancelled)])
    async with catui.CatuiClient(options) as client:
        _require_background(client)
        await client.query("Do the job")
        received: list[Any] = []
        started = await _until(client, lambda m: isinstance(m, catui.TaskStartedMessage), received)
        await asyncio.wait_for(entered.wait(), GUARD_S)
        await client.stop_task(started.task_id)
        assert cancelled == [True]
        task = client._driver.require_app().tasks.get(started.task_id)
        assert task is not None and task.status in ("stopped", "killed")
        stopped = await _until(
            client, lambda m: isinstance(m, catui.TaskNotificationMessage) and m.task_id == started.task_id, received
        )
        assert stopped.status == "stopped"
        answers = [texts(m) for m in received if isinstance(m, catui.AssistantMessage)]
        assert "The job is done." not in answers


async def test_background_tasks_moves_a_running_foreground_agent(backend: Backend, project: Path) -> None:
    entered, gate = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []
    options = backend.options(_job_turns(background=False), cwd=project, agents={"jobber": JOBBER},
                              tools=[_gated_tool(entered, gate, cancelled)])
    async with catui.CatuiClient(options) as client:
        _require_background(client)
        await client.query("Do the job")
        received: list[Any] = []
        started = await _until(client, lambda m: isinstance(m, catui.TaskStartedMessage), received)
        await asyncio.wait_for(entered.wait(), GUARD_S)
        moved = await client.background_tasks()
        assert moved == [started.task_id]
        first = await _until(client, _is_main_result, received)
        assert first.result == "The job runs on its own now."
        gate.set()
        done = await _until(
            client, lambda m: isinstance(m, catui.TaskNotificationMessage) and m.task_id == started.task_id, received
        )
        assert done.status == "completed"
        second = await _until(client, _is_main_result, received)
        assert second.result == "Noted." and cancelled == []


# -- partial messages, limits and provider failures ------------------------------------------------


async def test_partial_messages_max_turns_and_provider_errors(backend: Backend, project: Path) -> None:
    hello = [{"content": [{"type": "text", "text": "A fairly long hello to stream in pieces."}]}]
    messages = await collect("Hello", backend.options(hello, cwd=project, include_partial_messages=True))
    partials = [m for m in messages if isinstance(m, catui.StreamEvent)]
    kinds = [p.event["type"] for p in partials]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop" and "content_block_delta" in kinds
    assert messages.index(partials[-1]) < next(
        i for i, m in enumerate(messages) if isinstance(m, catui.AssistantMessage)
    )

    looping = [{"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}], "repeat": True}]
    limited = await collect("Loop", backend.options(looping, cwd=project, max_turns=2))
    assert (limited[-1].subtype, limited[-1].is_error, limited[-1].num_turns) == ("error_max_turns", True, 2)

    failing = [{"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}}]
    failed = await collect("Fail", backend.options(failing, cwd=project))
    result = failed[-1]
    assert isinstance(result, catui.ResultMessage)
    # As Claude Code reports an API failure: the loop "succeeded", the run is an error, with the status.
    assert (result.subtype, result.is_error, result.terminal_reason) == ("success", True, "api_error")
    assert result.api_error_status == 400 and result.errors == []
    assert (result.result or "").startswith("API Error: ") and "prompt is too long" in (result.result or "")
    assert limited[-1].terminal_reason == "max_turns"
    errors = [m for m in failed if isinstance(m, catui.SystemMessage) and m.subtype == "error"]
    assert errors and "prompt is too long" in errors[0].data["message"]


async def test_a_raising_can_use_tool_ends_the_run_with_its_message(backend: Backend, project: Path) -> None:
    async def can_use_tool(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        raise KeyError("no policy for this tool")

    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch x"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "unexpected"}]},
    ]
    messages = await collect("Go", backend.options(turns, cwd=project, can_use_tool=can_use_tool))
    result = messages[-1]
    assert (result.subtype, result.is_error) == ("error_during_execution", True)
    assert "can_use_tool raised KeyError" in (result.result or "")
    assert not (project / "x").exists()
    with pytest.raises(catui.ConfigurationError, match="non-empty prompt"):
        await collect("  ", backend.options(turns, cwd=project))


async def test_settings_given_in_options_apply_without_setting_sources(project: Path, tmp_path: Path) -> None:
    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch made-by-rule"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}]},
    ]
    options = catui.CatuiOptions(
        model=_write_script(tmp_path, turns, "d.yaml"), cwd=project, settings='{"permissions": {"allow": ["Bash"]}}'
    )
    messages = await collect("Make the file", options)
    assert messages[-1].permission_denials == [] and (project / "made-by-rule").exists()


async def test_a_client_can_connect_again_after_disconnect(project: Path, tmp_path: Path) -> None:
    turns = [{"content": [{"type": "text", "text": "answer"}], "repeat": True}]
    client = catui.CatuiClient(catui.CatuiOptions(model=_write_script(tmp_path, turns, "e.yaml"), cwd=project))
    for _ in range(2):
        async with client:
            await client.query("hello")
            messages = [m async for m in client.receive_response()]
            assert messages[-1].result == "answer"
    with pytest.raises(catui.CatuiError, match="not connected"):
        await client.query("hello")
