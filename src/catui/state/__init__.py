"""Shared per-project state: the SQLite ``<project>/.catui/state.db``.

See :mod:`catui.state.db` for the schema and the :class:`StateDB` API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.lazy import lazy_exports

if TYPE_CHECKING:
    from catui.state.db import SCHEMA_VERSION, StateDB, StateError, pid_is_alive

# lazy (catui.lazy): importing one submodule must not import its siblings
__getattr__ = lazy_exports(__name__, {
    "SCHEMA_VERSION": "catui.state.db",
    "StateDB": "catui.state.db",
    "StateError": "catui.state.db",
    "pid_is_alive": "catui.state.db",
})

__all__ = ["SCHEMA_VERSION", "StateDB", "StateError", "pid_is_alive"]
