"""The ``agent_names`` table: the names agents were spawned with, per parent session."""

from __future__ import annotations

from catui.state.connection import StateConnection
from catui.state.rows import storable


class AgentNameRecords:
    """Agent-name rows of :class:`~catui.state.db.StateDB` (a mixin; ``store`` is the database's connections)."""

    store: StateConnection

    def set_name(self, session_id: str, name: str, agent_id: str, *, overwrite: bool = True) -> bool:
        """Register ``name`` for ``agent_id`` in ``session_id``.

        With ``overwrite=False`` an existing different registration is kept and
        ``False`` returned; otherwise returns ``True``.
        """
        session_id, name, agent_id = storable((session_id, name, agent_id))
        with self.store.transaction() as conn:
            row = conn.execute(
                "SELECT agent_id FROM agent_names WHERE session_id = ? AND name = ?", (session_id, name)
            ).fetchone()
            if row is not None and not overwrite and row["agent_id"] != agent_id:
                return False
            conn.execute(
                "INSERT INTO agent_names (session_id, name, agent_id) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id, name) DO UPDATE SET agent_id = excluded.agent_id",
                (session_id, name, agent_id),
            )
        return True

    def get_name(self, session_id: str, name: str) -> str | None:
        """The agent id registered under ``name`` in ``session_id``, or ``None``."""
        rows = self.store.query(
            "SELECT agent_id FROM agent_names WHERE session_id = ? AND name = ?", storable((session_id, name))
        )
        return str(rows[0]["agent_id"]) if rows else None

    def release_name(self, session_id: str, name: str) -> bool:
        """Drop a name registration; ``True`` if there was one."""
        return (
            self.store.write("DELETE FROM agent_names WHERE session_id = ? AND name = ?",
                             storable((session_id, name))) > 0
        )

    def names(self, session_id: str) -> dict[str, str]:
        """All ``name -> agent_id`` registrations of a session."""
        rows = self.store.query(
            "SELECT name, agent_id FROM agent_names WHERE session_id = ? ORDER BY name", (session_id,)
        )
        return {str(r["name"]): str(r["agent_id"]) for r in rows}
