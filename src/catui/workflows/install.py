"""Offer the Workflow tool (and the workflow-authoring skill) to the main session where the profile wants it.

The current profile offers it; the 2.1.92 profile when the settings say ``"workflows": true``.
``CLAUDE_CODE_DISABLE_WORKFLOWS`` (or ``DISABLE_WORKFLOWS``) set to a true value turns it off in both.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from catui.config.flags import is_truthy

if TYPE_CHECKING:
    from catui.app.options import RunOptions
    from catui.config.compat import CompatProfile
    from catui.session.session import Session
    from catui.skills.registry import SkillRegistry
    from catui.subagents.install import SubagentSystem
    from catui.tasks.registry import TaskRegistry
    from catui.workflows.live import LiveWorkflows

WORKFLOWS_SETTING = "workflows"
DISABLE_ENV = ("CLAUDE_CODE_DISABLE_WORKFLOWS", "DISABLE_WORKFLOWS")
BUDGET_SETTING = "workflowBudgetUsd"
BUDGET_ENV = "CATUI_WORKFLOW_BUDGET_USD"


def workflows_enabled(current: bool, settings: Any, env: dict[str, str]) -> bool:
    """Whether the main session gets the Workflow tool."""
    if any(is_truthy(env.get(name)) for name in DISABLE_ENV):
        return False
    return current or (isinstance(settings, dict) and settings.get(WORKFLOWS_SETTING) is True)


def workflow_budget_usd(settings: Any, env: dict[str, str]) -> float | None:
    """The dollar budget of each Workflow-tool run: ``CATUI_WORKFLOW_BUDGET_USD``, else the
    ``workflowBudgetUsd`` setting, else none. It is the user's (the tool's input has no budget field, and a
    script's ``meta`` is the model's): as ``catui workflow run --budget``, no new agent starts once the run's
    agents have spent it. Raises ConfigurationError naming the variable or setting for a value that is not a
    number of dollars >= 0."""
    raw = env.get(BUDGET_ENV)
    if raw is not None and raw.strip():
        try:
            value: Any = float(raw.strip())
        except ValueError:
            value = raw
        return _dollars(value, f"{BUDGET_ENV}={raw!r}")
    if isinstance(settings, dict) and settings.get(BUDGET_SETTING) is not None:
        from catui.config.settings import setting_origin

        where = f"the {BUDGET_SETTING} setting{setting_origin(settings, BUDGET_SETTING)} ({settings[BUDGET_SETTING]!r})"
        return _dollars(settings[BUDGET_SETTING], where)
    return None


def _dollars(value: Any, where: str) -> float:
    from catui.errors import ConfigurationError

    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        raise ConfigurationError(f"{where} is not an amount of US dollars; set it to a number >= 0, e.g. 2.50, "
                                 "or remove it for no workflow budget")
    return float(value)


def install_workflows(session: Session, options: RunOptions, merged: Any, env: dict[str, str], compat: CompatProfile,
                      system: SubagentSystem | None, tasks: TaskRegistry | None,
                      skills: SkillRegistry | None) -> LiveWorkflows | None:
    """Add the Workflow tool and the built-in workflow-authoring skill to the main ``session``; returns the
    session's live workflow runs (the ``/workflows`` view's source), or None when workflows are off."""
    if system is None or tasks is None or not workflows_enabled(compat.current, merged, env):
        return None
    from catui.agents.plugins import plugin_paths  # lazy (catui.lazy): plugins and YAML
    from catui.skills.tool import SkillTool
    from catui.workflows.skill import WORKFLOW_AUTHORING_SKILL
    from catui.workflows.tool import WorkflowTool

    tool = WorkflowTool(runtime=lambda: system.runtime, tasks=tasks, cwd=options.cwd.resolve(),
                        session_id=lambda: session.session_id,
                        plugin_dirs=lambda: [*options.plugin_dirs, *plugin_paths(merged)],
                        current=compat.current, budget_usd=workflow_budget_usd(merged, env))
    tools = [t for t in session.tools if t.name != tool.name]
    if skills is not None:
        skills.skills.setdefault(WORKFLOW_AUTHORING_SKILL.name, WORKFLOW_AUTHORING_SKILL)
        loader = skills.loader
        if loader is not None:
            def with_builtin() -> SkillRegistry:
                fresh = loader()
                return dataclasses.replace(fresh, skills={WORKFLOW_AUTHORING_SKILL.name: WORKFLOW_AUTHORING_SKILL,
                                                          **fresh.skills})
            skills.loader = with_builtin
        if not any(t.name == SkillTool.name for t in tools):
            tools.append(SkillTool(skills))
    session.set_tools(sorted([*tools, tool], key=lambda t: t.name))
    return tool.live
