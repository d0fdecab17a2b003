"""The state database's schema: the migrations that build it and the columns of its tables.

See :mod:`catui.state.db` for what each table holds.
"""

from __future__ import annotations

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
# "creating": recorded before `git worktree add` runs, so that a crash during creation leaves a row to clean up.
WORKTREE_STATUSES = frozenset({"creating", "active", "kept", "removed"})
# Task statuses that mean "a process is (or was) working on it".
LIVE_TASK_STATUSES = ("pending", "queued", "running")
