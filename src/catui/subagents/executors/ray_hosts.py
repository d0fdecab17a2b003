"""The Ray actors that host remote agents: a small pool, started on first use and reused.

Each host is an :class:`~catui.subagents.executors.remote_worker.AgentHost`
actor (one worker process) spread over the cluster's nodes; an agent goes to
the host running the fewest agents. A host found dead is dropped from the pool
(the next agent that needs one starts a fresh host). Imports Ray: loaded only
with the Ray executor.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ray

from catui.subagents.executors.remote_worker import AgentHost

HOSTS_PER_NODE = 2


@dataclass
class HostSlot:
    """One host actor and how many agents run on it now."""

    actor: Any
    running: int = 0


class HostPool:
    """Hands out host actors (least loaded first), starting up to ``size`` of them."""

    def __init__(self, env: Mapping[str, str], *, size: int | None, cpus_per_host: float) -> None:
        self._runtime_env = {"env_vars": dict(env)}
        self._size = size
        self._cpus = cpus_per_host
        self._slots: list[HostSlot] = []
        self._actor_class: Any = ray.remote(AgentHost)

    def size(self) -> int:
        """How many hosts the pool keeps: the setting, else two per live node."""
        if self._size is None:
            self._size = HOSTS_PER_NODE * max(1, sum(1 for node in ray.nodes() if node.get("Alive")))
        return self._size

    def take(self) -> HostSlot:
        """A host for one more agent: a new one while the pool is not full, else the least loaded."""
        if len(self._slots) < self.size():
            # Secrets reach the worker only here, in the actor's runtime environment (never in the job).
            actor = self._actor_class.options(runtime_env=self._runtime_env, num_cpus=self._cpus,
                                              max_restarts=0, scheduling_strategy="SPREAD",
                                              max_concurrency=10_000).remote()
            self._slots.append(HostSlot(actor))
        slot = min(self._slots, key=lambda s: s.running)
        slot.running += 1
        return slot

    def give_back(self, slot: HostSlot) -> None:
        """One agent on ``slot`` has ended."""
        slot.running = max(0, slot.running - 1)

    def drop(self, slot: HostSlot) -> None:
        """Forget a host found dead (its process is gone): the next agent gets a fresh one."""
        if slot in self._slots:
            self._slots.remove(slot)

    def close(self) -> None:
        """Kill every host actor of the pool (on application shutdown)."""
        for slot in self._slots:
            with contextlib.suppress(Exception):
                ray.kill(slot.actor, no_restart=True)
        self._slots.clear()
