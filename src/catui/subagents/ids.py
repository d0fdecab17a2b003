"""Agent ids: ``a`` followed by 16 hex digits, as Claude Code 2.1.92 gives its sub-agents."""

from __future__ import annotations

import re
import secrets

AGENT_ID_PATTERN = re.compile(r"^a[0-9a-f]{16}$")


def new_agent_id() -> str:
    """A fresh agent id (17 characters: ``a`` + 16 lowercase hex digits)."""
    return "a" + secrets.token_hex(8)


def is_agent_id(value: str) -> bool:
    """Whether ``value`` has the shape of an agent id."""
    return bool(AGENT_ID_PATTERN.match(value))
