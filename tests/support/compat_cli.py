"""Helpers of the compatibility-profile tests: one ``catui -p --output-format stream-json`` run, and the requests."""

from __future__ import annotations

import json
import re
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import run_catui
from tests.support.loopback import Fault, RecordedRequest, StreamWriter, sse_lines

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


SHELL_ID = re.compile(r"ID: (bash_[0-9a-f]+)")
"""A background shell's id in the Bash tool's result text."""


def bash_call(tool_id: str, command: str, description: str, **extra: Any) -> dict[str, Any]:
    """A Bash tool_use block."""
    return {"type": "tool_use", "id": tool_id, "name": "Bash",
            "input": {"command": command, "description": description, **extra}}


def assistant_rounds(body: dict[str, Any]) -> int:
    """How many assistant messages a request carries (the model rounds before it)."""
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def last_message_json(body: dict[str, Any]) -> str:
    """The request's last message's content, as JSON text to search in."""
    return json.dumps(body["messages"][-1]["content"])


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


class DynamicServer(AnthropicTestServer):
    """A loopback server whose ``decide(body)`` may answer a request with blocks built at run time (an agent id
    only known then); ``None`` leaves the request to the script."""

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        return None

    def handle_post(self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        blocks = self.decide(body)
        if blocks is None:
            super().handle_post(handler, request, fault)
            return
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": {
            "id": "msg_dynamic", "type": "message", "role": "assistant", "model": body.get("model"), "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": index,
                                             "content_block": {**block, "input": {}}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})]
            else:
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": index,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": index,
                                             "delta": {"type": "text_delta", "text": block["text"]}})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}),
                   ("message_stop", {"type": "message_stop"})]
        writer = StreamWriter(handler, None)
        writer.start()
        for frame in sse_lines(events):
            writer.event(frame)
        writer.end()


def all_text(message: dict[str, Any]) -> str:
    """Every text of a message (tool_result contents included), joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "tool_result":
            parts.append(result_text(block))
        else:
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)
