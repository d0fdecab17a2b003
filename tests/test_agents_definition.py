"""AgentDefinition, tool-list parsing and the five built-in agents."""

from __future__ import annotations

import pytest

from catui.agents.builtin import (
    GUIDE_TOOLS_WITH_BASH,
    GUIDE_TOOLS_WITH_SEARCH,
    builtin_agents,
    guide_agent,
    guide_enabled,
)
from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.agents.tool_lists import parse_tool_list
from catui.errors import ConfigurationError

READ_ONLY_DENY = ["Agent", "ExitPlanMode", "Edit", "Write", "NotebookEdit"]


# -- AgentDefinition ---------------------------------------------------------------------------------


def test_claude_agent_sdk_keywords_work() -> None:
    agent = AgentDefinition(
        description="Reviews code",
        prompt="You review code.",
        tools=["Read", "Grep"],
        disallowedTools=["Write"],
        model="sonnet",
        permissionMode="plan",
        maxTurns=4,
        initialPrompt="start",
        mcpServers=["github"],
    )
    assert agent.tools == ["Read", "Grep"]
    assert agent.disallowed_tools == ["Write"]
    assert agent.permission_mode == "plan"
    assert agent.max_turns == 4
    assert agent.initial_prompt == "start"
    assert agent.mcp_servers == ["github"]
    assert agent.get_system_prompt() == "You review code."
    assert agent.get_when_to_use() == "Reviews code"


def test_snake_case_names_work_too() -> None:
    agent = AgentDefinition(agent_type="x", description="d", disallowed_tools=["Bash"], omit_claude_md=True)
    assert agent.disallowed_tools == ["Bash"] and agent.omit_claude_md


def test_definitions_are_immutable() -> None:
    agent = AgentDefinition(agent_type="x", description="d")
    with pytest.raises(Exception, match="frozen"):
        agent.model = "opus"  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"maxTurns": 0}, "maxTurns"),
        ({"permissionMode": "yolo"}, "permissionMode"),
        ({"memory": "global"}, "memory"),
        ({"effort": "extreme"}, "effort"),
        ({"isolation": "container"}, "isolation"),
        ({"colour": "red"}, "colour"),
        ({"agentType": "two\nlines"}, "agentType"),
    ],
)
def test_invalid_values_raise_configuration_error_naming_the_field(
    kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        AgentDefinition(description="d", **kwargs)
    assert field in str(info.value)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"max_turns": 0}, "max_turns"),
        ({"permission_mode": "yolo"}, "permission_mode"),
        ({"tools": ["Read", " "]}, "tools"),
        ({"agent_type": "two\nlines"}, "agent_type"),
        ({"source": "elsewhere"}, "source"),
        ({"hooks": ["not", "a", "mapping"]}, "hooks"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_from_checked_fields_still_validates_what_it_cannot_vouch_for(
    kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        AgentDefinition.from_checked_fields(description="d", **kwargs)
    assert field in str(info.value)


def test_from_checked_fields_equals_full_validation() -> None:
    values: dict[str, object] = {
        "agent_type": "reviewer",
        "description": "Reviews code",
        "prompt": "You review code.",
        "tools": ["Read", "Bash(git:*)"],
        "disallowed_tools": [],
        "model": "sonnet",
        "effort": 3,
        "permission_mode": "plan",
        "background": True,
        "max_turns": 7,
        "memory": "project",
        "hooks": {"PreToolUse": []},
        "source": "projectSettings",
        "base_dir": "/p/.claude/agents",
        "filename": "reviewer",
        "extra_fields": {"type": "x"},
    }
    fast = AgentDefinition.from_checked_fields(**values)
    full = AgentDefinition(**values)
    assert fast == full and fast.model_fields_set == full.model_fields_set
    assert fast.model_dump() == full.model_dump()
    with pytest.raises(Exception, match="frozen"):
        fast.model = "opus"  # type: ignore[misc]
    # Values validation would change (camelCase keys, untrimmed model) take the full path.
    assert AgentDefinition.from_checked_fields(description="d", model=" haiku ").model == "haiku"
    assert AgentDefinition.from_checked_fields(description="d", maxTurns=2).max_turns == 2
    # Default factories give every instance its own mapping.
    first, second = (AgentDefinition.from_checked_fields(description="d") for _ in range(2))
    assert first.extra_fields == {} and first.extra_fields is not second.extra_fields


def test_built_ins_equal_their_fully_validated_selves() -> None:
    for agent in builtin_agents(include_guide=True):
        fields = {name: getattr(agent, name) for name in agent.model_fields_set}
        assert AgentDefinition(**fields) == agent, agent.agent_type


def test_model_is_trimmed_and_inherit_normalised() -> None:
    assert AgentDefinition(description="d", model="  INHERIT ").model == "inherit"
    assert AgentDefinition(description="d", model=" haiku ").model == "haiku"
    assert AgentDefinition(description="d", model="  ").model is None
    assert AgentDefinition(description="d").model_display == "inherit"


def test_tools_as_a_string_are_split_like_frontmatter() -> None:
    agent = AgentDefinition(description="d", tools="Read, Agent(a, b) Grep")  # type: ignore[arg-type]
    assert agent.tools == ["Read", "Agent(a, b)", "Grep"]


def test_allows_all_tools() -> None:
    assert AgentDefinition(description="d").allows_all_tools
    assert AgentDefinition(description="d", tools=["*"]).allows_all_tools
    assert not AgentDefinition(description="d", tools=[]).allows_all_tools
    assert not AgentDefinition(description="d", tools=["Read"]).allows_all_tools


# -- parse_tool_list (MANIFEST rule 4) -------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, []),
        ("", []),
        ([], []),
        ("Read, Grep", ["Read", "Grep"]),
        ("Read Grep,Glob", ["Read", "Grep", "Glob"]),
        (["Read", "Grep, Glob"], ["Read", "Grep", "Glob"]),
        (["Read", 3, None, "Bash"], ["Read", "Bash"]),
        ("Agent(a, b), Read", ["Agent(a, b)", "Read"]),
        ("Read, *", None),
        (["*"], None),
        ({"read": True, "write": False}, []),
        (True, []),
    ],
)
def test_parse_tool_list(value: object, expected: list[str] | None) -> None:
    assert parse_tool_list(value) == expected


