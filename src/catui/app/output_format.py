"""``output_format={"type": "json_schema", "schema": …}``: the main agent's answer as a validated object.

The main agent gets the same ``StructuredOutput`` tool a sub-agent with an
``outputSchema`` gets (:mod:`catui.subagents.structured_output`): each call is
checked against the schema, a bad one is an error result the model can fix.
The accepted object becomes ``ResultMessage.structured_output``; a run that
ends without one is an error result saying why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from catui.subagents.structured_output import StructuredOutputTool

    class RunResult(DataclassInstance, Protocol):
        """A run's final result as a front end reports it: the SDK's ``ResultMessage``, the CLI's ``ResultEvent``
        (dataclasses both; :meth:`StructuredResult.finish` copies one with changed fields)."""

        @property
        def is_error(self) -> bool: ...


MAX_RETRIES_SUBTYPE = "error_max_structured_output_retries"

_Result = TypeVar("_Result", bound="RunResult")


def output_schema_from(value: Any, where: str = "CatuiOptions.output_format") -> dict[str, Any] | None:
    """The JSON schema of ``output_format``, checked; None when no format was asked for.

    ``where`` names the option in error messages (the CLI's ``--json-schema`` passes its own).
    """
    if value is None:
        return None
    if not isinstance(value, Mapping) or value.get("type") != "json_schema" or not isinstance(
        value.get("schema"), Mapping
    ):
        raise ConfigurationError(
            f'{where} must be {{"type": "json_schema", "schema": {{...}}}}, '
            f"not {json.dumps(value, default=str)[:200]}"
        )
    schema = dict(value["schema"])
    if schema.get("type", "object") != "object":
        raise ConfigurationError(
            f"{where}: the schema's type is {schema.get('type')!r}; catui needs an object "
            'schema ({"type": "object", "properties": {...}}): wrap other values in a property'
        )
    # Imported here: only runs with an output_format need jsonschema (start-up stays fast).
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigurationError(f"{where}: the schema is not valid JSON Schema: {exc.message}") from None
    return schema


class StructuredResult:
    """The main agent's StructuredOutput tool across the prompts of one client."""

    def __init__(self, schema: dict[str, Any]) -> None:
        from catui.subagents.structured_output import StructuredOutputTool, output_instructions

        self.tool: StructuredOutputTool = StructuredOutputTool(schema)
        self.instructions: str = str(output_instructions(schema)["text"])

    def start_turn(self) -> None:
        """Forget the previous prompt's object: each prompt hands back its own."""
        self.tool.output = None
        self.tool.bad_calls = 0
        self.tool.last_error = None

    def finish(self, result: _Result, *, required: bool = True) -> _Result:
        """``result`` (an SDK ResultMessage or the CLI's ResultEvent) with the accepted object, or (when
        ``required``) as an error when the run ended without one."""
        tool = self.tool
        changes: dict[str, Any]
        if tool.output is not None:
            changes = {"structured_output": tool.output}
        elif tool.gave_up:
            text = f"The structured output did not match the schema after {tool.bad_calls} attempts: {tool.last_error}"
            changes = {"subtype": MAX_RETRIES_SUBTYPE, "is_error": True, "result": text, "errors": [text]}
        elif result.is_error or not required:
            return result
        else:
            text = "The agent finished without handing back the structured output (it never called StructuredOutput)."
            changes = {"subtype": "error_during_execution", "is_error": True, "errors": [text]}
        if not hasattr(result, "errors"):
            # The CLI's ResultEvent has no list of errors apart from the result text: the text says why.
            changes.pop("errors", None)
            if changes.get("is_error"):
                changes["result"] = text
        return replace(result, **changes)
