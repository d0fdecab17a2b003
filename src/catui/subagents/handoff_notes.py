"""Where the handoff review of a background agent goes (spec 12.1, 6.1 [15]).

A foreground child's review warning is the first text block of its tool_result
(:func:`catui.subagents.result.format_agent_tool_result`). A background agent
has no tool_result to carry it, so the warning (or the degraded note) leads its
``<task-notification>`` result and its task's result, and is the last line of
its output file, as a JSON line with no ``message`` (so that transcript readers
and resume skip it)::

    {"type": "system", "subtype": "handoff_review", "agentId": "…", "content": "SECURITY WARNING: …"}
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path

from catui.session.durable_append import append_whole
from catui.session.transcript import encode_line

REVIEW_LINE_SUBTYPE = "handoff_review"


def with_warning(answer: str, warning: str | None) -> str:
    """The answer as the parent reads it: the review's warning first, when there is one."""
    if not warning:
        return answer
    return f"{warning}\n\n{answer}" if answer else warning


def record_review(output_file: Path, agent_id: str, warning: str) -> None:
    """Append the review's warning to a background agent's output file as its last line."""
    line = {
        "type": "system",
        "subtype": REVIEW_LINE_SUBTYPE,
        "agentId": agent_id,
        "content": warning,
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }
    with contextlib.suppress(OSError):  # the notification carries the warning even if the file is gone
        append_whole(output_file, encode_line(line), repair_torn_end=True)


def review_line(output_file: Path) -> str | None:
    """The warning recorded in an output file, or None when it holds none."""
    try:
        lines = output_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for raw in reversed(lines):
        if REVIEW_LINE_SUBTYPE not in raw:
            continue
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(raw)
            if isinstance(record, dict) and record.get("subtype") == REVIEW_LINE_SUBTYPE:
                return str(record.get("content", ""))
    return None
