"""catui's five built-in agents (spec section 5), in Claude Code's order.

Order of ``builtin_agents()``: general-purpose, statusline-setup, Explore,
Plan, catui-guide. This is the order of the Agent tool's list and of the
"Available agents" error text.

When the guide is active: Claude Code adds its guide agent only when it is not
driven through an SDK entry point, and print mode (``-p``) counts as one; the
observed print-mode error lists ``general-purpose, statusline-setup, Explore,
Plan``. catui does the same: the guide is active in interactive sessions, and
``CATUI_GUIDE_AGENT=1`` / ``0`` forces it on or off.

The guide's tools depend on a run-time condition, as in Claude Code: with the
Glob and Grep tools available it gets ``Glob, Grep, Read, WebFetch, WebSearch``;
without them (Claude Code's builds whose search tools are embedded in Bash;
in catui, a session whose Glob/Grep were removed) it gets ``Bash, Read,
WebFetch, WebSearch`` and searches with read-only shell commands.
"""

from __future__ import annotations

import os

from catui.agents import builtin_prompts as prompts
from catui.agents.definition import AgentDefinition, SystemPromptContext

GUIDE_AGENT_TYPE = "catui-guide"
CLAUDE_AGENT_TYPE = "claude"
GUIDE_AGENT_ALIASES = ("claude-code-guide",)
READ_ONLY_DENIED_TOOLS = ["Agent", "ExitPlanMode", "Edit", "Write", "NotebookEdit"]
GUIDE_TOOLS_WITH_SEARCH = ["Glob", "Grep", "Read", "WebFetch", "WebSearch"]
GUIDE_TOOLS_WITH_BASH = ["Bash", "Read", "WebFetch", "WebSearch"]


def guide_enabled(*, interactive: bool, env: dict[str, str] | None = None) -> bool:
    """Whether catui-guide is active: in interactive sessions, unless ``CATUI_GUIDE_AGENT`` says otherwise."""
    value = (env if env is not None else os.environ).get("CATUI_GUIDE_AGENT", "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return interactive


def general_purpose_agent() -> AgentDefinition:
    return AgentDefinition.from_checked_fields(
        agent_type="general-purpose",
        description=prompts.GENERAL_PURPOSE_WHEN_TO_USE,
        when_to_use=prompts.GENERAL_PURPOSE_WHEN_TO_USE,
        prompt=prompts.GENERAL_PURPOSE_PROMPT,
        tools=["*"],
        source="built-in",
        base_dir="built-in",
    )


def statusline_setup_agent() -> AgentDefinition:
    return AgentDefinition.from_checked_fields(
        agent_type="statusline-setup",
        description=prompts.STATUSLINE_WHEN_TO_USE,
        when_to_use=prompts.STATUSLINE_WHEN_TO_USE,
        prompt=prompts.STATUSLINE_PROMPT,
        tools=["Read", "Edit"],
        model="sonnet",
        color="orange",
        source="built-in",
        base_dir="built-in",
    )


def claude_agent() -> AgentDefinition:
    """``claude`` (current contract only): the assistant itself as a delegate, all tools, the parent's model."""
    return AgentDefinition.from_checked_fields(
        agent_type=CLAUDE_AGENT_TYPE,
        description=prompts.CLAUDE_WHEN_TO_USE,
        when_to_use=prompts.CLAUDE_WHEN_TO_USE,
        prompt=prompts.CLAUDE_PROMPT,
        tools=["*"],
        source="built-in",
        base_dir="built-in",
    )


def explore_agent(*, search_tools: bool = True, model: str = "haiku") -> AgentDefinition:
    """Explore: read-only, fast model, no CLAUDE.md; its when-to-use text is computed when asked for."""

    def when_to_use() -> str:
        return prompts.explore_when_to_use(search_tools=search_tools)

    return AgentDefinition.from_checked_fields(
        agent_type="Explore",
        description=prompts.explore_when_to_use(search_tools=search_tools),
        when_to_use=when_to_use,
        prompt=prompts.EXPLORE_PROMPT,
        disallowed_tools=list(READ_ONLY_DENIED_TOOLS),
        model=model,
        omit_claude_md=True,
        source="built-in",
        base_dir="built-in",
    )


def plan_agent() -> AgentDefinition:
    return AgentDefinition.from_checked_fields(
        agent_type="Plan",
        description=prompts.PLAN_WHEN_TO_USE,
        when_to_use=prompts.PLAN_WHEN_TO_USE,
        prompt=prompts.PLAN_PROMPT,
        disallowed_tools=list(READ_ONLY_DENIED_TOOLS),
        model="inherit",
        omit_claude_md=True,
        source="built-in",
        base_dir="built-in",
    )


def _guide_prompt(context: SystemPromptContext) -> str:
    custom = [
        (agent.agent_type, agent.get_when_to_use())
        for agent in context.active_agents
        if isinstance(agent, AgentDefinition) and not agent.is_built_in
    ]
    return prompts.guide_system_prompt(custom)


def guide_agent(*, search_tools: bool = True) -> AgentDefinition:
    """catui-guide (alias claude-code-guide): answers questions about catui; its prompt lists custom agents."""
    return AgentDefinition.from_checked_fields(
        agent_type=GUIDE_AGENT_TYPE,
        aliases=GUIDE_AGENT_ALIASES,
        description=prompts.GUIDE_WHEN_TO_USE,
        when_to_use=prompts.GUIDE_WHEN_TO_USE,
        system_prompt_builder=_guide_prompt,
        tools=list(GUIDE_TOOLS_WITH_SEARCH if search_tools else GUIDE_TOOLS_WITH_BASH),
        model="haiku",
        permission_mode="dontAsk",
        source="built-in",
        base_dir="built-in",
    )


def builtin_agents(
    *, include_guide: bool = False, search_tools: bool = True, current: bool = False
) -> list[AgentDefinition]:
    """The built-in agents in their active order (see the module docstring for the guide's conditions).

    ``current``: the current Claude Code contract (catui.config.compat): the ``claude`` type joins and Explore
    runs on its parent's model, as in 2.1.332.
    """
    agents = [
        general_purpose_agent(),
        statusline_setup_agent(),
        explore_agent(search_tools=search_tools, model="inherit" if current else "haiku"),
        plan_agent(),
    ]
    if current:
        agents.append(claude_agent())
    if include_guide:
        agents.append(guide_agent(search_tools=search_tools))
    return agents
