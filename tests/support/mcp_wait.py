"""Environment for tests whose first model request must already offer an MCP server's tools.

Before its first request catui waits for the MCP servers at most ``CATUI_MCP_TIMEOUT_MS`` (5 s by default, as
Claude Code's print mode waits 5 s and then goes on without the late servers), and each server may take
``MCP_TIMEOUT`` (30 s) to start. A loaded two-core CI machine can take longer than 5 s to start a Python MCP
server, and the test would then see a first request without its tools. The wait ends as soon as every server
has connected or failed, so a generous limit costs nothing when the machine is quick.
"""

from __future__ import annotations

MCP_WAIT_ENV: dict[str, str] = {"CATUI_MCP_TIMEOUT_MS": "120000", "MCP_TIMEOUT": "120000"}
"""Two minutes for the main session's wait and for each server's start."""
