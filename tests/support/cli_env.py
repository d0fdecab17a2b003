"""The environment of a real ``python -m catui`` child process in tests: nothing from the user's home."""

from __future__ import annotations

import os
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
