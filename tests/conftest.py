"""Test-wide isolation: catui never writes into the real user's catui or Claude home during tests."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_catui_home() -> Iterator[None]:
    previous = os.environ.get("CATUI_HOME")
    # Nor links transcripts into the real ~/.claude/projects (catui.session.claude_link); the tests of those
    # links turn them on for their own temporary Claude config folder.
    os.environ["CATUI_LINK_CLAUDE_SESSIONS"] = "0"
    with tempfile.TemporaryDirectory(prefix="catui-test-home-") as home:
        os.environ["CATUI_HOME"] = home
        yield
    if previous is None:
        os.environ.pop("CATUI_HOME", None)
    else:
        os.environ["CATUI_HOME"] = previous
