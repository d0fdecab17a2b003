"""The input schemas of catui's own tools, kept as JSON so that start-up builds no pydantic model.

Every request sends every tool's JSON schema, so a run needs all of them before its first request,
while it validates the arguments of only the tools the model calls. Generating a schema makes
pydantic build the model's validator and serializer (about 3 ms a tool, some 60 ms for the default
tool set), so the schemas of the models defined in :data:`SCHEMA_MODULES` are stored in
``input_schemas.json`` next to this module, keyed ``module:QualName``; models are built on first
validation (``ToolInput``'s ``defer_build``). ``tests/test_static_schemas.py`` fails when the file
and the models disagree (:mod:`catui.tools.schema_store` generates it); after changing an input model, regenerate it with::

    .venv/bin/python -m catui.tools.schema_store --write
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMAS_FILE = Path(__file__).with_name("input_schemas.json")

SCHEMA_MODULES: tuple[str, ...] = (
    "catui.mcp.resources",
    "catui.skills.tool",
    "catui.subagents.agent_tool",
    "catui.subagents.messaging_current",
    "catui.subagents.send_message",
    "catui.subagents.teams.plan_approval",
    "catui.subagents.teams.tools",
    "catui.tools.ask_user_question",
    "catui.tools.bash",
    "catui.tools.cron",
    "catui.tools.edit",
    "catui.tools.glob",
    "catui.tools.grep",
    "catui.tools.notebook_edit",
    "catui.tools.plan_mode",
    "catui.tools.read",
    "catui.tools.task_output",
    "catui.tools.task_stop",
    "catui.tools.todo_write",
    "catui.tools.tool_search",
    "catui.tools.web_fetch",
    "catui.tools.web_search",
    "catui.tools.worktree_merge",
    "catui.tools.worktree_session",
    "catui.tools.write",
)
"""Modules whose ``ToolInput`` subclasses have a stored schema (models made at run time, MCP's and the SDK's
``@tool`` ones, are generated when used)."""

_loaded: dict[str, dict[str, Any]] | None = None


def model_key(model: type) -> str:
    """The key of ``model`` in the stored schemas: ``module:QualName``."""
    return f"{model.__module__}:{model.__qualname__}"


def stored_schema(model: type) -> dict[str, Any] | None:
    """The stored schema of ``model`` (shared: callers copy it), or None when it has none."""
    global _loaded
    if _loaded is None:
        _loaded = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return _loaded.get(model_key(model))
