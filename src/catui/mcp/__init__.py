"""MCP servers through the official ``mcp`` SDK: configuration, connections, tools, sub-agent support.

Nothing here is imported unless MCP servers are configured, and the SDK
itself (slow to import) only once a connection starts. Entry points:
:func:`catui.mcp.install.install_mcp` (application wiring),
:class:`catui.mcp.manager.McpManager` (connections and tools) and
:mod:`catui.mcp.subagents` (what the sub-agent runtime asks). See docs/mcp.md.
"""
