"""Unit tests of the sub-agent pieces: tool filtering, model choice, prompts, result extraction, the tool schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.agents.builtin import explore_agent, general_purpose_agent, plan_agent, statusline_setup_agent
from catui.agents.definition import AgentDefinition
from catui.permissions.context import PermissionContext, PermissionRule
from catui.subagents.agent_tool import AgentTool, build_agent_tool_description
from catui.subagents.ids import is_agent_id, new_agent_id
from catui.subagents.models import choose_model_spec, resolve_child_model
from catui.subagents.prompt import build_first_message, build_subagent_system_prompt, load_agent_memory
from catui.subagents.resolve import AgentTypeDeniedError, AgentTypeNotFoundError, resolve_agent_type
from catui.subagents.result import (
    MAX_RESULT_SIZE_CHARS,
    NoAssistantMessagesError,
    extract_agent_result,
    format_agent_tool_result,
)
from catui.subagents.tool_filter import (
    NoToolsLeftError,
    ToolFilterMemo,
    filter_tools_for_agent,
    matches_tool_spec,
    tool_summary,
)
from catui.tools.base import Tool, ToolInput, ToolResult
from tests.support.static_registry import StaticRegistry

MAIN_TOOLS = [
    "Agent", "AskUserQuestion", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterPlanMode",
    "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "NotebookEdit", "Read", "Skill",
    "TaskOutput", "TaskStop", "TodoWrite", "WebFetch", "WebSearch", "Write",
]
READ_ONLY = {"Glob", "Grep", "Read", "WebFetch", "WebSearch", "TaskOutput"}


def make_tool(tool_name: str) -> Tool:
    class Named(Tool):
        name = tool_name
        input_model = ToolInput
        read_only = tool_name in READ_ONLY

        @property
        def description(self) -> str:
            return tool_name

        async def call(self, args: object, ctx: object) -> ToolResult:
            return ToolResult("ok")

    return Named()


def tools_named(names: list[str]) -> list[Tool]:
    return [make_tool(n) for n in names]


# ---------------------------------------------------------------- tools


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_explore_gets_the_observed_13_tools() -> None:
    got = filter_tools_for_agent(explore_agent(), tools_named(MAIN_TOOLS), PermissionContext())
    assert names(got) == [
        "Bash", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Glob", "Grep", "Read",
        "Skill", "TodoWrite", "WebFetch", "WebSearch",
    ]


def test_general_purpose_gets_16_tools_and_never_the_parent_only_ones() -> None:
    got = names(filter_tools_for_agent(general_purpose_agent(), tools_named(MAIN_TOOLS), PermissionContext()))
    assert len(got) == 16
    for forbidden in ("Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput", "TaskStop"):
        assert forbidden not in got
    assert {"Edit", "Write", "NotebookEdit"} <= set(got)


def test_the_tool_filter_memo_answers_as_the_filter_and_notices_new_inputs() -> None:
    memo, pool = ToolFilterMemo(), tools_named(MAIN_TOOLS)
    first = memo.filter(explore_agent(), pool, PermissionContext())
    definition = explore_agent()
    again = memo.filter(definition, pool, PermissionContext())
    assert names(first) == names(filter_tools_for_agent(explore_agent(), pool, PermissionContext()))
    second = memo.filter(definition, pool, PermissionContext())
    assert names(second) == names(again) and second is not again  # each caller gets a list of its own
    second.clear()
    assert names(memo.filter(definition, pool, PermissionContext())) == names(again)
    # A deny rule, plan mode, a pool with a new tool: each a new question.
    denied = PermissionContext().with_rules(PermissionRule(tool_name="Bash", content=None, behavior="deny", source="session"))
    assert "Bash" not in names(memo.filter(definition, pool, denied))
    assert "Bash" not in names(memo.filter(definition, pool, PermissionContext(mode="plan")))
    wider = [*pool, make_tool("mcp__srv__lookup")]
    assert "mcp__srv__lookup" in names(memo.filter(definition, wider, PermissionContext()))
    with pytest.raises(NoToolsLeftError):
        memo.filter(AgentDefinition(agent_type="x", tools=["Nothing"]), pool, PermissionContext())


def test_allow_list_then_deny_list() -> None:
    definition = AgentDefinition(agent_type="reviewer", tools=["Read", "Grep", "Bash(git:*)", "Agent"],
                                 disallowed_tools=["Grep"])
    got = filter_tools_for_agent(definition, tools_named(MAIN_TOOLS), PermissionContext())
    assert names(got) == ["Bash", "Read"]


def test_allow_list_leaving_nothing_is_an_error_naming_the_agent() -> None:
    definition = AgentDefinition(agent_type="lonely", tools=["Agent", "NoSuchTool"])
    with pytest.raises(NoToolsLeftError, match="lonely"):
        filter_tools_for_agent(definition, tools_named(MAIN_TOOLS), PermissionContext())


def test_mcp_server_names_and_patterns() -> None:
    tools = tools_named(["Read", "mcp__github__create_issue", "mcp__github__list", "mcp__slack__post"])
    for entry in ("mcp__github", "mcp__github__*"):
        definition = AgentDefinition(agent_type="x", tools=[entry])
        assert names(filter_tools_for_agent(definition, tools, PermissionContext())) == [
            "mcp__github__create_issue", "mcp__github__list",
        ]
    deny = AgentDefinition(agent_type="y", disallowed_tools=["mcp__github"])
    assert names(filter_tools_for_agent(deny, tools, PermissionContext())) == ["Read", "mcp__slack__post"]
    assert matches_tool_spec("mcp__slack__post", "mcp__slack__post")
    assert not matches_tool_spec("mcp__slackbot__post", "mcp__slack")


def test_permission_context_limits_the_base_set() -> None:
    denied = PermissionContext(rules=(PermissionRule("Bash", None, "deny", "cliArg"),))
    got = names(filter_tools_for_agent(general_purpose_agent(), tools_named(MAIN_TOOLS), denied))
    assert "Bash" not in got
    # A rule with content narrows calls, it does not remove the tool.
    narrowed = PermissionContext(rules=(PermissionRule("Bash", "rm:*", "deny", "cliArg"),))
    assert "Bash" in names(filter_tools_for_agent(general_purpose_agent(), tools_named(MAIN_TOOLS), narrowed))
    plan = names(filter_tools_for_agent(general_purpose_agent(), tools_named(MAIN_TOOLS), PermissionContext(mode="plan")))
    assert set(plan) == READ_ONLY - {"TaskOutput"}


def test_tool_summary_forms() -> None:
    assert tool_summary(general_purpose_agent()) == "*"
    assert tool_summary(explore_agent()) == "All tools except Agent, ExitPlanMode, Edit, Write, NotebookEdit"
    assert tool_summary(statusline_setup_agent()) == "Read, Edit"
    assert tool_summary(AgentDefinition(agent_type="x", tools=["Read", "Bash"], disallowed_tools=["Bash"])) == "Read"


# ---------------------------------------------------------------- models


def test_model_precedence() -> None:
    env: dict[str, str] = {}
    assert choose_model_spec("haiku", "opus", env=env) == ("haiku", "definition")
    assert choose_model_spec("inherit", "opus", env=env) == ("opus", "call")
    assert choose_model_spec(None, "opus", env=env) == ("opus", "call")
    assert choose_model_spec(None, None, env=env) == (None, "parent")
    assert choose_model_spec(None, "opus", env=env, restricted=True) == (None, "parent")
    assert choose_model_spec("haiku", "opus", env={"CATUI_SUBAGENT_MODEL": "sonnet"}) == ("sonnet", "environment")


def test_resolve_child_model_ids_and_reasons() -> None:
    from catui.models.resolve import resolve_model

    env = {"ANTHROPIC_API_KEY": "x"}
    parent = resolve_model("sonnet", {}, env)
    explore = resolve_child_model("haiku", None, parent_model_id=parent.model_id, parent_resolved=parent,
                                  settings={}, env=env)
    assert explore.model_id == "claude-haiku-4-5-20251001" and explore.reason == "definition"
    plan = resolve_child_model("inherit", None, parent_model_id=parent.model_id, parent_resolved=parent,
                               settings={}, env=env)
    assert plan.model_id == parent.model_id and plan.reason == "parent" and plan.inherited
    opus = resolve_child_model(None, "opus", parent_model_id=parent.model_id, parent_resolved=parent,
                               settings={}, env=env)
    assert opus.model_id == "claude-opus-4-6" and opus.reason == "call"
    restricted = resolve_child_model(None, "opus", parent_model_id=parent.model_id, parent_resolved=parent,
                                     settings={"agentModelOverride": False}, env=env)
    assert restricted.model_id == parent.model_id and restricted.reason == "parent"


# ---------------------------------------------------------------- prompts


def test_system_prompt_order_and_omitted_git_status(tmp_path: Path) -> None:
    custom = AgentDefinition(agent_type="custom", prompt="\n  You review code.  \n")
    blocks = build_subagent_system_prompt(custom, environment="ENV", git_status="gitStatus: X")
    texts = [b["text"] for b in blocks]
    assert texts[0] == "You review code."
    assert texts[1].startswith("Notes:\n- ")
    assert texts[2:] == ["ENV", "gitStatus: X"]
    explore = build_subagent_system_prompt(explore_agent(), environment="ENV", git_status="gitStatus: X")
    assert [b["text"] for b in explore][2:] == ["ENV"]
    with_cwd = build_subagent_system_prompt(custom, environment="ENV", working_dirs=[tmp_path])
    assert str(tmp_path) in with_cwd[1]["text"]


def test_first_message_is_reminder_then_prompt_verbatim() -> None:
    message = build_first_message("  do X\n", {"type": "text", "text": "<system-reminder>r</system-reminder>"})
    assert message == {
        "role": "user",
        "content": [{"type": "text", "text": "<system-reminder>r</system-reminder>"}, {"type": "text", "text": "  do X\n"}],
    }


def test_agent_memory_is_loaded_by_scope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    definition = AgentDefinition(agent_type="scribe", memory="project")
    (tmp_path / ".catui" / "agent-memory" / "scribe").mkdir(parents=True)
    (tmp_path / ".catui" / "agent-memory" / "scribe" / "MEMORY.md").write_text("- tests live in t/\n")
    memory = load_agent_memory(definition, tmp_path)
    assert memory is not None and "- tests live in t/" in memory
    assert load_agent_memory(AgentDefinition(agent_type="none"), tmp_path) is None
    user = load_agent_memory(AgentDefinition(agent_type="scribe", memory="user"), tmp_path)
    assert user is not None and str(tmp_path / "home" / "agent-memory" / "scribe") in user


# ---------------------------------------------------------------- results


def assistant(*blocks: dict[str, object]) -> dict[str, object]:
    return {"role": "assistant", "content": list(blocks)}


def test_extract_searches_back_for_text_and_counts_tools() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        assistant({"type": "text", "text": "found it"}, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
        assistant({"type": "tool_use", "id": "t2", "name": "Grep", "input": {}}),
    ]
    result = extract_agent_result(messages, "a0123456789abcdef", agent_type="Explore", prompt="go", duration_ms=5,
                                  usage={"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 2})
    assert result.content == [{"type": "text", "text": "found it"}]
    assert result.total_tool_use_count == 2
    assert result.total_tokens == 15
    assert result.usage["cache_creation_input_tokens"] == 0 and result.usage["service_tier"] == "standard"


def test_extract_without_assistant_messages_fails() -> None:
    with pytest.raises(NoAssistantMessagesError, match="No assistant messages found"):
        extract_agent_result([], "a1", agent_type="x", prompt="p", duration_ms=0)


def test_oversized_result_is_cut_with_a_note() -> None:
    text = "x" * (MAX_RESULT_SIZE_CHARS + 5_000)
    result = extract_agent_result([assistant({"type": "text", "text": text})], "a1", agent_type="Plan", prompt="p",
                                  duration_ms=0)
    body = result.content[0]["text"]
    assert body.startswith("x" * MAX_RESULT_SIZE_CHARS)
    assert "5,000" in body and result.truncated_chars == 5_000
    assert len(body) < MAX_RESULT_SIZE_CHARS + 400


def test_result_formats() -> None:
    one_shot = extract_agent_result([assistant({"type": "text", "text": "A"})], "a0000000000000001", agent_type="Explore",
                                    prompt="p", duration_ms=7, usage={"input_tokens": 4, "output_tokens": 1})
    assert format_agent_tool_result(one_shot).content == [{"type": "text", "text": "A"}]
    general = extract_agent_result([assistant({"type": "text", "text": "B"})], "a0000000000000002",
                                   agent_type="general-purpose", prompt="p", duration_ms=7,
                                   usage={"input_tokens": 4, "output_tokens": 1})
    formatted = format_agent_tool_result(general, worktree_path="/w", worktree_branch="worktree-agent-a0000000")
    assert formatted.content[1]["text"] == (
        "agentId: a0000000000000002 (use SendMessage with to: 'a0000000000000002' to continue this agent)\n"
        "worktreePath: /w\nworktreeBranch: worktree-agent-a0000000\n"
        "<usage>total_tokens: 5\ntool_uses: 0\nduration_ms: 7</usage>"
    )
    data = formatted.data
    assert list(data)[:9] == ["status", "prompt", "agentId", "agentType", "content", "totalDurationMs", "totalTokens",
                              "totalToolUseCount", "usage"]
    assert data["status"] == "completed" and data["content"] == [{"type": "text", "text": "B"}]
    warned = format_agent_tool_result(general, warning="SECURITY WARNING: x")
    assert warned.content[0]["text"] == "SECURITY WARNING: x"


# ---------------------------------------------------------------- resolve, ids, the tool


def test_resolve_agent_type_errors() -> None:
    registry = StaticRegistry([general_purpose_agent(), statusline_setup_agent(), explore_agent(), plan_agent()])
    assert resolve_agent_type(registry, None, PermissionContext()).agent_type == "general-purpose"
    with pytest.raises(AgentTypeNotFoundError) as missing:
        resolve_agent_type(registry, "nope", PermissionContext())
    assert str(missing.value) == (
        "Agent type 'nope' not found. Available agents: general-purpose, statusline-setup, Explore, Plan"
    )
    rules = (PermissionRule("Agent", "Explore", "deny", "cliArg"),)
    with pytest.raises(AgentTypeDeniedError) as denied:
        resolve_agent_type(registry, "Explore", PermissionContext(rules=rules))
    assert str(denied.value) == "Agent type 'Explore' has been denied by permission rule 'Agent(Explore)' from cliArg."


def test_agent_ids() -> None:
    ids = {new_agent_id() for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 17 and is_agent_id(i) for i in ids)


def test_agent_tool_schema_follows_the_flags() -> None:
    registry = StaticRegistry([general_purpose_agent(), explore_agent()])
    plain = AgentTool(registry, env={}).input_schema()
    assert list(plain["properties"]) == ["description", "prompt", "subagent_type", "model", "run_in_background",
                                         "isolation"]
    assert plain["required"] == ["description", "prompt"] and plain["additionalProperties"] is False
    assert plain["properties"]["model"]["enum"] == ["sonnet", "opus", "haiku"]
    assert plain["properties"]["isolation"]["enum"] == ["worktree"]
    no_bg = AgentTool(registry, env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}).input_schema()
    assert "run_in_background" not in no_bg["properties"]
    teams = AgentTool(registry, env={"CATUI_AGENT_TEAMS": "1"}).input_schema()
    assert list(teams["properties"]) == ["description", "prompt", "subagent_type", "model", "run_in_background",
                                         "name", "team_name", "mode", "isolation"]
    assert teams["properties"]["mode"]["enum"] == ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk",
                                                   "plan"]
    # cwd is accepted although it is never sent.
    assert AgentTool.input_model.model_validate({"description": "d", "prompt": "p", "cwd": "/tmp"})


def test_agent_tool_description_lists_agents_and_follows_the_registry() -> None:
    registry = StaticRegistry([general_purpose_agent(), explore_agent()])
    tool = AgentTool(registry, env={})
    first = tool.description
    assert "- general-purpose: " in first and "(Tools: *)" in first
    assert "(Tools: All tools except Agent, ExitPlanMode, Edit, Write, NotebookEdit)" in first
    assert "run_in_background" in first
    registry.active = [*registry.active, AgentDefinition(agent_type="reviewer", when_to_use="Reviews diffs.",
                                                         tools=["Read"])]
    registry.version = 2
    assert "- reviewer: Reviews diffs. (Tools: Read)" in tool.description
    assert "run_in_background" not in build_agent_tool_description([], background_enabled=False)


def test_denied_types_are_left_out_of_the_description() -> None:
    registry = StaticRegistry([general_purpose_agent(), explore_agent(), plan_agent()])
    permissions = PermissionContext()
    tool = AgentTool(registry, env={}, permissions=lambda: permissions)
    assert "- Explore: " in tool.description
    permissions = PermissionContext(rules=(PermissionRule("Agent", "Explore", "deny", "cliArg"),))
    assert "- Explore: " not in tool.description and "- Plan: " in tool.description


def test_agent_calls_follow_ask_rules_and_leave_denials_to_the_runtime(tmp_path: Path) -> None:
    from catui.tools.base import ToolContext

    tool = AgentTool(StaticRegistry([general_purpose_agent(), explore_agent()]), env={})
    rules = (PermissionRule("Agent", "Explore", "ask", "userSettings"),
             PermissionRule("Agent", "Plan", "deny", "cliArg"))
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path,
                      permissions=PermissionContext(rules=rules, working_directories=(tmp_path,)))
    explore = tool.input_model.model_validate({"description": "d", "prompt": "p", "subagent_type": "Explore"})
    assert ctx.permissions.decide(tool.permission_request(explore, ctx)).behavior == "ask"
    plan = tool.input_model.model_validate({"description": "d", "prompt": "p", "subagent_type": "Plan"})
    assert ctx.permissions.decide(tool.permission_request(plan, ctx)).behavior == "allow"
    general = tool.input_model.model_validate({"description": "d", "prompt": "p"})
    assert ctx.permissions.decide(tool.permission_request(general, ctx)).behavior == "allow"
