"""A fresh, empty user home for tests of what catui reads from ``~`` (settings, memory, MCP servers)."""

from __future__ import annotations

from pathlib import Path

import pytest


def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Create ``tmp_path/home`` and make it the user's home: ``HOME``, ``CATUI_HOME`` (``home/.catui``)
    and no ``CLAUDE_CONFIG_DIR``, so ``~/.claude`` and ``~/.catui`` both resolve inside it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CATUI_HOME", str(home / ".catui"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The ``home`` fixture: :func:`isolated_home` for one test (import ``home_fixture`` to use it)."""
    return isolated_home(tmp_path, monkeypatch)
