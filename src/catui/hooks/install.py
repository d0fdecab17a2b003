"""Wiring hooks into an application: the main session's runner and the runners of sub-agents.

``install_hooks(app)`` reads the hooks of the app's settings, reports their
warnings with the other settings warnings, and gives the main session a
:class:`HookRunner` when any hook is configured (none configured: the session
keeps ``hooks=None`` and pays nothing). The runner is returned (and kept as
``app.services.hooks``); the application hands it to the sub-agent runtime, which
builds each child's runner from it with :func:`child_hooks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catui.hooks.config import HooksConfig, hooks_from_agent, hooks_from_settings
from catui.hooks.lifecycle import HookRunReport
from catui.hooks.runner import HookRunner


def install_hooks(app: Any, extra: HooksConfig | None = None, report_runs: HookRunReport | None = None) -> HookRunner:
    """Create the main session's runner from ``app.settings``; returns it (also in ``app.services.hooks``).

    ``extra`` hooks run after the settings' (those of the ``--agent`` definition). ``report_runs`` is told
    of every hook run (``include_hook_events``); sub-agents' runners inherit it.
    Calling it again returns the runner already installed.
    """
    existing = app.services.hooks
    if isinstance(existing, HookRunner):
        return existing
    config = hooks_from_settings(app.settings)
    if extra is not None:
        config = config.merged_with(extra)
    warnings = getattr(app.settings, "warnings", None)
    if isinstance(warnings, list):
        warnings.extend(config.warnings)
    session = app.session
    env = app.services.env
    runner = HookRunner(
        config,
        session_id=session.session_id,
        transcript_path=getattr(app, "transcript_path", None),
        cwd=Path(session.ctx.cwd),
        project_dir=Path(getattr(app, "project_root", session.ctx.project_root)),
        env=env,
        report_runs=report_runs,
    )
    runner.tool_aliases = lambda name: next((t.aliases for t in session.tools if t.name == name), ())
    app.services.hooks = runner
    if not config.is_empty:
        session.config.hooks = runner
    return runner


def child_hooks(
    parent_runner: HookRunner | None,
    definition: Any,
    agent_id: str,
    agent_type: str,
    *,
    cwd: Path | None = None,
    agent_transcript_path: Path | str | None = None,
    session_id: str = "",
    transcript_path: Path | str | None = None,
) -> HookRunner | None:
    """The runner for a sub-agent: the settings' hooks plus the definition's own, or None when there are none.

    ``parent_runner`` is the main session's runner (``RuntimeDeps.hooks``);
    without one, ``session_id`` / ``transcript_path`` / ``cwd`` describe the
    conversation. Hooks of plugin agents never arrive here (their loader drops them).
    """
    inherited = parent_runner.settings_config if parent_runner is not None else HooksConfig()
    own = hooks_from_agent(definition)
    config = inherited.merged_with(own) if own.events else inherited
    if config.is_empty:
        return None
    runner = _child_runner(parent_runner, config, inherited, agent_id, agent_type, cwd, agent_transcript_path,
                           session_id, transcript_path)
    runner.pending_warnings.extend(own.warnings)  # shown when the sub-agent starts
    if parent_runner is not None:
        runner.tool_aliases = parent_runner.tool_aliases
        runner.payload_extras = parent_runner.payload_extras
        runner.current_contract = parent_runner.current_contract
    return runner


def _child_runner(
    parent_runner: HookRunner | None,
    config: HooksConfig,
    inherited: HooksConfig,
    agent_id: str,
    agent_type: str,
    cwd: Path | None,
    agent_transcript_path: Path | str | None,
    session_id: str,
    transcript_path: Path | str | None,
) -> HookRunner:
    if parent_runner is not None:
        return HookRunner(
            config,
            session_id=parent_runner.session_id,
            transcript_path=parent_runner.transcript_path,
            cwd=Path(cwd) if cwd is not None else parent_runner.cwd,
            project_dir=parent_runner.project_dir,
            env=parent_runner.base_env,
            agent_id=agent_id,
            agent_type=agent_type,
            agent_transcript_path=agent_transcript_path,
            settings_config=inherited,
            report_runs=parent_runner.report_runs,
        )
    folder = Path(cwd) if cwd is not None else Path.cwd()
    return HookRunner(
        config,
        session_id=session_id,
        transcript_path=transcript_path,
        cwd=folder,
        agent_id=agent_id,
        agent_type=agent_type,
        agent_transcript_path=agent_transcript_path,
        settings_config=inherited,
    )


async def close_hooks(app: Any, reason: str = "other") -> None:
    """Run ``SessionEnd`` hooks (when the app closes) and wait for ``async`` hooks still running."""
    runner = app.services.hooks
    if isinstance(runner, HookRunner):
        if app.services.session_end_done:
            return  # SessionEnd runs once, whoever closes first
        app.services.session_end_done = True
        await runner.session_end(reason)
        await runner.wait_background()
