"""Helpers of the workflow tests that drive ``catui workflow …`` through the real CLI: a scripted answer, one
command run, and the run records and journals it leaves in the catui home of ``cli_env``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_env import cli_env, run_catui
from tests.support.compat_cli import text

TIMEOUT_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)


def answer(key: str, reply: str, **extra: Any) -> dict[str, Any]:
    """A scripted turn answering ``reply`` to every agent whose first message contains ``key``."""
    return {"match": {"first_user_contains": key}, "repeat": True, "content": text(reply), **extra}


def workflow(cwd: Path, tmp_path: Path, server: Any, *args: str, **env: str) -> Any:
    """``catui workflow ARGS`` in ``cwd`` against ``server``."""
    return run_catui(cwd, cli_env(tmp_path, server, **env), "workflow", *args, timeout=TIMEOUT_S)


def records(tmp_path: Path) -> list[dict[str, Any]]:
    """Every workflow run record in the test's catui home."""
    found = (tmp_path / "catui-home" / "projects").glob("*/**/workflows/wf_*.json")
    return [json.loads(path.read_text()) for path in found]


def journal_of(record: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """The journal lines of the run ``record`` names."""
    (path,) = list((tmp_path / "catui-home" / "projects").glob(f"*/**/{record['runId']}/journal.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]
