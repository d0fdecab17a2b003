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


def workflows_enabled(current: bool, settings: Any, env: dict[str, str]) -> bool:
    """Whether the main session gets the Workflow tool."""
    if any(is_truthy(env.get(name)) for name in DISABLE_ENV):
        return False
    return current or (isinstance(settings, dict) and settings.get(WORKFLOWS_SETTING) is True)


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
                        current=compat.current)
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
