"""The shapes of team messages (observed section 10): ids, colours, JSON notices, teammate-message blocks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape
from typing import Any

from catui.tools.base import ToolResult

LEAD_NAME = "team-lead"
"""The lead's member name and inbox (its agent id is ``team-lead@<team>``)."""
BROADCAST = "*"
MEMBER_COLOURS = ("blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red")
"""Teammates' colours in spawn order (the first four as observed), then round again."""


def agent_id_of(name: str, team_name: str) -> str:
    """A teammate's agent id: ``<name>@<team>``."""
    return f"{name}@{team_name}"


def colour_for(index: int) -> str:
    """The colour of the ``index``-th teammate spawned (0-based)."""
    return MEMBER_COLOURS[index % len(MEMBER_COLOURS)]


def unique_name(wanted: str, taken: Iterable[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``… when that name is already on the team."""
    names = set(taken)
    if wanted not in names:
        return wanted
    n = 2
    while f"{wanted}-{n}" in names:
        n += 1
    return f"{wanted}-{n}"


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_now() -> str:
    """The inbox timestamp: UTC ISO 8601 with milliseconds and ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def compact_json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_result(body: dict[str, Any], *, is_error: bool = False) -> ToolResult:
    """A tool_result whose text is ``body`` as compact JSON (the team tools' observed replies)."""
    return ToolResult(compact_json(body), is_error=is_error, data=body)


def structured(text: str) -> dict[str, Any] | None:
    """The JSON object an inbox text holds (a notice or a structured message), or None for plain text."""
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def teammate_message_block(sender: str, text: str, *, color: str | None = None, summary: str | None = None) -> str:
    """One ``<teammate-message teammate_id="…" color="…" summary="…">`` block around ``text``."""
    attrs = f'teammate_id="{escape(sender)}"'
    if color:
        attrs += f' color="{escape(color)}"'
    if summary:
        attrs += f' summary="{escape(summary)}"'
    return f"<teammate-message {attrs}>\n{text}\n</teammate-message>"


def join_blocks(entries: list[dict[str, Any]], *, with_summary: bool) -> str:
    """Inbox entries as one message: their blocks joined by a blank line.

    The lead's blocks carry teammate_id and color; a teammate's also the summary, as observed.
    """
    return "\n\n".join(
        teammate_message_block(str(e.get("from", "")), str(e.get("text", "")), color=e.get("color"),
                               summary=e.get("summary") if with_summary else None)
        for e in entries
    )


def shutdown_first(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Shutdown requests ahead of every other message (stable otherwise)."""
    def is_shutdown(entry: dict[str, Any]) -> bool:
        value = structured(str(entry.get("text", "")))
        return value is not None and value.get("type") == "shutdown_request"
    return sorted(entries, key=lambda e: 0 if is_shutdown(e) else 1)


def idle_notification(sender: str, peer_summary: str | None = None) -> str:
    """What a teammate tells the lead after each of its turns (``summary`` names a peer it messaged)."""
    value: dict[str, Any] = {"type": "idle_notification", "from": sender, "timestamp": iso_now(),
                             "idleReason": "available"}
    if peer_summary:
        value["summary"] = peer_summary
    return compact_json(value)


def shutdown_request(request_id: str, sender: str, reason: str | None) -> str:
    value: dict[str, Any] = {"type": "shutdown_request", "requestId": request_id, "from": sender}
    if reason:
        value["reason"] = reason
    value["timestamp"] = iso_now()
    return compact_json(value)


def shutdown_answer(request_id: str, sender: str, *, approve: bool, reason: str | None) -> str:
    value: dict[str, Any] = {"type": "shutdown_approved" if approve else "shutdown_rejected",
                             "requestId": request_id, "from": sender}
    if reason:
        value["reason"] = reason
    value["timestamp"] = iso_now()
    return compact_json(value)


def plan_approval_request(sender: str, plan_file: str, plan: str, request_id: str) -> str:
    return compact_json({"type": "plan_approval_request", "from": sender, "timestamp": iso_now(),
                         "planFilePath": plan_file, "planContent": plan, "requestId": request_id})


def plan_approval_answer(request_id: str, *, approved: bool, feedback: str | None, mode: str) -> str:
    value: dict[str, Any] = {"type": "plan_approval_response", "requestId": request_id, "approved": approved}
    if feedback:
        value["feedback"] = feedback
    value["permissionMode"] = mode
    return compact_json(value)


def shutdown_request_id(name: str) -> str:
    return f"shutdown-{now_ms()}@{name}"


def plan_request_id(name: str, team_name: str) -> str:
    return f"plan_approval-{now_ms()}@{name}@{team_name}"
