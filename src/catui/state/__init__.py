"""Shared per-project state: the SQLite ``<project>/.catui/state.db``.

See :mod:`catui.state.db` for the schema and the :class:`StateDB` API.
"""

from __future__ import annotations

from catui.state.db import SCHEMA_VERSION, StateDB, StateError, pid_is_alive

__all__ = ["SCHEMA_VERSION", "StateDB", "StateError", "pid_is_alive"]
