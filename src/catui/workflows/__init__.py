"""Workflows: many agents as one program (a Claude Code ``Workflow`` script, or Python). See docs/workflows.md.

The public names resolve on first use: the application imports :mod:`catui.workflows.install` on every run to
decide whether the Workflow tool is offered, and that must not load the engine or the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.lazy import lazy_exports

if TYPE_CHECKING:
    from catui.workflows.api import (
        agent,
        log,
        parallel,
        phase,
        pipeline,
        run_workflow,
        run_workflow_async,
        sub_workflow,
        workflow,
    )
    from catui.workflows.runner import AgentFailed, BudgetSpent

# lazy (catui.lazy): importing one submodule (install) must not import the runner
__getattr__ = lazy_exports(__name__, {
    "agent": "catui.workflows.api",
    "log": "catui.workflows.api",
    "parallel": "catui.workflows.api",
    "phase": "catui.workflows.api",
    "pipeline": "catui.workflows.api",
    "run_workflow": "catui.workflows.api",
    "run_workflow_async": "catui.workflows.api",
    "sub_workflow": "catui.workflows.api",
    "workflow": "catui.workflows.api",
    "AgentFailed": "catui.workflows.runner",
    "BudgetSpent": "catui.workflows.runner",
})

__all__ = ["AgentFailed", "BudgetSpent", "agent", "log", "parallel", "phase", "pipeline", "run_workflow",
           "run_workflow_async", "sub_workflow", "workflow"]
