"""Which executor runs sub-agents: the SDK option, then ``CATUI_EXECUTOR``, then the ``executor`` setting.

``in-process`` (the default) runs every child on this event loop; ``ray`` runs
background children on a Ray cluster (``RAY_ADDRESS``, or a local one started
on first use) and needs the ``catui[ray]`` extra. Ray is imported only here,
only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catui.errors import ConfigurationError
from catui.models.resolve import ResolvedModel
from catui.subagents.executors import AgentExecutor
from catui.subagents.executors.in_process import InProcessExecutor
from catui.subagents.worktrees import WorktreeLeases

EXECUTORS = ("in-process", "ray")
ENV_NAME = "CATUI_EXECUTOR"
RETRIES_ENV = "CATUI_RAY_MAX_RETRIES"


def executor_name(option: str | None, settings: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The chosen executor's name. Raises ConfigurationError naming where a bad value came from."""
    for value, where in ((option, "the executor option"), (env.get(ENV_NAME), ENV_NAME),
                         (settings.get("executor"), "settings key `executor`")):
        if value is None or value == "":
            continue
        name = str(value).strip().lower()
        if name not in EXECUTORS:
            raise ConfigurationError(
                f"{where} is {value!r}; use one of: {', '.join(EXECUTORS)} (in-process is the default)"
            )
        return name
    return "in-process"


def ray_options(settings: Mapping[str, Any], env: Mapping[str, str]) -> tuple[int, float]:
    """``(max_retries, cpus_per_agent)`` from ``ray.maxRetries`` / ``CATUI_RAY_MAX_RETRIES`` and ``ray.cpusPerAgent``."""
    section = settings.get("ray") or {}
    if not isinstance(section, Mapping):
        raise ConfigurationError('settings key `ray` must be an object such as {"maxRetries": 1}')
    retries: Any = env.get(RETRIES_ENV) or section.get("maxRetries", 0)
    cpus: Any = section.get("cpusPerAgent", 0.25)
    try:
        retries_value = int(retries)
        cpus_value = float(cpus)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"ray retries {retries!r} / cpusPerAgent {cpus!r} must be numbers (e.g. maxRetries 1, cpusPerAgent 0.25)"
        ) from None
    if retries_value < 0 or cpus_value <= 0:
        raise ConfigurationError("ray.maxRetries must be 0 or more and ray.cpusPerAgent above 0")
    return retries_value, cpus_value


def build_executor(
    name: str, worktrees: WorktreeLeases, *, settings: Mapping[str, Any], env: Mapping[str, str],
    parent_resolved: ResolvedModel | None, remote_foreground: bool = False,
) -> AgentExecutor:
    """The executor called ``name`` (see :data:`EXECUTORS`)."""
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
    retries, cpus = ray_options(settings, env)
    return RayExecutor(local, worktrees, settings=settings, env=env, parent_resolved=parent_resolved,
                       remote_foreground=remote_foreground, max_retries=retries, cpus_per_agent=cpus)
