"""What a resumed agent carries over from its earlier runs (spec 14.1): history, counters, transcript facts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from catui.messages import Message, blocks_of, user_message
from catui.session.usage import total_tokens
from catui.subagents.run import SubagentRun
from catui.tasks.registry import Task


@dataclass
class Carried:
    """What a resumed agent's earlier runs bring to its task, so the task covers the agent's whole life."""

    started_at: float
    total_tokens: int = 0
    tool_uses: int = 0


def resumable_history(messages: list[Message]) -> list[Message]:
    """A saved conversation the model can continue: tool calls that never got their result are dropped.

    A stopped or interrupted agent's last message may call tools that never ran; sent back as they
    are, the API refuses the conversation (every tool_use needs its tool_result).
    """
    answered = {
        str(block.get("tool_use_id"))
        for message in messages
        if message.get("role") == "user"
        for block in blocks_of(message)
        if block.get("type") == "tool_result"
    }
    out: list[Message] = []
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            out.append(message)
            continue
        blocks = [b for b in blocks_of(message) if b.get("type") != "tool_use" or str(b.get("id")) in answered]
        if any(b.get("type") in ("text", "tool_use") for b in blocks):
            out.append({**message, "content": blocks})
    return out


def reset_for_next_message(run: SubagentRun, text: str) -> None:
    """Make a finished run ready to continue with ``text`` as its next user message."""
    run.session.messages[:] = resumable_history(run.session.messages)
    run.first_message = user_message([{"type": "text", "text": text}])
    run.result_event = None
    run.aborted = False
    run.clear_stop_request()  # a stopped agent continues: the old stop must not end it at once
    run.started = time.monotonic()
    run.tool_use_count, run.last_usage = 0, {}  # this run's own counters; the task adds the earlier ones
    run.stop_event = asyncio.Event()
    run.is_async = True


def carried_from_memory(run: SubagentRun, task: Task | None) -> Carried:
    """The counters of a finished run this process still holds: its task's, else the run's own."""
    if task is not None:
        return Carried(task.started_at, task.total_tokens, task.tool_uses)
    # A foreground agent's first run had no task: its start is its run's.
    started = time.time() - (time.monotonic() - run.started)
    return Carried(started, total_tokens(run.last_usage), run.tool_use_count)


def carried_from_disk(task: Task | None, row: dict[str, Any] | None, transcript: Path) -> Carried:
    """The counters of an agent's earlier runs: its task (this process), its state.db row, its transcript."""
    if task is not None:
        return Carried(task.started_at, task.total_tokens, task.tool_uses)
    if row is not None and isinstance(row.get("created_at"), int | float):
        return Carried(float(row["created_at"]), int(row.get("total_tokens") or 0), int(row.get("tool_uses") or 0))
    # A foreground agent has no row: its transcript's first line and its tool calls say what is known.
    started, tools = transcript_start_and_tool_uses(transcript)
    return Carried(started if started is not None else time.time(), 0, tools)


def read_meta(transcript: Path, agent_id: str) -> dict[str, Any]:
    """The ``meta.json`` beside a transcript (``<id>.meta.json`` or ``agent-<id>.meta.json``), or {}."""
    for name in (f"{agent_id}.meta.json", f"agent-{agent_id}.meta.json"):
        try:
            data = json.loads(transcript.with_name(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


def transcript_start_and_tool_uses(path: Path) -> tuple[float | None, int]:
    """The first line's timestamp (epoch seconds) and the number of tool calls in a JSONL transcript."""
    started: float | None = None
    tools = 0
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None, 0
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        stamp = record.get("timestamp")
        if started is None and isinstance(stamp, str):
            with contextlib.suppress(ValueError):
                started = datetime.fromisoformat(stamp).timestamp()
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            tools += sum(1 for b in blocks_of(message) if b.get("type") == "tool_use")
    return started, tools


def last_uuid(path: Path) -> str | None:
    """The ``uuid`` of a JSONL transcript's last whole line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("uuid"), str):
            return str(record["uuid"])
    return None
