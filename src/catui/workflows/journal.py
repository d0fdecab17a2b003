"""A workflow run's journal (``journal.jsonl``): one line per event, each agent's result written (and
fsynced) before the script sees it, so a run killed at any point resumes without repeating a finished agent.

Keys: ``v2:`` + SHA-256 of the call (prompt, options) and its occurrence among identical calls, so two
identical ``agent()`` calls get distinct keys and a re-run reaches the same keys in the same order.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def call_key(prompt: str, opts: dict[str, Any], occurrence: int) -> str:
    """The journal key of one ``agent()`` call (the ``occurrence``-th call with this prompt and options)."""
    body = json.dumps({"prompt": prompt, "opts": opts, "n": occurrence}, sort_keys=True, ensure_ascii=False)
    return "v2:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


class Journal:
    """Append-only JSON lines; a torn last line (a kill mid-write) is ignored on reading and ended on writing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._checked = False
        self._torn = False

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found: list[dict[str, Any]] = []
        for raw in self.path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict):
                found.append(item)
        return found

    def results(self) -> dict[str, Any]:
        """Journaled results by key (what a resume replays)."""
        return {e["key"]: e.get("result") for e in self.entries() if e.get("type") == "result" and "key" in e}

    def append(self, entry: dict[str, Any], *, durable: bool = True) -> None:
        """Add one line; ``durable`` (results) waits until it is on disk, a ``started`` line need not."""
        if not self._checked:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._torn = self.path.exists() and self.path.stat().st_size > 0 and not self._ends_with_newline()
            self._checked = True
        line = ("\n" if self._torn else "") + json.dumps(entry, ensure_ascii=False) + "\n"
        self._torn = False
        # errors: a lone surrogate (a script's string) is written as its JSON escape, which reads back the same
        with self.path.open("a", encoding="utf-8", errors="backslashreplace") as sink:
            sink.write(line)
            sink.flush()
            if durable:
                os.fsync(sink.fileno())

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as source:
            source.seek(-1, os.SEEK_END)
            return source.read(1) == b"\n"
