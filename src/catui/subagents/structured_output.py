"""Typed results: the ``StructuredOutput`` tool of an agent whose definition has an ``outputSchema``.

The child is told (in its system prompt) to finish by calling ``StructuredOutput`` with an object
matching the schema. Each call is validated with ``jsonschema``: a bad one is an error tool_result
the child can fix, up to :data:`MAX_ATTEMPTS` bad calls; then the child is stopped and the parent's
result says why. :mod:`.outcome` reads the captured object into the parent's result.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import ConfigDict

from catui.messages import Block
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
MAX_ATTEMPTS = 3
"""How many calls that do not match the schema a child may make before it is stopped."""


class StructuredOutputInput(ToolInput):
    """Any object: the schema is checked by jsonschema in :meth:`StructuredOutputTool.call`, not by pydantic."""

    model_config = ConfigDict(extra="allow")


def output_instructions(schema: dict[str, Any]) -> Block:
    """The system-prompt block that tells the child how to hand its result back."""
    return {"type": "text", "text": (
        "Your result is read by a program, not a person. When your work is done, call the "
        f"{STRUCTURED_OUTPUT_TOOL} tool exactly once with an object that matches its input schema; that "
        "object is your answer, so put everything the caller needs in it. If the call is rejected, read the "
        f"error, fix the object and call {STRUCTURED_OUTPUT_TOOL} again. After a call that is accepted, stop: "
        "do not call other tools and do not repeat the result as text.\n\nThe schema:\n"
        + json.dumps(schema, indent=2)
    )}


class StructuredOutputTool(Tool):
    """Records one object that matches ``schema`` (one tool instance per child run)."""

    name: ClassVar[str] = STRUCTURED_OUTPUT_TOOL
    input_model: ClassVar[type[ToolInput]] = StructuredOutputInput
    read_only: ClassVar[bool] = True  # it only hands data back: never worth a permission prompt

    def __init__(self, schema: dict[str, Any]) -> None:
        # Imported here: only agents with an outputSchema need jsonschema (start-up stays fast).
        import jsonschema  # type: ignore[import-untyped,unused-ignore]

        self.schema = schema
        self._validator = jsonschema.validators.validator_for(schema)(schema)
        self.output: dict[str, Any] | None = None
        """The accepted object, once a call matched the schema."""
        self.bad_calls = 0
        self.last_error: str | None = None

    @property
    def description(self) -> str:
        return ("Hand your final result back as a structured object matching the input schema. "
                "Call it once, when your work is done.")

    def input_schema(self) -> dict[str, Any]:
        return self.schema

    @property
    def gave_up(self) -> bool:
        """True when the child made :data:`MAX_ATTEMPTS` bad calls without a good one."""
        return self.output is None and self.bad_calls >= MAX_ATTEMPTS

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        value = args.model_dump(by_alias=True) if isinstance(args, ToolInput) else dict(args)
        if self.output is not None:
            return ToolResult("The structured output was already recorded; stop now.", is_error=True)
        problems = sorted(self._validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if not problems:
            self.output = value
            return ToolResult("Structured output recorded. Your work is done; stop now.")
        self.bad_calls += 1
        self.last_error = "; ".join(_describe(p) for p in problems[:5])
        if self.gave_up:
            # No more tries: stop the child now; its parent's result says why.
            ctx.abort.set()
            return ToolResult(f"The object does not match the schema: {self.last_error}. "
                              f"That was the last of {MAX_ATTEMPTS} attempts.", is_error=True)
        left = MAX_ATTEMPTS - self.bad_calls
        return ToolResult(
            f"The object does not match the schema: {self.last_error}. Fix it and call "
            f"{STRUCTURED_OUTPUT_TOOL} again ({left} attempt{'s' if left != 1 else ''} left).",
            is_error=True,
        )


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"at '{where}': {error.message}" if where else str(error.message)


def find_structured_output(tools: list[Tool]) -> StructuredOutputTool | None:
    """The run's StructuredOutput tool, when its agent has an ``outputSchema``."""
    for tool in tools:
        if isinstance(tool, StructuredOutputTool):
            return tool
    return None
