"""Helpers of the compatibility-profile tests: one ``catui -p --output-format stream-json`` run, and the requests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.cli_env import run_catui

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)
CURRENT = {"CATUI_COMPAT": "2.1.332"}


def stream_run(repo: Path, env: dict[str, str], prompt: str, *args: str) -> tuple[subprocess.CompletedProcess[str],
                                                                                   list[dict[str, Any]]]:
    """Run catui in print mode with stream-json output; the process and its JSON lines."""
    done = run_catui(repo, env, "-p", prompt, "--output-format", "stream-json", "--verbose", *args, timeout=GUARD_S)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip().startswith("{")]
    return done, lines


def agent_call(tool_id: str, prompt: str, **extra: Any) -> dict[str, Any]:
    """An Agent tool_use block (description ``job <id>``)."""
    return {"type": "tool_use", "id": tool_id, "name": "Agent",
            "input": {"description": f"job {tool_id}", "prompt": prompt, **extra}}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content if isinstance(b, dict))


def last_user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def bodies_with_first(bodies: list[dict[str, Any]], needle: str) -> list[dict[str, Any]]:
    """The requests whose first user message contains ``needle`` (one agent's requests)."""
    return [b for b in bodies if needle in first_user_text(b)]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def tool_schema(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in body["tools"] if t["name"] == name)


def tool_results(lines: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """(tool_result block, tool_use_result) of the main agent's user lines, in order."""
    found = []
    for line in lines:
        if line.get("type") != "user" or line.get("parent_tool_use_id") is not None:
            continue
        for block in line["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append((block, line.get("tool_use_result")))
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
