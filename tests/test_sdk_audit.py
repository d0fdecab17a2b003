"""The SDK points the issue lists that the other SDK tests leave open.

A run with a foreground AND a background sub-agent (order, types, and
``parent_tool_use_id`` on every child message, stream events included); two
open clients that share nothing (tools, can_use_tool, env, cwd); the README's
and docs/sdk.md's snippets running as written on the scripted provider; bad
inputs to every public entry point ending in a CatuiError, never a bare one.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import catui
from catui.sdk.options import run_options_from
from tests.support.sdk_backend import (  # noqa: F401 - backend_fixture and isolated_sdk_home are fixtures
    GUARD_S,
    Backend,
    backend_fixture,
    collect,
    isolated_sdk_home,
    texts,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


# -- one run, a foreground and a background sub-agent ----------------------------------------------

FG = catui.AgentDefinition(description="Counts in the foreground.", prompt="You are the FG worker.", tools=["Glob"])
BG = catui.AgentDefinition(description="Surveys in the background.", prompt="You are the BG worker.",
                           tools=["bg_wait"])
CHILD_TOOLS = ("Glob", "bg_wait")


def _worker_turns(marker: str, call: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"match": {"system_contains": f"You are the {marker} worker", "last_is_tool_result": False},
         "content": [{"type": "tool_use", **call}]},
        {"match": {"system_contains": f"You are the {marker} worker", "last_is_tool_result": True},
         "content": [{"type": "text", "text": f"{marker} done."}]},
    ]


MIXED_TURNS: list[dict[str, Any]] = [
    {"match": {"last_user_contains": "<task-notification>"},
     "content": [{"type": "text", "text": "Main saw the background result."}]},
    {"match": {"first_user_contains": "Run both", "last_is_tool_result": False},
     "content": [
         {"type": "text", "text": "Starting both."},
         {"type": "tool_use", "name": "Agent", "input": {
             "description": "Survey in background", "prompt": "BG job: survey", "subagent_type": "bg-worker",
             "run_in_background": True}},
         {"type": "tool_use", "name": "Agent", "input": {
             "description": "Count in foreground", "prompt": "FG job: count", "subagent_type": "fg-worker"}},
     ]},
    *_worker_turns("FG", {"name": "Glob", "input": {"pattern": "*.py"}}),
    *_worker_turns("BG", {"name": "bg_wait", "input": {}}),
    {"match": {"first_user_contains": "Run both", "last_is_tool_result": True},
     "content": [{"type": "text", "text": "Main waits."}]},
]


def _child_kinds(messages: list[Any], parent: str) -> list[str]:
    return [type(m).__name__ for m in messages
            if isinstance(m, catui.AssistantMessage | catui.UserMessage) and m.parent_tool_use_id == parent]


async def test_a_run_with_a_foreground_and_a_background_subagent(backend: Backend, project: Path) -> None:
    # The background worker finishes only after the prompt's result, so its notification gets a turn of its own
    # (had it finished earlier, Claude Code's rule attaches the notification to the running turn instead).
    release = asyncio.Event()

    @catui.tool("bg_wait", "Wait until released.", {}, read_only=True)
    async def bg_wait(args: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    options = backend.options(MIXED_TURNS, cwd=project, agents={"fg-worker": FG, "bg-worker": BG},
                              tools=[bg_wait], include_partial_messages=True)

    async def run() -> list[Any]:
        received: list[Any] = []
        async for message in catui.query("Run both", options):
            received.append(message)
            if isinstance(message, catui.ResultMessage):
                release.set()
        return received

    messages = await asyncio.wait_for(run(), GUARD_S)

    assert isinstance(messages[0], catui.SystemMessage) and messages[0].subtype == "init"
    first = next(m for m in messages if isinstance(m, catui.AssistantMessage))
    assert first.parent_tool_use_id is None and texts(first) == "Starting both."
    calls = {b.input["subagent_type"]: b.id for b in first.content if isinstance(b, catui.ToolUseBlock)}
    fg_id, bg_id = calls["fg-worker"], calls["bg-worker"]

    # Each sub-agent's own conversation, in order, every message naming its Agent call.
    expected = ["UserMessage", "AssistantMessage", "UserMessage", "AssistantMessage"]
    assert _child_kinds(messages, fg_id) == expected
    assert _child_kinds(messages, bg_id) == expected
    for parent, marker in ((fg_id, "FG"), (bg_id, "BG")):
        own = [m for m in messages if isinstance(m, catui.AssistantMessage | catui.UserMessage)
               and m.parent_tool_use_id == parent]
        assert f"{marker} job" in texts(own[0]) and texts(own[-1]) == f"{marker} done."
        call_ids = {b.id for b in own[1].content if isinstance(b, catui.ToolUseBlock)}
        assert {b.tool_use_id for b in own[2].content if isinstance(b, catui.ToolResultBlock)} == call_ids

    # No child message without its parent id: every worker tool call/result and every worker text is a child's.
    child_calls = {b.id for m in messages if isinstance(m, catui.AssistantMessage) for b in m.content
                   if isinstance(b, catui.ToolUseBlock) and b.name in CHILD_TOOLS}
    assert len(child_calls) == 2
    for message in messages:
        if not isinstance(message, catui.AssistantMessage | catui.UserMessage):
            continue
        blocks = message.content if isinstance(message.content, list) else []
        is_child = (
            any(isinstance(b, catui.ToolUseBlock) and b.id in child_calls for b in blocks)
            or any(isinstance(b, catui.ToolResultBlock) and b.tool_use_id in child_calls for b in blocks)
            or (isinstance(message, catui.AssistantMessage) and texts(message) in ("FG done.", "BG done."))
            or any(isinstance(b, catui.TextBlock) and b.text.startswith(("FG job", "BG job")) for b in blocks)
        )
        assert (message.parent_tool_use_id is not None) == is_child, message
    # Partial stream events come from the main agent only (sub-agents stream nothing), so none is unattributed.
    partial_parents = {e.parent_tool_use_id for e in messages if isinstance(e, catui.StreamEvent)}
    assert None in partial_parents and partial_parents <= {None, fg_id, bg_id}

    # Task messages: one start and one end per sub-agent, tied to the Agent call.
    started = {m.tool_use_id: m for m in messages if isinstance(m, catui.TaskStartedMessage)}
    ended = {m.tool_use_id: m for m in messages if isinstance(m, catui.TaskNotificationMessage)}
    assert set(started) == set(ended) == {fg_id, bg_id}
    assert all(m.task_type == "local_agent" and m.task_id == ended[k].task_id for k, m in started.items())
    assert {m.status for m in ended.values()} == {"completed"}
    progress = [m for m in messages if isinstance(m, catui.TaskProgressMessage)]
    assert {m.tool_use_id for m in progress} <= {fg_id, bg_id}
    assert {m.last_tool_name for m in progress if m.tool_use_id == fg_id} == {"Glob"}

    # The main agent's flow: Agent results, its answer, the prompt's result, then the notification turn.
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    assert [r.result for r in results] == ["Main waits.", "Main saw the background result."]
    agent_results = {
        b.tool_use_id: (m, b) for m in messages if isinstance(m, catui.UserMessage) and m.parent_tool_use_id is None
        for b in m.content if isinstance(b, catui.ToolResultBlock)
    }
    assert "Async agent launched successfully." in str(agent_results[bg_id][1].content)
    assert "FG done." in str(agent_results[fg_id][1].content)
    fg_result_message = agent_results[fg_id][0]
    fg_tool_result = fg_result_message.tool_use_result
    fg_entry = fg_tool_result if isinstance(fg_tool_result, dict) else next(
        r for r in fg_tool_result if r.get("agentType") == "fg-worker")
    assert (fg_entry["status"], fg_entry["agentType"]) == ("completed", "fg-worker")
    index = messages.index
    assert index(ended[fg_id]) < index(fg_result_message) < index(results[0])
    notification_turn = next(m for m in messages if isinstance(m, catui.UserMessage)
                             and m.parent_tool_use_id is None and "<task-notification>" in texts(m))
    assert index(results[0]) < index(notification_turn) < index(results[1])
    assert index(started[bg_id]) < index(results[0]) and index(ended[bg_id]) < index(results[1])
    assert isinstance(messages[-1], catui.ResultMessage)


# -- two clients, nothing shared -------------------------------------------------------------------


async def test_two_open_clients_share_no_tools_callbacks_or_environment(backend: Backend, tmp_path: Path) -> None:
    alpha_dir, beta_dir = tmp_path / "alpha", tmp_path / "beta"
    alpha_dir.mkdir()
    beta_dir.mkdir()
    asked: list[tuple[str, str | None]] = []

    async def alpha_policy(name: str, data: dict[str, Any], context: catui.ToolPermissionContext) -> Any:
        asked.append((name, context.agent_type))
        return catui.PermissionResultAllow()

    @catui.tool("alpha_note", "Write a note.", {"text": str})
    async def alpha_note(args: dict[str, Any]) -> str:
        return f"noted {args['text']}"

    def turns(name: str, second_call: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"match": {"last_user_contains": f"{name} go"},
             "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo MARK=$MARK"}}]},
            {"match": {"last_user_contains": "MARK="}, "content": [second_call]},
            {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": f"{name} finished"}]},
        ]

    alpha = backend.options(
        turns("alpha", {"type": "tool_use", "name": "alpha_note", "input": {"text": "hi"}}),
        cwd=alpha_dir, tools=[alpha_note], can_use_tool=alpha_policy, env={"MARK": "alpha"},
        allowed_tools=["Bash(echo:*)"],
    )
    beta = backend.options(
        turns("beta", {"type": "tool_use", "name": "Bash", "input": {"command": "touch beta-made-this"}}),
        cwd=beta_dir, env={"MARK": "beta"}, allowed_tools=["Bash(echo:*)"],
    )
    async with catui.CatuiClient(alpha) as first, catui.CatuiClient(beta) as second:

        async def ask(client: catui.CatuiClient, prompt: str) -> list[Any]:
            await client.query(prompt)
            return [m async for m in client.receive_response()]

        one, two = await asyncio.wait_for(
            asyncio.gather(ask(first, "alpha go"), ask(second, "beta go")), GUARD_S
        )
    assert "alpha_note" in one[0].data["tools"] and "alpha_note" not in two[0].data["tools"]
    outputs = [str(b.content) for m in (*one, *two) if isinstance(m, catui.UserMessage) for b in m.content
               if isinstance(b, catui.ToolResultBlock)]
    assert "MARK=alpha" in outputs[0] and "noted hi" in outputs[1]
    assert "MARK=beta" in outputs[2]
    # beta has no can_use_tool: its write is refused, and alpha's callback never heard of it.
    assert asked == [("alpha_note", "main")]
    assert [d["tool_name"] for d in two[-1].permission_denials] == ["Bash"]
    assert not (beta_dir / "beta-made-this").exists() and one[-1].permission_denials == []
    assert "MARK" not in os.environ


# -- the README's and docs' snippets run as written ------------------------------------------------


def _snippet(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block after {heading!r} in {path.name}"
    return match.group(1)


@pytest.mark.parametrize(("doc", "heading"), [("README.md", "## As a Python library"),
                                              ("docs/sdk.md", "## Use it from Python")])
def test_the_documented_snippet_runs_on_the_scripted_provider(doc: str, heading: str, tmp_path: Path) -> None:
    code = _snippet(ROOT / doc, heading)
    assert 'model="sonnet"' in code, "the snippet's model changed; update this test's substitution"
    script = tmp_path / "review.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"first_user_contains": "Review the last commit", "tools_include": ["Agent"]},
         "content": [{"type": "text", "text": "No bugs found in the last commit."}]},
    ]}), encoding="utf-8")
    program = tmp_path / "snippet.py"
    program.write_text(code.replace('model="sonnet"', f"model={f'scripted:{script}'!r}"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update({"CATUI_HOME": str(tmp_path / "catui-home"), "HOME": str(tmp_path / "home")})
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "No bugs found in the last commit." and done.stderr == ""


# -- bad input never escapes as a bare exception ---------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cwd": 123}, "cwd must be a path"),
        ({"model": 5}, "model must be a string"),
        ({"allowed_tools": "Bash"}, "allowed_tools must be a list of rule strings"),
        ({"disallowed_tools": None}, "disallowed_tools must be a list"),
        ({"add_dirs": "/tmp"}, "add_dirs must be a list of paths"),
        ({"env": {"A": 1}}, "env must be a dict of strings to strings"),
        ({"env": ["A=1"]}, "env must be a dict"),
        ({"setting_sources": "project"}, "setting_sources must be a list"),
        ({"tools": "word_count"}, "tools must be a list"),
        ({"mcp_servers": "/tmp/mcp.json"}, "mcp_servers must be a dict"),
        ({"session_id": "../../escape"}, "session_id '../../escape' is not usable"),
        ({"agents": {"x": catui.AgentDefinition(prompt="p")}}, "agent 'x' needs a non-empty description"),
        ({"agents": {"x": catui.AgentDefinition(description="d")}}, "agent 'x' needs a non-empty prompt"),
    ],
)
def test_options_of_the_wrong_shape_are_configuration_errors(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(catui.ConfigurationError, match=re.escape(message)):
        run_options_from(catui.CatuiOptions(**fields))


def test_tools_that_cannot_be_built_are_configuration_errors() -> None:
    async def handler(args: dict[str, Any]) -> str:
        return ""

    with pytest.raises(catui.ConfigurationError, match="cannot build the input schema"):
        catui.tool("odd", "An argument type without a schema.", {"value": object()})(handler)
    with pytest.raises(catui.ConfigurationError, match="must be strings"):
        catui.tool("odd", 42, {})(handler)


async def test_client_calls_with_bad_values_are_configuration_errors(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "ok"}]}]}), encoding="utf-8")
    async with catui.CatuiClient(catui.CatuiOptions(model=f"scripted:{script}", cwd=project)) as client:
        with pytest.raises(catui.ConfigurationError, match="set_model"):
            await client.set_model(5)
        with pytest.raises(catui.ConfigurationError, match="unknown model"):
            await client.set_model("nosuch:model")
        with pytest.raises(catui.ConfigurationError, match="non-empty prompt"):
            await client.query(42)


async def test_an_unknown_agent_field_is_reported_in_the_init_message(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": [{"type": "text", "text": "ok"}]}]}), encoding="utf-8")
    options = catui.CatuiOptions(
        model=f"scripted:{script}", cwd=project,
        agents={"x": {"description": "d", "prompt": "p", "toolz": ["Read"]}},
    )
    messages = await collect("hi", options)
    assert any("unknown field 'toolz'" in w for w in messages[0].data["warnings"])


# -- start-up: what importing and creating a client load -------------------------------------------


def test_import_and_client_creation_load_no_heavy_modules(tmp_path: Path) -> None:
    program = (
        "import sys, catui\n"
        "after_import = sorted(m for m in ('pydantic', 'asyncio', 'catui.sdk') if m in sys.modules)\n"
        "catui.CatuiClient(catui.CatuiOptions())\n"
        "heavy = ('pydantic', 'anthropic', 'openai', 'mcp', 'rich', 'yaml', 'httpx2', 'catui.app.build')\n"
        "print(after_import, sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


# -- AgentDefinition as claude-agent-sdk callers write it ------------------------------------------


def test_agent_definition_takes_claude_agent_sdks_positional_and_camel_case_fields() -> None:
    positional = catui.AgentDefinition("Reviews code.", "You review.", ["Read", "Grep"], model="haiku")
    assert (positional.description, positional.prompt, positional.tools, positional.model) == (
        "Reviews code.", "You review.", ["Read", "Grep"], "haiku")
    every = catui.AgentDefinition(
        description="d", prompt="p", tools=["Read"], disallowedTools=["Bash"], model="sonnet", skills=["s"],
        memory="project", mcpServers=["github"], initialPrompt="Start.", maxTurns=4, background=True,
        effort="high", permissionMode="plan",
    )
    assert (every.disallowed_tools, every.mcp_servers, every.initial_prompt, every.max_turns) == (
        ["Bash"], ["github"], "Start.", 4)
    assert (every.skills, every.memory, every.background, every.effort, every.permission_mode) == (
        ["s"], "project", True, "high", "plan")
    assert catui.AgentDefinition(description="d", prompt="p", disallowed_tools=["Bash"]).disallowed_tools == ["Bash"]
    with pytest.raises(catui.ConfigurationError, match="at most 3 positional"):
        catui.AgentDefinition("d", "p", ["Read"], "haiku")
    with pytest.raises(catui.ConfigurationError, match="both by position and by name"):
        catui.AgentDefinition("d", description="e")
    with pytest.raises(catui.ConfigurationError, match="unknown field"):
        catui.AgentDefinition(description="d", prompt="p", disallowedTool=["Bash"])


async def test_result_messages_carry_claude_agent_sdks_errors_and_structured_output(
    project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"last_user_contains": "fail"},
         "error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}},
        {"content": [{"type": "text", "text": "fine"}]},
    ]}), encoding="utf-8")
    options = catui.CatuiOptions(model=f"scripted:{script}", cwd=project)
    good = (await collect("hello", options))[-1]
    assert (good.result, good.errors, good.structured_output) == ("fine", None, None)
    bad = (await collect("please fail", options))[-1]
    # An API failure: Claude Code's shape (the prose in result, errors empty, the status alongside).
    assert bad.is_error and bad.errors == [] and bad.api_error_status == 400
    assert bad.result is not None and bad.result.startswith("API Error: ") and "prompt is too long" in bad.result


# -- stop_task on a foreground agent mid-run -------------------------------------------------------


async def test_stop_task_stops_a_foreground_agent_and_the_run_goes_on(backend: Backend, project: Path) -> None:
    from tests.test_sdk_query import JOBBER, _gated_tool, _until

    entered, gate = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []
    turns: list[dict[str, Any]] = [
        {"match": {"first_user_contains": "Do the job", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent", "input": {
             "description": "Run the job", "prompt": "Run long_job", "subagent_type": "jobber"}}]},
        {"match": {"system_contains": "You are the job agent", "last_is_tool_result": False},
         "content": [{"type": "text", "text": "Starting the long job."},
                     {"type": "tool_use", "name": "long_job", "input": {}}]},
        {"match": {"system_contains": "You are the job agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "The job is done."}]},
        {"match": {"first_user_contains": "Do the job", "last_user_contains": "was stopped before it finished"},
         "content": [{"type": "text", "text": "The agent was stopped; carrying on without it."}]},
    ]
    options = backend.options(turns, cwd=project, agents={"jobber": JOBBER},
                              tools=[_gated_tool(entered, gate, cancelled)])
    async with catui.CatuiClient(options) as client:
        await client.query("Do the job")
        received: list[Any] = []
        started = await _until(client, lambda m: isinstance(m, catui.TaskStartedMessage), received)
        await asyncio.wait_for(entered.wait(), GUARD_S)
        await client.stop_task(started.task_id)  # still in the foreground: no background_tasks() first
        assert cancelled == [True]
        result = await _until(client, lambda m: isinstance(m, catui.ResultMessage), received)
        assert not result.is_error and result.result == "The agent was stopped; carrying on without it."
        [stopped] = [m for m in received if isinstance(m, catui.TaskNotificationMessage)]
        assert (stopped.task_id, stopped.status) == (started.task_id, "stopped")
        [agent_result] = [b for m in received if isinstance(m, catui.UserMessage) and m.parent_tool_use_id is None
                          and isinstance(m.content, list)
                          for b in m.content if isinstance(b, catui.ToolResultBlock)]
        assert agent_result.is_error
        assert isinstance(agent_result.content, str)
        text = agent_result.content
        assert text.startswith('Agent "Run the job" (jobber) was stopped before it finished.')
        assert "Starting the long job." in text  # its partial answer
        answers = [texts(m) for m in received if isinstance(m, catui.AssistantMessage)]
        assert "The job is done." not in answers
        with pytest.raises(catui.ConfigurationError, match="no sub-agent running with that id"):
            await client.stop_task(started.task_id)  # it has ended: nothing by that id runs now
