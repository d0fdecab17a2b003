"""The peer-discovery registry: one small file per running background session, ``<catui home>/peers/<id>-<pid>.json``.

This is what ListAgents and SendMessage see. A session's worker adds its file when it starts and removes it when it
exits; a file left by a process that died without cleaning up (``kill -9``, a power cut) is removed by whoever
lists the registry next. It is separate from the sessions registry (:mod:`catui.bgsessions.registry`), which keeps
a killed session listed as ``stopped`` until ``catui rm`` so that it can be respawned.

The file is named by the session id *and* the pid: a respawned session writes a new file, so removing the stale one
of its previous process can never remove the live one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from catui.bgsessions.registry import process_start
from catui.paths import catui_home


def peers_dir() -> Path:
    return catui_home() / "peers"


def register(session_id8: str, pid: int, pid_start: str | None) -> Path:
    """Make the session discoverable; returns its file (for :func:`unregister`)."""
    folder = peers_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id8}-{pid}.json"
    temporary = folder / f".{session_id8}-{pid}.tmp"
    temporary.write_text(json.dumps({"id": session_id8, "pid": pid, "pid_start": pid_start}), encoding="utf-8")
    os.replace(temporary, path)
    return path


def unregister(path: Path) -> None:
    path.unlink(missing_ok=True)


def live_ids() -> list[str]:
    """The ids of the running background sessions; files of dead processes are removed on the way."""
    try:
        names = os.listdir(peers_dir())
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = peers_dir() / name
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            session_id8, pid, started = str(record["id"]), int(record["pid"]), record.get("pid_start")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # removed meanwhile, or being written
        if not re.fullmatch(r"[0-9a-f]{8}", session_id8):
            continue  # not written by catui: never turned into a path
        if started is not None and process_start(pid) == started:
            found.append(session_id8)
        else:
            path.unlink(missing_ok=True)  # a dead process's entry: stale
    return found
