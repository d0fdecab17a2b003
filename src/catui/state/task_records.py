"""The ``tasks`` table: background tasks, and which of them lost their process."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from catui.state.connection import StateConnection, StateError
from catui.state.rows import decode_row, encode_json, storable
from catui.state.schema import LIVE_TASK_STATUSES, TASK_COLUMNS


def pid_is_alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


class TaskRecords:
    """Task rows of :class:`~catui.state.db.StateDB` (a mixin; ``store`` is the database's connections)."""

    store: StateConnection

    def upsert_task(self, id: str, **fields: Any) -> dict[str, Any]:
        """Insert task ``id`` or update the given columns of it; returns the stored row.

        Unknown column names raise :class:`StateError`. ``meta`` may be a dict
        (stored as JSON); ``created_at`` defaults to now on insert and
        ``updated_at`` is set to now on every call unless given.
        """
        unknown = sorted(set(fields) - set(TASK_COLUMNS))
        if unknown:
            raise StateError(
                f"upsert_task: unknown task field(s) {', '.join(unknown)}; known: {', '.join(TASK_COLUMNS)}"
            )
        now = time.time()
        values = dict(fields)
        values.setdefault("updated_at", now)
        if "meta" in values:
            values["meta"] = encode_json(values["meta"], "meta")
        for column in ("result", "error"):
            if column in values and values[column] is not None and not isinstance(values[column], str):
                values[column] = encode_json(values[column], column)
        insert = {"id": id, "created_at": now, **values}
        columns = ", ".join(insert)
        placeholders = ", ".join("?" for _ in insert)
        updates = ", ".join(f"{name} = excluded.{name}" for name in values) or "id = id"
        sql = f"INSERT INTO tasks ({columns}) VALUES ({placeholders}) ON CONFLICT(id) DO UPDATE SET {updates}"
        with self.store.transaction() as conn:
            conn.execute(sql, storable(tuple(insert.values())))
            row = conn.execute("SELECT * FROM tasks WHERE id = ?", (id,)).fetchone()
        result = decode_row(row)
        assert result is not None
        return result

    def get_task(self, id: str) -> dict[str, Any] | None:
        """The task row, or ``None``."""
        rows = self.store.query("SELECT * FROM tasks WHERE id = ?", (id,))
        return decode_row(rows[0]) if rows else None

    def list_tasks(
        self, *, status: str | None = None, parent_session_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Tasks, oldest first, optionally filtered by status and/or parent session."""
        clauses: list[str] = []
        params: list[Any] = []
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if parent_session_id is not None:
            clauses.append("parent_session_id = ?")
            params.append(parent_session_id)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.store.query(f"SELECT * FROM tasks{where} ORDER BY created_at, id", tuple(params))
        return [row for row in (decode_row(r) for r in rows) if row is not None]

    def delete_task(self, id: str) -> bool:
        """Forget a task; ``True`` if it existed."""
        return self.store.write("DELETE FROM tasks WHERE id = ?", (id,)) > 0

    def mark_interrupted(self, pid_alive: Callable[[int], bool] = pid_is_alive) -> list[str]:
        """Mark ``pending``/``queued``/``running`` tasks whose owning process is gone as ``interrupted``.

        Returns the ids changed. Tasks without a recorded pid are left alone
        (nothing says who owns them). ``pid_alive`` is injectable for tests.
        """
        placeholders = ", ".join("?" for _ in LIVE_TASK_STATUSES)
        rows = self.store.query(
            f"SELECT id, pid FROM tasks WHERE status IN ({placeholders}) AND pid IS NOT NULL",
            LIVE_TASK_STATUSES,
        )
        dead = [(row["id"], row["pid"]) for row in rows if not pid_alive(int(row["pid"]))]
        if not dead:
            return []
        now = time.time()
        changed: list[str] = []
        with self.store.transaction() as conn:
            for task_id, pid in dead:
                # Re-check the status inside the transaction: another process may have finished it.
                cursor = conn.execute(
                    f"UPDATE tasks SET status = 'interrupted', ended_at = ?, updated_at = ?, "
                    f"error = COALESCE(error, ?) WHERE id = ? AND pid = ? AND status IN ({placeholders})",
                    (
                        now,
                        now,
                        f"catui process {pid} exited before the task finished",
                        task_id,
                        pid,
                        *LIVE_TASK_STATUSES,
                    ),
                )
                if cursor.rowcount:
                    changed.append(task_id)
        return changed

    def claim_interrupted(self, id: str, pid: int) -> bool:
        """Give interrupted task ``id`` to process ``pid`` (status ``queued``); False when it is not interrupted.

        One statement in one transaction: of two processes claiming the same task, exactly one wins.
        """
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = 'queued', pid = ?, error = NULL, ended_at = NULL, updated_at = ? "
                "WHERE id = ? AND status = 'interrupted'",
                (pid, time.time(), id),
            )
            claimed = bool(cursor.rowcount)
        return claimed
