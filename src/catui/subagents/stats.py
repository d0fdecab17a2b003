"""``subagent_stats``: what the session's Agent calls did, cumulative, for every result object (current contract).

The shape is observed-cc-now.md §9's: spawned, what the calls asked for
(``requested``: background / foreground / unset), how many started in the
background, the deepest depth reached, spawns made by sub-agents, how the
agents ended (completed, failed, killed by whom) and the calls refused (at the
depth limit, over the running-agents cap, over the budget), by agent type.
"""

from __future__ import annotations

import copy
from typing import Any


class SubagentStats:
    """The counters; :meth:`snapshot` is the ``subagent_stats`` object."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {
            "spawned": 0,
            "requested": {"background": 0, "foreground": 0, "unset": 0},
            "started_in_background": 0,
            "max_depth": 0,
            "spawned_by_subagents": 0,
            "completed": 0,
            "failed": 0,
            "killed": {"parent": 0, "user": 0, "system": 0},
            "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
            "by_type": {},
        }

    def requested(self, asked: str | None) -> None:
        """An Agent call arrived; ``asked`` is what it said of the background (None: it left it out)."""
        self._data["requested"][asked if asked in ("background", "foreground") else "unset"] += 1

    def refused(self, reason: str) -> None:
        self._data["refused"][reason] += 1

    def spawned(self, agent_type: str, *, depth: int, background: bool, by_subagent: bool) -> None:
        data = self._data
        data["spawned"] += 1
        data["started_in_background"] += int(background)
        data["max_depth"] = max(data["max_depth"], depth)
        data["spawned_by_subagents"] += int(by_subagent)
        data["by_type"][agent_type] = data["by_type"].get(agent_type, 0) + 1

    def ended(self, status: str) -> None:
        """An agent ended: ``completed``, ``failed``, or ``stopped`` (counted as killed by its parent)."""
        if status == "completed":
            self._data["completed"] += 1
        elif status == "stopped":
            self._data["killed"]["parent"] += 1
        else:
            self._data["failed"] += 1

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)
