"""An MCP server with a few tools, run as a stdio subprocess by the MCP tests.

Environment: ``MCP_TEST_START_DELAY`` (seconds to sleep before serving, to play
a slow server), ``MCP_TEST_NAME`` (the server's name), ``MCP_TEST_MARK`` (a
value the ``env_value`` tool reports, to check the configured env arrives), ``MCP_TEST_NO_RESOURCES``
(set: offer no resource; otherwise ``notes://readme``).
"""

from __future__ import annotations

import base64
import os
import sys
import time

if __name__ == "__main__" and os.environ.get("MCP_TEST_START_DELAY"):
    time.sleep(float(os.environ["MCP_TEST_START_DELAY"]))  # before the slow imports, so the delay is the delay

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def build_server(name: str = "tools") -> MCPServer:
    server = MCPServer(name, instructions="Use echo to repeat things back.")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool(name="fail.hard")
    def fail_hard(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def picture() -> list[TextContent | ImageContent]:
        """A caption and a tiny image."""
        return [
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=base64.b64encode(PIXEL_PNG).decode(), mime_type="image/png"),
        ]

    @server.tool()
    def env_value() -> str:
        """The value of MCP_TEST_MARK in the server's environment."""
        return os.environ.get("MCP_TEST_MARK", "<unset>")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @server.tool()
    async def wait(seconds: float) -> str:
        """Sleep, then answer (for interruption tests)."""
        import anyio

        await anyio.sleep(seconds)
        return "waited"

    if not os.environ.get("MCP_TEST_NO_RESOURCES"):

        @server.resource("notes://readme", name="readme", description="The project notes.", mime_type="text/plain")
        def readme() -> str:
            return "Remember the milk."

    @server.tool()
    def crash() -> str:
        """Kill the server process mid-call."""
        sys.stderr.write("about to crash on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    return server


if __name__ == "__main__":
    build_server(os.environ.get("MCP_TEST_NAME", "tools")).run()
