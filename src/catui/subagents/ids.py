"""Agent ids: ``a`` followed by 16 hex digits, as Claude Code 2.1.92 gives its sub-agents."""

from __future__ import annotations

import re
import secrets
import time

AGENT_ID_PATTERN = re.compile(r"^a[0-9a-f]{16}$")


def new_agent_id() -> str:
    """A fresh agent id (17 characters: ``a`` + 16 lowercase hex digits)."""
    return "a" + secrets.token_hex(8)


def is_agent_id(value: str) -> bool:
    """Whether ``value`` has the shape of an agent id."""
    return bool(AGENT_ID_PATTERN.match(value))


_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_run_id(now_ms: int | None = None) -> str:
    """A run id of the current contract's task events: the start time in milliseconds in base 36 (nine digits,
    zero-padded), a dash and 8 random hex digits (``0mxa83sp8-f5e3243e``). One per run of an agent: a resumed
    agent keeps its agent id and gets a new run id."""
    value = int(time.time() * 1000) if now_ms is None else now_ms
    digits = ""
    while value:
        value, rest = divmod(value, 36)
        digits = _BASE36[rest] + digits
    return f"{digits.rjust(9, '0')}-{secrets.token_hex(4)}"
