"""Wiring hooks into an application: the main session's runner and the runners of sub-agents.

:func:`install_hooks` reads the hooks of the settings, reports their warnings
with the other settings warnings, and returns the main session's
:class:`HookRunner`; ``catui.app.build`` gives it to the session when any hook is
configured (none configured: the session keeps ``hooks=None`` and pays nothing),
keeps it in ``AppServices.hooks`` and hands it to the sub-agent runtime, which
builds each child's runner from it with :func:`child_hooks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from catui.config.settings import Settings
from catui.hooks.config import HooksConfig, hooks_from_agent, hooks_from_settings
from catui.hooks.lifecycle import HookRunReport
from catui.hooks.runner import HookRunner

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition


def install_hooks(
    settings: Settings,
    *,
    session_id: str,
    transcript_path: Path | None,
    cwd: Path,
    project_root: Path,
    env: Mapping[str, str],
    tool_aliases: Callable[[str], Sequence[str]],
    extra: HooksConfig | None = None,
    report_runs: HookRunReport | None = None,
) -> HookRunner:
    """The main session's runner, from the hooks of ``settings`` (their warnings join ``settings.warnings``).

    Built before the main session, which takes it when any hook is configured (``runner.config.is_empty``
    says). ``tool_aliases`` gives a tool's other names among the session's tools (a ``Task`` matcher catches
    the Agent tool). ``extra`` hooks run after the settings' (those of the ``--agent`` definition).
    ``report_runs`` is told of every hook run (``include_hook_events``); sub-agents' runners inherit it.
    """
    config = hooks_from_settings(settings)
    if extra is not None:
        config = config.merged_with(extra)
    settings.warnings.extend(config.warnings)
    runner = HookRunner(
        config,
        session_id=session_id,
        transcript_path=transcript_path,
        cwd=Path(cwd),
        project_dir=Path(project_root),
        env=env,
        report_runs=report_runs,
    )
    runner.tool_aliases = tool_aliases
    return runner


def child_hooks(
    parent_runner: HookRunner | None,
    definition: AgentDefinition,
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


async def close_hooks(runner: HookRunner | None, reason: str = "other") -> None:
    """Run ``SessionEnd`` hooks (when the app closes) and wait for ``async`` hooks still running.

    The application calls it once, whoever closes it first."""
    if runner is not None:
        await runner.session_end(reason)
        await runner.wait_background()
