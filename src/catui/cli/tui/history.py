"""Prompt history kept across sessions: ``<catui home>/history.jsonl``, one line per submitted prompt.

Lines have Claude Code's history fields (``display``, ``project``,
``timestamp`` in ms); ↑ at the prompt recalls the current project's entries.
History is a convenience: a file that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from catui.paths import catui_home

HISTORY_FILE = "history.jsonl"
MAX_RECALLED = 500
TAIL_BYTES = 1_000_000  # only the end of a long history file is read at start


def history_path() -> Path:
    return catui_home() / HISTORY_FILE


def load_history(project: Path, limit: int = MAX_RECALLED) -> list[str]:
    """The project's most recent prompts, oldest first."""
    path = history_path()
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    wanted = str(project)
    entries: list[str] = []
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a partial first line from the tail cut, or a damaged line
        if isinstance(record, dict) and record.get("project") == wanted and isinstance(record.get("display"), str):
            entries.append(record["display"])
    return entries[-limit:]


def append_history(project: Path, text: str) -> None:
    """Remember one submitted prompt."""
    record = {"display": text, "project": str(project), "timestamp": int(time.time() * 1000)}
    path = history_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
