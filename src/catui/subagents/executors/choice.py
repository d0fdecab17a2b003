"""Which executor runs sub-agents: the SDK option, then ``CATUI_EXECUTOR``, then the ``executor`` setting.

``in-process`` (the default) runs every child on this event loop; ``ray`` runs
background children on a Ray cluster (``RAY_ADDRESS``, or a local one started
on first use) and needs the ``catui[ray]`` extra. Ray is imported only here,
only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catui.config.settings import setting_origin
from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from catui.models.resolve import ResolvedModel
    from catui.subagents.executors import AgentExecutor
    from catui.subagents.worktrees import WorktreeLeases

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager

EXECUTORS = ("in-process", "ray")
ENV_NAME = "CATUI_EXECUTOR"
RETRIES_ENV = "CATUI_RAY_MAX_RETRIES"


def executor_name(option: str | None, settings: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The chosen executor's name. Raises ConfigurationError naming where a bad value came from."""
    for value, where in ((option, "the executor option"), (env.get(ENV_NAME), ENV_NAME),
                         (settings.get("executor"), f"settings key `executor`{setting_origin(settings, 'executor')}")):
        if value is None or value == "":
            continue
        name = str(value).strip().lower()
        if name not in EXECUTORS:
            raise ConfigurationError(
                f"{where} is {value!r}; use one of: {', '.join(EXECUTORS)} (in-process is the default)"
            )
        return name
    return "in-process"


@dataclass(frozen=True)
class RayOptions:
    """The ``ray`` settings object: ``maxRetries`` (or ``CATUI_RAY_MAX_RETRIES``), ``hosts``, ``cpusPerHost``."""

    max_retries: int = 0
    hosts: int | None = None
    """How many host actors (worker processes) run agents; None: two per live node."""
    cpus_per_host: float = 0.5


def ray_options(settings: Mapping[str, Any], env: Mapping[str, str]) -> RayOptions:
    """The Ray executor's options. Raises ConfigurationError naming the bad key and a valid example."""
    section = settings.get("ray") or {}
    if not isinstance(section, Mapping):
        raise ConfigurationError('settings key `ray` must be an object such as {"maxRetries": 1, "hosts": 4}')
    unknown = sorted(set(section) - {"maxRetries", "hosts", "cpusPerHost"})
    if unknown:
        raise ConfigurationError(f"settings key `ray.{unknown[0]}` is unknown; keys are maxRetries, hosts, cpusPerHost")
    values = {"maxRetries": env.get(RETRIES_ENV) or section.get("maxRetries", 0),
              "hosts": section.get("hosts"), "cpusPerHost": section.get("cpusPerHost", 0.5)}
    where = {"maxRetries": RETRIES_ENV if env.get(RETRIES_ENV) else "settings key `ray.maxRetries`",
             "hosts": "settings key `ray.hosts`", "cpusPerHost": "settings key `ray.cpusPerHost`"}
    parsed: dict[str, float | None] = {}
    for key, value in values.items():
        if value is None:
            parsed[key] = None
            continue
        try:
            number = float(value) if key == "cpusPerHost" else int(value)
        except (TypeError, ValueError):
            number = -1
        if number < (0 if key == "maxRetries" else 0.01) or isinstance(value, bool):
            smallest = "0 or more" if key == "maxRetries" else "above 0"
            raise ConfigurationError(f"{where[key]} is {value!r}; it must be a number {smallest}")
        parsed[key] = number
    hosts = parsed["hosts"]
    return RayOptions(max_retries=int(parsed["maxRetries"] or 0), hosts=int(hosts) if hosts else None,
                      cpus_per_host=float(parsed["cpusPerHost"] or 0.5))


def build_executor(
    name: str, worktrees: WorktreeLeases, *, settings: Mapping[str, Any], env: Mapping[str, str],
    parent_resolved: ResolvedModel | None, remote_foreground: bool = False, mcp: McpManager | None = None,
) -> AgentExecutor:
    """The executor called ``name`` (see :data:`EXECUTORS`)."""
    from catui.subagents.executors.in_process import InProcessExecutor  # lazy (catui.lazy): the executor seam

    local = InProcessExecutor()
    if name != "ray":
        return local
    try:
        # Ray takes about a second to import: loaded only once it is chosen.
        from catui.subagents.executors.ray_executor import RayExecutor
    except ImportError:
        raise ConfigurationError(
            "the ray executor needs Ray: install it with `pip install 'catui[ray]'`, or choose executor in-process"
        ) from None
    ray = ray_options(settings, env)
    return RayExecutor(local, worktrees, settings=settings, env=env, parent_resolved=parent_resolved,
                       remote_foreground=remote_foreground, max_retries=ray.max_retries, hosts=ray.hosts,
                       cpus_per_host=ray.cpus_per_host, mcp=mcp)
