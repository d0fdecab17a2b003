"""The input models of :mod:`catui.tools.plan_mode`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from catui.tools.tool_input import ToolInput


class AllowedPrompt(BaseModel):
    """One kind of shell command the plan needs: ``{"tool": "Bash", "prompt": "run tests"}``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    # Sent as a one-value enum, as Claude Code's schema has it (pydantic would write "const").
    tool: Annotated[
        Literal["Bash"],
        WithJsonSchema({"type": "string", "enum": ["Bash"], "description": "The tool the prompt applies to."}),
    ]
    prompt: str = Field(description='What the commands do, e.g. "run tests" or "install dependencies".')


class EnterPlanModeInput(ToolInput):
    pass


class ExitPlanModeInput(ToolInput):
    allowedPrompts: list[AllowedPrompt] | None = Field(
        default=None,
        description="Kinds of shell commands the plan will need, described by what they do, not as commands.",
    )
