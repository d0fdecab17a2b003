"""What a remote child needs beyond its built-in tools: the Bash sandbox and the hooks of the caller's settings.

Both are plain data that travel in the :class:`~.remote_job.RemoteJob`:
the sandbox as its parsed settings (paths inside the caller's repository are
moved to the worker's checkout), the hooks as their configuration (command
hooks only: a Python callback given through the SDK cannot leave this
process, and the worker says so once). The worker builds its own
:class:`~catui.sandbox.policy.BashSandbox` and
:class:`~catui.hooks.runner.HookRunner` from them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from catui.hooks.config import CommandHook, HookMatcher, HooksConfig
from catui.hooks.runner import HookRunner
from catui.sandbox.config import SandboxSettings


@dataclasses.dataclass(frozen=True)
class ShippedHooks:
    """The command hooks a child runs, as the worker rebuilds its runner."""

    config: HooksConfig
    started: bool
    """SubagentStart already ran where the child began (a child moved mid-run): not run again."""
    dropped: tuple[str, ...] = ()
    """Callback hooks that could not travel (named in a warning on the worker)."""


def shippable_hooks(runner: HookRunner | None) -> ShippedHooks | None:
    """The command hooks of a child's runner (None when it has none)."""
    if runner is None:
        return None
    events: dict[str, list[HookMatcher]] = {}
    dropped: list[str] = []
    for event, groups in runner.config.events.items():
        for group in groups:
            commands = tuple(hook for hook in group.hooks if isinstance(hook, CommandHook))
            dropped.extend(f"{event}: {hook.command}" for hook in group.hooks if not isinstance(hook, CommandHook))
            if commands:
                events.setdefault(event, []).append(dataclasses.replace(group, hooks=commands))
    if not events and not dropped:
        return None
    return ShippedHooks(HooksConfig(events), started=runner.started, dropped=tuple(dropped))


def worker_hook_runner(
    shipped: ShippedHooks, *, session_id: str, cwd: Path, checkout: Path, env: dict[str, str],
    agent_id: str, agent_type: str,
) -> HookRunner | None:
    """The child's runner on the worker (None when only callbacks were configured)."""
    if shipped.config.is_empty:
        return None
    runner = HookRunner(shipped.config, session_id=session_id, transcript_path=None, cwd=cwd,
                        project_dir=checkout, env=env, agent_id=agent_id, agent_type=agent_type)
    runner.started = shipped.started
    return runner


def sandbox_on_worker(settings: SandboxSettings, caller_root: Path, checkout: Path) -> SandboxSettings:
    """``settings`` with paths inside the caller's repository moved into the worker's checkout."""

    def moved(paths: tuple[Path, ...]) -> tuple[Path, ...]:
        out = []
        for path in paths:
            try:
                out.append(checkout / path.relative_to(caller_root))
            except ValueError:
                out.append(path)  # outside the repository: the same path on the worker, if it exists there
        return tuple(out)

    return dataclasses.replace(settings, allow_write=moved(settings.allow_write), deny_write=moved(settings.deny_write))
