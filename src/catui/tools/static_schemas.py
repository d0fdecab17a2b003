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
    "catui.mcp.resources_input",
    "catui.skills.tool_input",
    "catui.subagents.agent_tool_input",
    "catui.subagents.messaging_current_input",
    "catui.subagents.send_message_input",
    "catui.subagents.teams.plan_approval_input",
    "catui.subagents.teams.tools_input",
    "catui.tools.ask_user_question_input",
    "catui.tools.bash_input",
    "catui.tools.cron_input",
    "catui.tools.edit_input",
    "catui.tools.glob_input",
    "catui.tools.grep_input",
    "catui.tools.notebook_edit_input",
    "catui.tools.plan_mode_input",
    "catui.tools.read_input",
    "catui.tools.task_output_input",
    "catui.tools.task_stop_input",
    "catui.tools.todo_write_input",
    "catui.tools.tool_search_input",
    "catui.tools.web_fetch_input",
    "catui.tools.web_search_input",
    "catui.tools.worktree_merge_input",
    "catui.tools.worktree_session_input",
    "catui.tools.write_input",
)
"""Modules whose ``ToolInput`` subclasses have a stored schema (models made at run time, MCP's and the SDK's
``@tool`` ones, are generated when used)."""

_loaded: dict[str, dict[str, Any]] | None = None


def model_key(model: type) -> str:
    """The key of ``model`` in the stored schemas: ``module:QualName``."""
    return f"{model.__module__}:{model.__qualname__}"


def stored_schema(model: type) -> dict[str, Any] | None:
    """The stored schema of ``model`` (shared: callers copy it), or None when it has none."""
    return stored_schema_by_key(model_key(model))


def stored_schema_by_key(key: str) -> dict[str, Any] | None:
    """The stored schema keyed ``module:QualName`` (shared: callers copy it), or None when there is none."""
    global _loaded
    if _loaded is None:
        _loaded = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return _loaded.get(key)
