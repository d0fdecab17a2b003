"""Files a repository's git config includes (``include.path``, ``includeIf.<condition>.path``).

A project may keep shared git settings in a tracked file and include it from ``.git/config``
(``git config include.path ../.gitconfig``). git reads that file as config — ``core.fsmonitor`` and
``core.hooksPath`` included — so it needs the same protection as ``.git/config`` itself, wherever it lives.
git is asked for the include paths (no hand-written parser for its config syntax); every condition of
``includeIf`` counts, since it may hold later. Included files may include more, up to ``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MAX_DEPTH = 8
_TIMEOUT_S = 10.0
_KEYS = r"^include(if\..*)?\.path$"


def _paths_in(config: Path) -> list[str]:
    """The include paths ``config`` itself names (not following them), as written."""
    try:
        text = config.read_bytes()
    except OSError:
        return []
    if b"include" not in text.lower():
        return []  # the common case: no git process at all
    try:
        done = subprocess.run(
            ["git", "config", "--file", str(config), "--null", "--get-regexp", _KEYS],
            capture_output=True, timeout=_TIMEOUT_S, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        )
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for entry in done.stdout.split(b"\0"):
        _key, _, value = entry.partition(b"\n")
        if value:
            found.append(os.fsdecode(value))
    return found


def _resolve(value: str, config: Path, home: Path) -> Path:
    if value.startswith("~/"):
        return home / value[2:]
    path = Path(value)
    return path if path.is_absolute() else config.parent / path


def included_files(config: Path, home: Path) -> list[Path]:
    """Every file ``config`` includes, directly or through included files (existing or not), deepest last."""
    found: list[Path] = []
    pending = [(config, 0)]
    while pending:
        current, depth = pending.pop()
        if depth >= MAX_DEPTH:
            continue
        for value in _paths_in(current):
            target = Path(os.path.abspath(_resolve(value, current, home)))
            if target not in found and target != config:
                found.append(target)
                pending.append((target, depth + 1))
    return found
