"""The input model of :mod:`catui.subagents.teams.plan_approval`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class TeammateExitPlanModeInput(ToolInput):
    """The teammate's plan, in full."""

    plan: str = Field(description="The plan to be approved, in Markdown.")
