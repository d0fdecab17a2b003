"""The stream-json protocol: ``--output-format stream-json`` lines, ``--input-format stream-json`` input,
and the control requests exchanged with the program driving catui (permissions, hooks, SDK MCP servers)."""
