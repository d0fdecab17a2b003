"""The input model of :mod:`catui.tools.bash`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class BashInput(ToolInput):
    command: str = Field(description="The command to run.")
    timeout: int | None = Field(
        default=None,
        ge=0,
        description="Timeout in milliseconds (default 120000, max 600000; larger values are capped).",
    )
    description: str | None = Field(
        default=None,
        description="A short description of what the command does, in active voice (5-10 words), "
        'e.g. "List files in current directory" or "Install package dependencies".',
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Run the command in the background and return a task id at once; read its output "
        "later with TaskOutput.",
    )
