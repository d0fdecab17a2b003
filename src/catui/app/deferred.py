"""Deferred tools for the main session (catui.tools.tool_search), by compatibility profile.

The current contract defers every tool outside the short list from the start;
the 2.1.92 profile, when MCP servers are configured, defers MCP tools once their
schemas would take more than a share of the context window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.session.context_window import table_context_window

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.tools.tool_search import Mode


def install_deferred_tools(app: AgentApp) -> None:
    """Give the main session a :class:`DeferredToolView` and the ToolSearch tool where the profile wants them."""
    session = app.session
    mode: Mode
    if app.services.compat.current:
        mode = "current"
    elif app.services.mcp is not None:
        mode = "auto"
    else:
        return
    # lazy (catui.lazy): the 2.1.92 profile without MCP servers (the default) defers no tool
    from catui.tools.tool_search import DeferredToolView, ToolSearchTool, auto_share

    policy = session.config.context_policy

    def window() -> int:
        model = session.config.model
        return policy.window(model) if policy is not None else table_context_window(model)

    view = DeferredToolView(mode, context_window=window, share=auto_share(app.services.env))
    session.set_tool_view(view)
    if not any(t.name == ToolSearchTool.name for t in session.tools):
        tool = ToolSearchTool(view, lambda: session.tools)
        session.set_tools(sorted([*session.tools, tool], key=lambda t: t.name))
