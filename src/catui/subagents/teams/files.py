"""A team's files under the catui home, in Claude Code's shapes (observed section 10).

``<catui home>/teams/<team>/config.json`` holds the team and its members;
``<catui home>/teams/<team>/inboxes/<name>.json`` one JSON list of messages per
recipient (``{from, text, summary?, timestamp, color?, read}``). Every change
is made under an exclusive lock on ``<team>/.lock`` (``flock``), read, changed
and written back through a temporary file and a rename, so two catui processes
never lose or tear each other's writes and a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from catui.errors import CatuiError

TEAM_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class TeamFileError(CatuiError):
    """A team file that cannot be read or written (named, with the reason)."""


def team_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a team (it becomes a folder name), or None."""
    if not TEAM_NAME_PATTERN.match(name):
        return (f"team_name {name!r} is not usable: use 1-64 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit")
    return None


def safe_file_name(name: str) -> str:
    """A member's name as a file name (anything but letters, digits, ``.``, ``_``, ``-`` becomes ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"


def write_json_file(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename (raises OSError)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def read_json_file(path: Path, default: Any) -> Any:
    """The JSON in ``path``, or ``default`` when it does not exist. Raises TeamFileError when it is damaged."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TeamFileError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                            "fix or delete the file") from None


class TeamFiles:
    """The files of one team (``<root>/<team>/``); ``root`` is ``<catui home>/teams``."""

    def __init__(self, root: Path, team_name: str) -> None:
        self.root = root
        self.team_name = team_name
        self.folder = root / team_name

    @property
    def config_path(self) -> Path:
        return self.folder / "config.json"

    def inbox_path(self, name: str) -> Path:
        return self.folder / "inboxes" / f"{safe_file_name(name)}.json"

    def exists(self) -> bool:
        return self.config_path.is_file()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the team's lock (blocking) for one read-change-write; never held across an ``await``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    # -- config.json ----------------------------------------------------------------------------

    def read_config(self) -> dict[str, Any]:
        """The team's config; raises TeamFileError when it is missing or damaged."""
        config = read_json_file(self.config_path, None)
        if not isinstance(config, dict):
            raise TeamFileError(f"team {self.team_name!r} has no readable config at {self.config_path}")
        return config

    def write_config(self, config: dict[str, Any]) -> None:
        with self.locked():
            write_json_file(self.config_path, config)

    def update_config(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Apply ``change`` to the config under the lock and write it back; returns the new config."""
        with self.locked():
            config = self.read_config()
            change(config)
            write_json_file(self.config_path, config)
            return config

    # -- inboxes --------------------------------------------------------------------------------

    def append_message(self, recipient: str, entry: dict[str, Any]) -> None:
        """Add one message (``read: false``) to ``recipient``'s inbox."""
        path = self.inbox_path(recipient)
        with self.locked():
            entries = _entry_list(read_json_file(path, []), path)
            entries.append({**entry, "read": False})
            write_json_file(path, entries)

    def take_unread(self, recipient: str) -> list[dict[str, Any]]:
        """The unread messages of ``recipient``, marked ``read: true`` in the file as they are taken."""
        path = self.inbox_path(recipient)
        with self.locked():
            entries = _entry_list(read_json_file(path, []), path)
            unread = [e for e in entries if not e.get("read")]
            if unread:
                for entry in unread:
                    entry["read"] = True
                write_json_file(path, entries)
            return [{k: v for k, v in e.items() if k != "read"} for e in unread]

    def has_unread(self, recipient: str) -> bool:
        path = self.inbox_path(recipient)
        with self.locked():
            return any(not e.get("read") for e in _entry_list(read_json_file(path, []), path))

    def read_inbox(self, recipient: str) -> list[dict[str, Any]]:
        """Every message of ``recipient``'s inbox, read or not (``catui teams show``)."""
        path = self.inbox_path(recipient)
        return _entry_list(read_json_file(path, []), path)

    def remove(self) -> None:
        """Delete the team's folder (config, inboxes, lock)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _entry_list(value: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise TeamFileError(f"{path} should hold a JSON list of messages; fix or delete the file")
    return value


def list_teams(root: Path) -> list[str]:
    """The names of the teams with a config under ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
