"""Workflows: many agents as one program (a Claude Code ``Workflow`` script, or Python). See docs/workflows.md."""

from catui.workflows.api import (
           agent,
           log,
           parallel,
           phase,
           pipeline,
           run_workflow,
           run_workflow_async,
           workflow,
)
from catui.workflows.runner import AgentFailed, BudgetSpent

__all__ = ["AgentFailed", "BudgetSpent", "agent", "log", "parallel", "phase", "pipeline", "run_workflow",
           "run_workflow_async", "workflow"]
