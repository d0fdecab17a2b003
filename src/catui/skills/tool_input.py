"""The input model of :mod:`catui.skills.tool`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class SkillInput(ToolInput):
    skill: str = Field(description='The name of the skill to load, e.g. "pdf" or "my-plugin:review".')
    args: str | None = Field(default=None, description="Optional arguments for the skill.")
