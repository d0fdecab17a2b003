"""Agent names: ``name -> agent id`` for one parent session (spec 14.1).

A background agent spawned with ``name`` is registered under it while it
runs, in memory and in state.db's ``agent_names`` table (so that other
processes can see who is who); the registration is released when the agent
ends. The registry starts from the table's rows for its session, so after a
restart (the same ``session_id``) a name whose agent never ended (its process
died) still addresses it, until the agent ends and the name is released. Released names are remembered in memory as *former* names: SendMessage
to a finished agent by name writes to its mailbox.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError

if TYPE_CHECKING:
    from catui.state.db import StateDB

log = logging.getLogger(__name__)


class AgentNames:
    """The name registry of one parent session. ``state`` is a StateDB or ``None`` (memory only).

    ``open_state`` instead opens the StateDB when a name is first used: a run that names no agent never
    creates the project's state.db.
    """

    def __init__(self, session_id: str, state: StateDB | None = None, *,
                 open_state: Callable[[], StateDB | None] | None = None) -> None:
        self.session_id = session_id
        self._state = state
        self._open_state = open_state
        self._live_names: dict[str, str] | None = None
        self._former: dict[str, str] = {}

    @property
    def state(self) -> StateDB | None:
        """The StateDB the names are mirrored in (opened on first use), or None."""
        if self._state is None and self._open_state is not None:
            self._state, self._open_state = self._open_state(), None
        return self._state

    @property
    def _live(self) -> dict[str, str]:
        if self._live_names is None:
            self._live_names = self._load()
        return self._live_names

    def register(self, name: str, agent_id: str) -> None:
        """Name a running agent (a later agent with the same name takes it over)."""
        self._live[name] = agent_id
        self._former.pop(name, None)
        self._store(lambda s: s.set_name(self.session_id, name, agent_id))

    def release(self, agent_id: str) -> list[str]:
        """Drop the names of an agent that ended; returns them. They stay known as former names."""
        names = [n for n, a in self._live.items() if a == agent_id]
        for name in names:
            del self._live[name]
            self._former[name] = agent_id
            self._store(lambda s, n=name: s.release_name(self.session_id, n))
        return names

    def live(self, name: str) -> str | None:
        """The running agent registered under ``name``."""
        return self._live.get(name)

    def former(self, name: str) -> str | None:
        """The agent that had ``name`` and has ended."""
        return self._former.get(name)

    def names_of(self, agent_id: str) -> list[str]:
        """Current and former names of an agent."""
        return [n for n, a in {**self._former, **self._live}.items() if a == agent_id]

    def known(self) -> dict[str, str]:
        """Every name this session has given, current ones winning: ``name -> agent id``."""
        return {**self._former, **self._live}

    def _load(self) -> dict[str, str]:
        """The names state.db holds for this session (none without a database, or when it cannot be read)."""
        if self.state is None:
            return {}
        try:
            return dict(self.state.names(self.session_id))
        except CatuiError as exc:
            log.warning("agent names could not be read from state.db: %s", exc)
            return {}

    def _store(self, write: Any) -> None:
        if self.state is None:
            return
        try:
            write(self.state)
        except CatuiError as exc:  # the in-memory registry is what SendMessage uses; the table is a mirror
            log.warning("agent names are not recorded in state.db: %s", exc)
