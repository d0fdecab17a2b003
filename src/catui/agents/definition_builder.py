"""``build_definition``: an AgentDefinition from frontmatter-like data (plugin files, ``--agents`` JSON).

The field values go through ``coerce_fields`` (Claude Code's reading of each
field); when they pass the fast check the definition is built without a second
validation pass. A field error goes to the caller's ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catui.agents.checked_fields import fields_are_checked
from catui.agents.definition import AgentDefinition, construct_checked
from catui.agents.field_values import AGENT_SOURCES, AgentSource, agent_name_problem
from catui.agents.fields import KNOWN_KEYS, coerce_fields, extra_fields
from catui.errors import ConfigurationError


def build_definition(
    data: dict[str, Any],
    *,
    agent_type: str,
    description: str,
    prompt: str,
    source: AgentSource,
    base_dir: str,
    filename: str | None,
    warn: Callable[[str], None],
    on_error: Callable[[str], None],
    plugin_name: str | None = None,
    name_checked: bool = False,
    schema_dir: str | None = None,
) -> AgentDefinition | None:
    """An AgentDefinition from frontmatter-like ``data``; a field error goes to ``on_error``.

    ``name_checked`` says the caller already ran ``agent_name_problem`` on ``agent_type``;
    ``schema_dir`` is where a relative ``outputSchema`` path is read from (default: ``base_dir``).
    """
    try:
        fields = coerce_fields(data, warn, plugin=source == "plugin", schema_dir=schema_dir or base_dir or None)
    except ConfigurationError as exc:
        on_error(f"agent '{agent_type}': {exc}")
        return None
    # Only coerce_fields' values need the strict check: the ones added below are built right here.
    checked = fields_are_checked(fields)
    extras = extra_fields(data, warn) if not KNOWN_KEYS.issuperset(data) else {}
    fields.update(
        agent_type=agent_type,
        description=description,
        prompt=prompt,
        source=source,
        base_dir=base_dir,
        filename=filename,
        plugin_name=plugin_name,
        extra_fields=extras,
    )
    if (
        checked
        and type(agent_type) is str
        and (name_checked or agent_name_problem(agent_type) is None)
        and type(description) is str
        and type(prompt) is str
        and type(base_dir) is str
        and (filename is None or type(filename) is str)
        and (plugin_name is None or type(plugin_name) is str)
        and source in AGENT_SOURCES
    ):
        return construct_checked(fields)
    try:
        # coerce_fields has checked and normalised every value; skip pydantic's second pass.
        return AgentDefinition.from_checked_dict(fields)
    except ConfigurationError as exc:
        on_error(str(exc))
        return None
