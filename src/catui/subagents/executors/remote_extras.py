"""What a remote child needs beyond its built-in tools: the Bash sandbox, hooks and MCP servers of the caller.

All are plain data that travel in the :class:`~.remote_job.RemoteJob`:
the sandbox as its parsed settings (paths inside the caller's repository are
moved to the worker's checkout), the hooks as their configuration (command
hooks only: a Python callback given through the SDK cannot leave this
process, and the worker says so once), the MCP servers whose tools the child
has as their configurations (the worker starts the stdio ones whose command
exists there). The worker builds its own
:class:`~catui.sandbox.policy.BashSandbox`,
:class:`~catui.hooks.runner.HookRunner` and
:class:`~catui.mcp.manager.McpManager` from them.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from catui.hooks.config import CommandHook, HookMatcher, HooksConfig
from catui.hooks.runner import HookRunner
from catui.mcp.config import McpServerConfig, normalize_name
from catui.mcp.manager import McpManager
from catui.sandbox.config import SandboxSettings

MCP_START_TIMEOUT_S = 30.0
"""How long a worker waits for its MCP servers before the child starts (those not ready are left out)."""


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


def shippable_mcp_servers(manager: McpManager | None, tool_names: Iterable[str]) -> tuple[McpServerConfig, ...]:
    """The configurations of the caller's MCP servers that the child has tools of."""
    if manager is None:
        return ()
    names = tuple(tool_names)
    wanted = [connection.config for name, connection in manager.connections.items()
              if any(tool.startswith(f"mcp__{normalize_name(name)}__") for tool in names)]
    # Only stdio servers are started there: the others go as their name and kind, without URL headers (tokens).
    return tuple(config if config.transport == "stdio" else McpServerConfig(config.name, config.transport)
                 for config in wanted)


async def start_mcp_on_worker(
    configs: Iterable[McpServerConfig], *, cwd: Path, env: Mapping[str, str], notice: Callable[[str], None],
    timeout_s: float = MCP_START_TIMEOUT_S,
) -> McpManager | None:
    """Start the stdio servers whose command exists here; each other one is named in a notice. None: none started."""
    usable: dict[str, McpServerConfig] = {}
    for config in configs:
        if config.transport != "stdio":
            notice(f"MCP server '{config.name}' ({config.transport}) is not connected from the Ray worker (only "
                   "stdio servers are started there); its tools are left out")
        elif not command_exists(config.command, cwd, env):
            notice(f"MCP server '{config.name}' is not started on the Ray worker: its command '{config.command}' "
                   "is not found there (install it on the nodes); its tools are left out")
        else:
            usable[config.name] = config
    if not usable:
        return None
    manager = McpManager(usable, cwd=cwd, env=env)
    manager.on_warning = notice  # a server that fails to start is named, and its tools are left out
    await manager.wait_for(timeout_s=timeout_s)
    return manager


def command_exists(command: str, cwd: Path, env: Mapping[str, str]) -> bool:
    """Whether ``command`` can be started here: a path (relative to ``cwd``) or a name on ``PATH``."""
    if not command:
        return False
    if "/" in command:
        return (cwd / command).is_file()
    return shutil.which(command, path=env.get("PATH")) is not None
