"""The up-front check of an ``agent({schema})`` call's JSON Schema.

A schema the agent's ``StructuredOutput`` tool could never be built from fails the call at once, before any
agent starts, with a message naming the problem and where it is in the schema; the script can catch it.
Without this check such an agent would run to its end and fail for want of a StructuredOutput call.

Two rules, as Claude Code applies them (observed in 2.1.332's ``agent({schema})``): the schema must be a valid
JSON Schema (checked against its ``$schema`` draft's meta-schema by the ``jsonschema`` library, 2020-12 when it
names none), and its root must declare ``type: "object"`` (a tool's input schema must be an object: the
Messages API refuses anything else).
"""

from __future__ import annotations

import functools
import json
from typing import Any

_FIX = "fix the schema and call agent() again"
_CACHED_MAX_CHARS = 64 * 1024
"""Longer schemas are checked each time rather than kept (the cache holds 256)."""


def agent_schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be an agent's output schema (one line naming the problem and the fix), or None."""
    if not isinstance(schema, dict):
        return f"agent({{schema}}): the schema must be a JSON Schema object, not {_kind(schema)}; {_FIX}"
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # not JSON (a Python caller's dict): checked as it is
        return _problem(schema)
    if len(text) > _CACHED_MAX_CHARS:
        return _problem(schema)
    try:
        return _problem_of_text(text)
    except RecursionError:  # JSON too deep to read back
        return _problem(schema)


@functools.lru_cache(maxsize=256)
def _problem_of_text(text: str) -> str | None:
    # A fan-out gives a thousand agents one schema: checking it costs ~2 ms, looking it up here microseconds.
    return _problem(json.loads(text))


def _problem(schema: dict[str, Any]) -> str | None:
    try:
        problem = _meta_schema_problem(schema)
    except RecursionError:  # the meta-schema check recurses a few frames per level: ~80 levels of properties pass
        return (f"agent({{schema}}): the schema nests too deeply to be checked; flatten it (nest fewer "
                f"properties/items inside each other) — {_FIX}")
    if problem is not None:
        return f"agent({{schema}}) received an invalid JSON Schema: {problem}; the agent was not started — {_FIX}"
    if schema.get("type") != "object":
        return ("agent({schema}) received an unusable JSON Schema: its root must declare "
                f"type: \"object\" (it declares {_declared(schema)}), because the agent answers through "
                "a tool whose input is an object; wrap an array or a single value in an object "
                f"property. The agent was not started — {_FIX}")
    return None


def _meta_schema_problem(schema: dict[str, Any]) -> str | None:
    """The most relevant way ``schema`` breaks its draft's meta-schema, with its place (``at $.x.y``), or None."""
    import jsonschema  # imported when a workflow runs, never at start-up
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for

    # A "$schema" that is not a string names no draft: the 2020-12 meta-schema then says what is wrong with it.
    named = isinstance(schema.get("$schema"), str)
    validator_class = validator_for(schema if named else {}, default=jsonschema.Draft202012Validator)
    error = best_match(validator_class(validator_class.META_SCHEMA).iter_errors(schema))
    if error is None:
        return None
    return f"{_one_line(error.message)} (at {_one_line(error.json_path)})"


def _one_line(text: str, limit: int = 300) -> str:
    # Property names are the script's own strings: a newline or other control character in one must not
    # break the one-line error (the fuzzing found a key "\n").
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _declared(schema: dict[str, Any]) -> str:
    if "type" not in schema:
        return "no type"
    declared = repr(schema["type"])
    return "type " + (declared if len(declared) <= 60 else declared[:60] + "…")
