"""Connections to the state database: one per thread (and per process after a fork), WAL, migrated on first use.

Every write is one ``BEGIN IMMEDIATE`` transaction; ``busy_timeout`` makes a
second writer wait instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.state.schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000


class StateError(CatuiError):
    """The state database could not be opened, migrated or written."""


class StateConnection:
    """The SQLite connections to one state database file, opened lazily per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all_connections: list[sqlite3.Connection] = []
        self._registry_lock = threading.Lock()
        self._migrated = False

    def connect(self) -> sqlite3.Connection:
        """This thread's connection (opened, and the schema brought up to date, on first use)."""
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
            _use_wal(conn)
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
        conn = self.connect()
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

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """The rows of one read statement."""
        try:
            return self.connect().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StateError(f"cannot read the state database {self.path}: {exc}") from exc

    def write(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One write statement in its own transaction; the number of rows it changed."""
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


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode (kept in the file, so usually already done).

    Switching the mode needs an exclusive lock for which SQLite does not always wait on the busy
    timeout: several threads opening a new database at once could see "database is locked". Only
    switch when needed, and retry that briefly.
    """
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
