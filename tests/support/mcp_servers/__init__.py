"""Small real MCP servers written with the official SDK, for the MCP tests.

``tools_server.py`` and ``broken_server.py`` run as stdio subprocesses;
``http_server.py`` serves the same tools over streamable HTTP on 127.0.0.1
from a background thread.
"""