# -- built-in agents -------------------------------------------------------------------------------


def test_builtin_order_and_guide_presence() -> None:
    assert [a.agent_type for a in builtin_agents()] == [
        "general-purpose",
        "statusline-setup",
        "Explore",
        "Plan",
    ]
    with_guide = [a.agent_type for a in builtin_agents(include_guide=True)]
    assert with_guide == ["general-purpose", "statusline-setup", "Explore", "Plan", "catui-guide"]
    assert all(a.is_built_in and a.base_dir == "built-in" for a in builtin_agents(include_guide=True))


def test_builtin_properties_match_the_spec() -> None:
    agents = {a.agent_type: a for a in builtin_agents(include_guide=True)}
    gp = agents["general-purpose"]
    assert gp.tools == ["*"] and gp.allows_all_tools and gp.model is None and isinstance(gp.when_to_use, str)

    explore = agents["Explore"]
    assert explore.disallowed_tools == READ_ONLY_DENY
    assert explore.tools is None and explore.model == "haiku" and explore.omit_claude_md
    assert callable(explore.when_to_use)  # computed at run time
    assert "read-only" in explore.get_when_to_use().lower()

    plan = agents["Plan"]
    assert plan.disallowed_tools == READ_ONLY_DENY
    assert plan.model == "inherit" and plan.omit_claude_md

    status = agents["statusline-setup"]
    assert status.tools == ["Read", "Edit"] and status.model == "sonnet" and status.color == "orange"
    assert "statusLine" in status.get_system_prompt() and '"type": "command"' in status.get_system_prompt()

    guide = agents["catui-guide"]
    assert guide.model == "haiku" and guide.permission_mode == "dontAsk"
    assert "claude-code-guide" in guide.aliases


def test_explore_when_to_use_follows_the_search_tools_condition() -> None:
    with_search = builtin_agents(search_tools=True)[2]
    without = builtin_agents(search_tools=False)[2]
    assert with_search.get_when_to_use() != without.get_when_to_use()
    assert "shell" in without.get_when_to_use()


def test_guide_tool_set_depends_on_search_tools() -> None:
    assert guide_agent(search_tools=True).tools == GUIDE_TOOLS_WITH_SEARCH
    assert guide_agent(search_tools=False).tools == GUIDE_TOOLS_WITH_BASH


def test_read_only_prompts_say_so() -> None:
    agents = {a.agent_type: a for a in builtin_agents()}
    assert "READ-ONLY" in agents["Explore"].get_system_prompt()
    assert "absolute" in agents["Explore"].get_system_prompt()
    assert "READ-ONLY" in agents["Plan"].get_system_prompt()
    assert "Critical files" in agents["Plan"].get_system_prompt()


def test_guide_prompt_lists_the_users_custom_agents() -> None:
    custom = AgentDefinition(
        agent_type="db-expert", description="Answers database questions", source="projectSettings"
    )
    guide = guide_agent()
    prompt = guide.get_system_prompt(SystemPromptContext(active_agents=[*builtin_agents(), custom]))
    assert "db-expert: Answers database questions" in prompt
    assert "- Explore:" not in prompt  # built-ins are not "the user's agents"
    assert "no custom agents" in guide.get_system_prompt(SystemPromptContext(active_agents=builtin_agents()))


def test_guide_enabled_only_interactively_unless_forced() -> None:
    assert guide_enabled(interactive=True, env={})
    assert not guide_enabled(interactive=False, env={})
    assert guide_enabled(interactive=False, env={"CATUI_GUIDE_AGENT": "1"})
    assert not guide_enabled(interactive=True, env={"CATUI_GUIDE_AGENT": "0"})


def test_the_plain_definition_and_its_validator_have_the_same_fields_and_defaults() -> None:
    # AgentDefinition is a plain class (no pydantic on the trivial path); definition_fields validates for it.
    from catui.agents import definition_fields
    from catui.agents.definition import FIELD_DEFAULTS, FIELD_FACTORIES

    defaults = definition_fields.field_defaults()
    assert defaults == {**FIELD_DEFAULTS, **{name: {} for name in FIELD_FACTORIES}}
    plain = {k: v for k, v in AgentDefinition.__annotations__.items() if not k.startswith("_")}
    validated = definition_fields.AgentDefinitionFields.__annotations__
    assert list(plain) == list(defaults)
    assert {k: v.replace("SystemPromptContext", "Any") for k, v in plain.items()} == validated
