"""catui's telemetry events (spec 16) as JSON lines in ``<catui home>/telemetry.jsonl``.

Nothing leaves the machine: the records are for the user and their tools.
Off with the setting ``"telemetry": false`` or the environment variable
``CATUI_TELEMETRY=0``. Claude Code's ``tengu_*`` events keep their fields and
take a ``catui_`` prefix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catui.config import flags
from catui.paths import catui_home

TELEMETRY_FILE = "telemetry.jsonl"
TELEMETRY_ENV = "CATUI_TELEMETRY"
DISABLE_ENV = ("CATUI_DISABLE_TELEMETRY", "DISABLE_TELEMETRY")

AGENT_TOOL_SELECTED = "catui_agent_tool_selected"
AGENT_TOOL_COMPLETED = "catui_agent_tool_completed"
AUTO_MODE_DECISION = "catui_auto_mode_decision"
AGENT_MEMORY_LOADED = "catui_agent_memory_loaded"


def telemetry_enabled(settings: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether telemetry records are written (one rule for all of catui: config.flags)."""
    return flags.telemetry_enabled(settings, env)


class Telemetry:
    """Appends one JSON line per event; a disabled or unwritable sink drops events silently.

    Telemetry must never disturb a run, so write errors are swallowed after
    the first one turns the sink off.
    """

    def __init__(self, path: Path | None = None, *, enabled: bool = True) -> None:
        self.path = path if path is not None else catui_home() / TELEMETRY_FILE
        self.enabled = enabled

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], env: Mapping[str, str]) -> Telemetry:
        return cls(enabled=telemetry_enabled(settings, env))

    def record(self, event: str, fields: Mapping[str, Any]) -> None:
        """Write ``{"event", "timestamp", **fields}`` as one line."""
        if not self.enabled:
            return
        record = {"event": event, "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"), **fields}
        data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            self.enabled = False


def read_events(path: Path, name: str | None = None) -> list[dict[str, Any]]:
    """The records of a telemetry file (optionally only events called ``name``)."""
    out: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and (name is None or record.get("event") == name):
            out.append(record)
    return out
