"""The environment of a real ``python -m catui`` child process in tests: nothing from the user's home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"


def cli_env(tmp_path: Path, server: Any, **extra: str) -> dict[str, str]:
    """PATH only from the real environment; HOME and CATUI_HOME in ``tmp_path``; catui from this checkout;
    one quick retry; the loopback ``server``'s API settings; then ``extra``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CATUI_HOME": str(tmp_path / "catui-home"),
        "PYTHONPATH": str(SRC),
        "CATUI_MAX_RETRIES": "1",
        "CATUI_RETRY_BASE_MS": "1",
        **server.env("test"),
        **extra,
    }


def git_repo(tmp_path: Path) -> Path:
    """``tmp_path/repo``: a fresh git repository (branch ``main``) holding one Python file, for catui to run in."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    return folder


def run_catui(cwd: Path, env: dict[str, str], *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python -m catui ARGS`` in ``cwd`` with exactly ``env``; its output captured as text."""
    return subprocess.run([sys.executable, "-m", "catui", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
