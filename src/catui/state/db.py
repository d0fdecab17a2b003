"""``StateDB``: the project's SQLite state store at ``<project>/.catui/state.db``.

One database per project holds what must outlive a catui process or be seen by
another one: background tasks, the agent name registry and the worktrees
agents were given. It is plain stdlib :mod:`sqlite3`:

- WAL journal, so readers never block the writer and a crash loses nothing
  that was committed; ``synchronous=NORMAL`` (safe under WAL, and no fsync per
  commit, which keeps writes well under a millisecond).
- Every write is one ``BEGIN IMMEDIATE`` transaction; ``busy_timeout`` makes a
  second writer (another thread or process) wait instead of failing.
- One connection per thread (and per process after a fork), so the object can
  be shared by threads, and asyncio code may call it directly: every operation
  is a single small statement.

Schema (version in ``schema_version``; :data:`MIGRATIONS` upgrades old files):

``tasks``
    ``id`` (primary key), ``type``, ``status``, ``description``,
    ``agent_type``, ``tool_use_id``, ``parent_session_id``, ``output_file``,
    ``pid`` (the owning catui process), ``created_at``, ``updated_at``,
    ``ended_at`` (epoch seconds, floats), ``total_tokens``, ``tool_uses``,
    ``last_tool``, ``result``, ``error``, ``worktree_path``, ``meta`` (a JSON
    object; returned decoded).
``agent_names``
    ``(session_id, name) -> agent_id``: the names agents were spawned with,
    per parent session.
``worktrees``
    ``agent_id`` (primary key), ``path``, ``branch``, ``head_commit``,
    ``git_root``, ``hook_based`` (bool), ``created_at``, ``status``
    (``active`` | ``kept`` | ``removed``), ``pid``, ``meta`` (JSON object).

Rows come back as plain dicts keyed by column name.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.paths import project_runtime_dir

DB_FILENAME = "state.db"
BUSY_TIMEOUT_MS = 10_000

# Each entry upgrades the schema from version i to i + 1; append, never edit.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        type TEXT,
        status TEXT,
        description TEXT,
        agent_type TEXT,
        tool_use_id TEXT,
        parent_session_id TEXT,
        output_file TEXT,
        pid INTEGER,
        created_at REAL,
        updated_at REAL,
        ended_at REAL,
        total_tokens INTEGER,
        tool_uses INTEGER,
        last_tool TEXT,
        result TEXT,
        error TEXT,
        worktree_path TEXT,
        meta TEXT
    );
    CREATE INDEX tasks_status ON tasks(status);
    CREATE INDEX tasks_parent ON tasks(parent_session_id);
    CREATE TABLE agent_names (
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        PRIMARY KEY (session_id, name)
    );
    CREATE TABLE worktrees (
        agent_id TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        branch TEXT,
        head_commit TEXT,
        git_root TEXT,
        hook_based INTEGER NOT NULL DEFAULT 0,
        created_at REAL,
        status TEXT NOT NULL DEFAULT 'active',
        pid INTEGER,
        meta TEXT
    );
    CREATE INDEX worktrees_status ON worktrees(status);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

TASK_COLUMNS: tuple[str, ...] = (
    "id", "type", "status", "description", "agent_type", "tool_use_id", "parent_session_id",
    "output_file", "pid", "created_at", "updated_at", "ended_at", "total_tokens", "tool_uses",
    "last_tool", "result", "error", "worktree_path", "meta",
)  # fmt: skip
WORKTREE_COLUMNS: tuple[str, ...] = (
    "agent_id", "path", "branch", "head_commit", "git_root", "hook_based", "created_at", "status",
    "pid", "meta",
)  # fmt: skip
WORKTREE_STATUSES = frozenset({"active", "kept", "removed"})
# Task statuses that mean "a process is (or was) working on it".
LIVE_TASK_STATUSES = ("pending", "queued", "running")


class StateError(CatuiError):
    """The state database could not be opened, migrated or written."""


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


def _encode_json(value: Any, column: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise StateError(f"state.db: column {column!r} needs JSON-serialisable data: {exc}") from exc


def _decode_row(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    data = dict(row)
    raw = data.get("meta")
    if isinstance(raw, str):
        try:
            data["meta"] = json.loads(raw)
        except ValueError:
            data["meta"] = {}
    elif raw is None and "meta" in data:
        data["meta"] = {}
    if "hook_based" in data:
        data["hook_based"] = bool(data["hook_based"])
    return data


class StateDB:
    """The project's state store. Cheap to create; connections open lazily per thread.

    ``StateDB(project_root)`` uses ``<project_root>/.catui/state.db``;
    ``StateDB(project_root, path=...)`` puts the file elsewhere (tests, tools).
    """

    def __init__(self, project_root: Path, *, path: Path | None = None) -> None:
        self.project_root = Path(project_root)
        self.path = Path(path) if path is not None else project_runtime_dir(self.project_root) / DB_FILENAME
        self._local = threading.local()
        self._all_connections: list[sqlite3.Connection] = []
        self._registry_lock = threading.Lock()
        self._migrated = False

    # ---- connections -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so reads never hold a transaction.
            conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise StateError(f"cannot open the state database {self.path}: {exc}") from exc
        self._local.conn = conn
        self._local.pid = os.getpid()
        with self._registry_lock:
            self._all_connections.append(conn)
        if not self._migrated:
            self._migrate(conn)
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                row = conn.execute("SELECT version FROM schema_version").fetchone()
                current = int(row[0]) if row else 0
                if current > SCHEMA_VERSION:
                    raise StateError(
                        f"{self.path} was written by a newer catui (schema {current}, this one knows "
                        f"{SCHEMA_VERSION}); upgrade catui or move the file away"
                    )
                for script in MIGRATIONS[current:]:
                    for statement in script.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                if row is None:
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                elif current != SCHEMA_VERSION:
                    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StateError(f"cannot prepare the state database {self.path}: {exc}") from exc
        self._migrated = True

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``), rolled back on any error."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StateError(f"state database {self.path} is busy or unwritable: {exc}") from exc
        try:
            yield conn
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise StateError(f"cannot write the state database {self.path}: {exc}") from exc
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise StateError(f"cannot write the state database {self.path}: {exc}") from exc

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self._connect().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StateError(f"cannot read the state database {self.path}: {exc}") from exc

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        with self.transaction() as conn:
            return conn.execute(sql, params).rowcount

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._registry_lock:
            conns, self._all_connections = self._all_connections, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    def __enter__(self) -> StateDB:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- tasks -------------------------------------------------------------------------------

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
            values["meta"] = _encode_json(values["meta"], "meta")
        for column in ("result", "error"):
            if column in values and values[column] is not None and not isinstance(values[column], str):
                values[column] = _encode_json(values[column], column)
        insert = {"id": id, "created_at": now, **values}
        columns = ", ".join(insert)
        placeholders = ", ".join("?" for _ in insert)
        updates = ", ".join(f"{name} = excluded.{name}" for name in values) or "id = id"
        sql = f"INSERT INTO tasks ({columns}) VALUES ({placeholders}) ON CONFLICT(id) DO UPDATE SET {updates}"
        with self.transaction() as conn:
            conn.execute(sql, tuple(insert.values()))
            row = conn.execute("SELECT * FROM tasks WHERE id = ?", (id,)).fetchone()
        result = _decode_row(row)
        assert result is not None
        return result

    def get_task(self, id: str) -> dict[str, Any] | None:
        """The task row, or ``None``."""
        rows = self._query("SELECT * FROM tasks WHERE id = ?", (id,))
        return _decode_row(rows[0]) if rows else None

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
        rows = self._query(f"SELECT * FROM tasks{where} ORDER BY created_at, id", tuple(params))
        return [row for row in (_decode_row(r) for r in rows) if row is not None]

    def delete_task(self, id: str) -> bool:
        """Forget a task; ``True`` if it existed."""
        return self._write("DELETE FROM tasks WHERE id = ?", (id,)) > 0

    def mark_interrupted(self, pid_alive: Callable[[int], bool] = pid_is_alive) -> list[str]:
        """Mark ``pending``/``queued``/``running`` tasks whose owning process is gone as ``interrupted``.

        Returns the ids changed. Tasks without a recorded pid are left alone
        (nothing says who owns them). ``pid_alive`` is injectable for tests.
        """
        placeholders = ", ".join("?" for _ in LIVE_TASK_STATUSES)
        rows = self._query(
            f"SELECT id, pid FROM tasks WHERE status IN ({placeholders}) AND pid IS NOT NULL",
            LIVE_TASK_STATUSES,
        )
        dead = [(row["id"], row["pid"]) for row in rows if not pid_alive(int(row["pid"]))]
        if not dead:
            return []
        now = time.time()
        changed: list[str] = []
        with self.transaction() as conn:
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
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = 'queued', pid = ?, error = NULL, ended_at = NULL, updated_at = ? "
                "WHERE id = ? AND status = 'interrupted'",
                (pid, time.time(), id),
            )
            claimed = bool(cursor.rowcount)
        return claimed

    # ---- agent names -------------------------------------------------------------------------

    def set_name(self, session_id: str, name: str, agent_id: str, *, overwrite: bool = True) -> bool:
        """Register ``name`` for ``agent_id`` in ``session_id``.

        With ``overwrite=False`` an existing different registration is kept and
        ``False`` returned; otherwise returns ``True``.
        """
        with self.transaction() as conn:
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
        rows = self._query(
            "SELECT agent_id FROM agent_names WHERE session_id = ? AND name = ?", (session_id, name)
        )
        return str(rows[0]["agent_id"]) if rows else None

    def release_name(self, session_id: str, name: str) -> bool:
        """Drop a name registration; ``True`` if there was one."""
        return (
            self._write("DELETE FROM agent_names WHERE session_id = ? AND name = ?", (session_id, name)) > 0
        )

    def names(self, session_id: str) -> dict[str, str]:
        """All ``name -> agent_id`` registrations of a session."""
        rows = self._query(
            "SELECT name, agent_id FROM agent_names WHERE session_id = ? ORDER BY name", (session_id,)
        )
        return {str(r["name"]): str(r["agent_id"]) for r in rows}

    # ---- worktrees ---------------------------------------------------------------------------

    def record_worktree(
        self,
        agent_id: str,
        *,
        path: str | Path,
        branch: str | None,
        head_commit: str | None,
        git_root: str | Path | None,
        hook_based: bool,
        pid: int | None = None,
        status: str = "active",
        created_at: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Insert or replace the worktree row of ``agent_id``; returns it. ``pid`` defaults to this process."""
        _check_worktree_status(status)
        row = {
            "agent_id": agent_id,
            "path": str(path),
            "branch": branch,
            "head_commit": head_commit,
            "git_root": str(git_root) if git_root is not None else None,
            "hook_based": 1 if hook_based else 0,
            "created_at": time.time() if created_at is None else created_at,
            "status": status,
            "pid": os.getpid() if pid is None else pid,
            "meta": _encode_json(dict(meta or {}), "meta"),
        }
        columns = ", ".join(row)
        placeholders = ", ".join("?" for _ in row)
        with self.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO worktrees ({columns}) VALUES ({placeholders})", tuple(row.values())
            )
        decoded = _decode_row_dict(row)
        return decoded

    def update_worktree_status(self, agent_id: str, status: str) -> bool:
        """Set a worktree's status (``active`` | ``kept`` | ``removed``); ``True`` if the row exists."""
        _check_worktree_status(status)
        return self._write("UPDATE worktrees SET status = ? WHERE agent_id = ?", (status, agent_id)) > 0

    def get_worktree(self, agent_id: str) -> dict[str, Any] | None:
        """The worktree row of ``agent_id``, or ``None``."""
        rows = self._query("SELECT * FROM worktrees WHERE agent_id = ?", (agent_id,))
        return _decode_row(rows[0]) if rows else None

    def list_worktrees(self, *, status: str | None = None) -> list[dict[str, Any]]:
        """Worktree rows, oldest first, optionally only those with ``status``."""
        if status is not None:
            _check_worktree_status(status)
            rows = self._query(
                "SELECT * FROM worktrees WHERE status = ? ORDER BY created_at, agent_id", (status,)
            )
        else:
            rows = self._query("SELECT * FROM worktrees ORDER BY created_at, agent_id")
        return [row for row in (_decode_row(r) for r in rows) if row is not None]

    def delete_worktree(self, agent_id: str) -> bool:
        """Forget a worktree row entirely; ``True`` if it existed."""
        return self._write("DELETE FROM worktrees WHERE agent_id = ?", (agent_id,)) > 0


def _check_worktree_status(status: str) -> None:
    if status not in WORKTREE_STATUSES:
        raise StateError(
            f"worktree status must be one of {', '.join(sorted(WORKTREE_STATUSES))}, not {status!r}"
        )


def _decode_row_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    data = dict(row)
    data["hook_based"] = bool(data.get("hook_based"))
    raw = data.get("meta")
    data["meta"] = json.loads(raw) if isinstance(raw, str) else {}
    return data
