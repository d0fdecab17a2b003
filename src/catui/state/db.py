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

The parts: the schema (:mod:`catui.state.schema`), connections
(:mod:`catui.state.connection`), row encoding (:mod:`catui.state.rows`) and one
module per table (``task_records``, ``name_records``, ``worktree_records``),
which :class:`StateDB` combines.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from catui.paths import STATE_DB_FILENAME, project_runtime_dir
from catui.state.connection import BUSY_TIMEOUT_MS, StateConnection, StateError
from catui.state.name_records import AgentNameRecords
from catui.state.schema import (
    LIVE_TASK_STATUSES,
    MIGRATIONS,
    SCHEMA_VERSION,
    TASK_COLUMNS,
    WORKTREE_COLUMNS,
    WORKTREE_STATUSES,
)
from catui.state.task_records import TaskRecords, pid_is_alive
from catui.state.worktree_records import WorktreeRecords

__all__ = [
    "BUSY_TIMEOUT_MS", "DB_FILENAME", "LIVE_TASK_STATUSES", "MIGRATIONS", "SCHEMA_VERSION", "TASK_COLUMNS",
    "WORKTREE_COLUMNS", "WORKTREE_STATUSES", "StateDB", "StateError", "pid_is_alive",
]

DB_FILENAME = STATE_DB_FILENAME


class StateDB(TaskRecords, AgentNameRecords, WorktreeRecords):
    """The project's state store. Cheap to create; connections open lazily per thread.

    ``StateDB(project_root)`` uses ``<project_root>/.catui/state.db``;
    ``StateDB(project_root, path=...)`` puts the file elsewhere (tests, tools).
    """

    def __init__(self, project_root: Path, *, path: Path | None = None) -> None:
        self.project_root = Path(project_root)
        self.path = Path(path) if path is not None else project_runtime_dir(self.project_root) / DB_FILENAME
        self.store = StateConnection(self.path)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``), rolled back on any error."""
        with self.store.transaction() as conn:
            yield conn

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        self.store.close()

    def __enter__(self) -> StateDB:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
