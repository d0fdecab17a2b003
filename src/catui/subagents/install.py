"""Wiring the sub-agent system into an application: the Agent tool and the runtime behind it.

``catui.app.build_app`` calls :func:`install_subagents` once the main session
exists. Later layers (background agents, fork) extend the runtime they find
in ``app.services["subagents"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catui.paths import sessions_dir
from catui.subagents.agent_tool import AgentTool
from catui.subagents.runtime import RuntimeDeps, SubagentRuntime
from catui.telemetry.events import Telemetry


def install_subagents(app: Any) -> SubagentRuntime:
    """Add the Agent tool to the main session (tools stay sorted by name) and register the runtime.

    The runtime is put in ``app.services["subagents"]`` and in the main
    session's ``ctx.services["subagents"]``; the session itself goes in
    ``ctx.services["session"]`` so that a spawn knows its parent.
    """
    session = app.session
    settings = getattr(app.settings, "merged", app.settings) or {}
    env = dict(app.services.get("env") or {})
    write_transcripts = session.config.transcript is not None
    deps = RuntimeDeps(
        registry=app.registry,
        settings=settings,
        env=env,
        project_root=Path(app.project_root),
        sessions_dir=sessions_dir(Path(app.options.cwd).resolve()) if write_transcripts else None,
        parent_resolved=app.services.get("resolved_model"),
        telemetry=Telemetry.from_settings(settings, env),
        # Without the user and project setting sources (an SDK choice) no CLAUDE.md / CATUI.md is read.
        load_project_memory=bool(set(getattr(app.options, "setting_sources", ("project",))) & {"user", "project"}),
    )
    runtime = SubagentRuntime(deps)
    session.ctx.services["subagents"] = runtime
    session.ctx.services["session"] = session
    app.services["subagents"] = runtime
    if not any(t.name == AgentTool.name for t in session.tools):
        from catui.config.flags import fork_subagent_enabled

        tool = AgentTool(app.registry, env=env, permissions=lambda: session.ctx.permissions,
                         fork_enabled=fork_subagent_enabled(settings, env))
        tools = [*session.tools, tool]
        session.set_tools(sorted(tools, key=lambda t: t.name))
    _install_background(app, runtime, settings, env)
    from catui.subagents.fork import install_fork

    install_fork(runtime, settings, env)  # only when the fork switch is on
    return runtime


def _install_background(app: Any, runtime: SubagentRuntime, settings: Any, env: dict[str, str]) -> None:
    """Background agents, auto-backgrounding and (when offered) SendMessage; see subagents/background.py."""
    from catui.config.flags import agent_teams_enabled, send_message_enabled
    from catui.subagents.background import install_background
    from catui.subagents.send_message import SendMessageTool

    if install_background(app, runtime) is None:
        return
    session = app.session
    offered = agent_teams_enabled(env) or send_message_enabled(settings, env)
    if offered and not any(t.name == SendMessageTool.name for t in session.tools):
        session.set_tools(sorted([*session.tools, SendMessageTool()], key=lambda t: t.name))
