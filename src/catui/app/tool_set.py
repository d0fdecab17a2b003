"""The main session's tool set: the built-in tools, WebSearch's backend, the Skill tool, opt-in extras."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.app.main_agent import check_tools_left, keep_agent_tools
from catui.app.options import RunOptions
from catui.permissions.rules import denies_tool_outright
from catui.session.usage import UsageTracker
from catui.skills.registry import SkillRegistry, load_skill_registry
from catui.tools.base import Tool
from catui.tools.registry import builtin_tools
from catui.tools.web_search import SearchBackend, WebSearchTool
from catui.tools.web_search_backends import AnthropicServerSearch, SearxngSearch, searxng_url
from catui.tools.worktree_merge import WorktreeMergeTool, worktree_merge_allowed

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.mcp.manager import McpManager
    from catui.models.base import ModelProvider
    from catui.permissions.context import PermissionContext


def session_tools(
    options: RunOptions, cwd: Path, provider: ModelProvider, model_id: str, settings: Mapping[str, Any], usage: UsageTracker
) -> tuple[list[Tool], SearchBackend | None, SkillRegistry]:
    """The tools the main session offers (before ``--agent`` narrows them), WebSearch's backend and the skills.

    The built-in tools come sorted by name; WebSearch (when a backend exists), Skill (when there is a skill)
    and WorktreeMerge (when the settings opt in) join in that order; the caller's extra tools go last.
    """
    tools = builtin_tools(interactive=options.interactive)
    tools = [t for t in tools if t.is_enabled()]
    search_backend = web_search_backend(provider, model_id, settings, usage)
    if search_backend is not None:
        tools = sorted([*tools, WebSearchTool(search_backend)], key=lambda tool: tool.name)  # builtin_tools' order
    skills = load_skill_registry(
        cwd,
        plugin_dirs=[*options.plugin_dirs, *settings_plugin_paths(settings)],
        include_user=("user" in options.setting_sources),
        include_project=("project" in options.setting_sources),
    )
    if skills.skills:  # offered only when there is a skill to load
        from catui.skills.tool import SkillTool  # lazy (catui.lazy): skills

        tools = sorted([*tools, SkillTool(skills)], key=lambda tool: tool.name)  # builtin_tools' order
    if worktree_merge_allowed(settings):  # catui's own, off unless the user opts in (docs/beyond.md)
        tools = sorted([*tools, WorktreeMergeTool()], key=lambda tool: tool.name)
    tools.extend(options.extra_tools)
    return tools, search_backend, skills


def settings_plugin_paths(settings: Mapping[str, Any]) -> list[str]:
    """The plugin folders the settings name; the plugin loader (and YAML) loads only when there are some."""
    if not settings.get("plugins"):
        return []
    from catui.agents.plugins import plugin_paths  # lazy (catui.lazy): plugins

    return plugin_paths(settings)


def web_search_backend(
    provider: ModelProvider, model_id: str, settings: Mapping[str, Any], usage: UsageTracker
) -> SearchBackend | None:
    """WebSearch's backend: the API's server-side search on Anthropic, else a configured SearXNG endpoint."""
    if getattr(provider, "name", "") == "anthropic":
        return AnthropicServerSearch(provider, model_id, usage.add)
    url = searxng_url(settings)
    return SearxngSearch(url) if url is not None else None


def offers_search_tools(permissions: PermissionContext) -> bool:
    """Whether Glob and Grep survive the deny rules (a whole-tool deny removes a tool from the session)."""

    return not any(denies_tool_outright(rule, name) for rule in permissions.rules for name in ("Glob", "Grep"))


def hold_to_agent_tools(app: AgentApp, definition: AgentDefinition, mcp: McpManager | None) -> None:
    """Hold the main session to the ``--agent`` definition's tools, now and when MCP tools join."""
    session = app.session
    check_tools_left(definition, session.tools)  # the Agent tool is among them by now
    session.set_tools(keep_agent_tools(definition, session.tools))
    if mcp is not None:
        mcp.on_ready(lambda _ready: session.set_tools(keep_agent_tools(definition, session.tools)))
