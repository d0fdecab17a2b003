"""Agent definitions: the model, the built-in agents, the loaders and the registry (spec 4, 5, 14.2, 15).

- ``definition``: :class:`AgentDefinition` (immutable; snake_case and camelCase field names).
- ``builtin`` / ``builtin_prompts``: general-purpose, statusline-setup, Explore, Plan, catui-guide.
- ``frontmatter``, ``yaml12``: Claude Code's frontmatter rules on PyYAML read with YAML 1.2 rules.
- ``markdown``, ``plugins``, ``json_agents``: the loaders (Markdown files, plugin folders, JSON objects).
- ``registry``: :func:`load_agent_registry` → :class:`AgentRegistry` (``active``, ``all``,
  ``failed_files``, ``warnings``, ``get``, ``reload_if_changed``, ``version``).

Nothing is imported here, so ``import catui.agents.definition`` stays cheap.
"""
