"""The per-user registry of background sessions: ``<catui home>/bg/<id8>/session.json``.

One folder per session holds its entry (written atomically: a temporary file renamed over it), its log
(``log.txt``), its inbox (``inbox/``) and a pending permission answer. Only the session's own process writes
its entry while it lives; ``stop``/``rm`` write it once the process is gone. An entry whose process is dead
(the pid is gone, or now belongs to another process: the kernel start time differs) reads as ``stopped``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from catui.paths import catui_home

STATUSES = ("idle", "busy")
STATES = ("working", "blocked", "done", "failed", "stopped")


def registry_dir() -> Path:
    """Where the background sessions of this user live."""
    return catui_home() / "bg"


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (field 22 of /proc/<pid>/stat), or None when there is no such process.

    A pid alone is not an identity: after a crash the number may be reused by an unrelated process.
    """
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses; the fields after the last ")" are plain
    fields = raw[raw.rfind(")") + 2:].split()
    if len(fields) < 20 or fields[0] == "Z":
        return None  # a zombie has exited; only its parent has not reaped it yet
    return fields[19]


class SessionEntry:
    """What ``catui sessions`` lists of one background session.

    A plain class, not a dataclass: ``catui sessions`` imports this module, and dataclasses costs it ~5 ms.
    """

    id: str
    """The first 8 hex digits of ``session_id``: what the commands accept and print."""
    started_at: int
    """Milliseconds since the epoch."""
    needs: str | None
    """When ``blocked``: what the session waits for (which call needs permission, which question)."""
    options: dict[str, Any]
    """How it was started (model, allowed tools, …), so that ``respawn`` starts it the same way."""
    name_source: str
    """``user`` (``--name``), ``auto`` (the label the model gave it) or ``prompt`` (not labelled yet)."""

    def __init__(self, id: str, session_id: str, name: str, cwd: str, permission_mode: str, started_at: int,
                 prompt: str = "", pid: int | None = None, pid_start: str | None = None, status: str = "busy",
                 state: str = "working", needs: str | None = None, options: dict[str, Any] | None = None,
                 worktree: str | None = None, name_source: str = "user", detail: str = "",
                 tempo: str = "active") -> None:
        self.id, self.session_id, self.name, self.cwd = id, session_id, name, cwd
        self.permission_mode, self.started_at, self.prompt = permission_mode, started_at, prompt
        self.pid, self.pid_start, self.status, self.state, self.needs = pid, pid_start, status, state, needs
        self.options = dict(options or {})
        self.worktree, self.name_source, self.detail, self.tempo = worktree, name_source, detail, tempo

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    @property
    def folder(self) -> Path:
        return registry_dir() / self.id

    def is_alive(self) -> bool:
        return self.pid is not None and self.pid_start is not None and process_start(self.pid) == self.pid_start

    def shown(self) -> SessionEntry:
        """The entry as listed: a dead process's session is ``stopped``, without pid and status."""
        if self.is_alive():
            return self
        return SessionEntry(**{**self.as_dict(), "pid": None, "pid_start": None, "state": "stopped", "status": "",
                               "needs": None})

    def public(self) -> dict[str, Any]:
        """The JSON object ``catui sessions --json`` prints (Claude Code's field names and order)."""
        shown = self.shown()
        body: dict[str, Any] = {}
        if shown.pid is not None:
            body["pid"] = shown.pid
        body.update({"id": self.id, "cwd": self.cwd, "kind": "background", "startedAt": self.started_at,
                     "sessionId": self.session_id, "name": self.name})
        if shown.status:
            body["status"] = shown.status
        body["state"] = shown.state
        if shown.needs:
            body["needs"] = shown.needs
        body["permissionMode"] = self.permission_mode
        return body


def entry_path(session_id8: str) -> Path:
    return registry_dir() / session_id8 / "session.json"


def write_entry(entry: SessionEntry) -> None:
    """Replace the entry on disk in one step, so a reader never sees half a file."""
    path = entry_path(entry.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".session.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(entry.as_dict(), ensure_ascii=False), encoding="utf-8")
    except OSError:
        temporary.unlink(missing_ok=True)  # a full disk: the previous entry stays whole
        raise
    os.replace(temporary, path)


def read_entry(path: Path) -> SessionEntry | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return SessionEntry(**raw)
    except (OSError, ValueError, TypeError):
        return None  # a folder being created or removed right now, or not ours


def all_entries() -> list[SessionEntry]:
    """Every registered session, oldest first."""
    root = registry_dir()
    try:
        folders = list(os.scandir(root))
    except OSError:
        return []
    entries = [e for f in folders if (e := read_entry(Path(f.path) / "session.json")) is not None]
    return sorted(entries, key=lambda e: (e.started_at, e.id))


class UnknownSession(LookupError):
    """No session matches what the user typed (or more than one does)."""


def resolve(ref: str, entries: list[SessionEntry] | None = None) -> SessionEntry:
    """The session called ``ref``: its name, its id, its full session id, or a unique prefix of an id."""
    entries = all_entries() if entries is None else entries
    ref = ref.strip()
    for matches in ([e for e in entries if ref in (e.id, e.session_id)],
                    [e for e in entries if e.name == ref],
                    [e for e in entries if ref and (e.id.startswith(ref) or e.session_id.startswith(ref))]):
        live = [e for e in matches if e.is_alive()]
        if len(matches) == 1:
            return matches[0]
        if len(live) == 1:
            return live[0]
        if matches:
            raise UnknownSession(f"'{ref}' matches {len(matches)} sessions "
                                 f"({', '.join(e.id for e in matches)}); give more of the id.")
    raise UnknownSession(f"No session matching '{ref}'. Run 'catui sessions' to list running sessions.")


def now_ms() -> int:
    return int(time.time() * 1000)
