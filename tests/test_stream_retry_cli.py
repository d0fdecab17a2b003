"""Mid-stream failures through the real CLI: a cut stream or an error event is retried and the partial
message withdrawn, on both providers, for the main agent and for a sub-agent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer, Fault
from tests.support.cli_env import cli_env
from tests.support.loopback import LoopbackServer
from tests.support.openai_server import OpenAITestServer

ANSWER = "The build is green and every test passes, so the release can go out today."
SCRIPT: dict[str, Any] = {"turns": [{"repeat": True, "content": [{"type": "text", "text": ANSWER}]}]}
MAX_CUTS = 16


def run_catui(tmp_path: Path, server: LoopbackServer, *args: str, retries: int) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    env = cli_env(tmp_path, server, CATUI_MAX_RETRIES=str(retries))
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", "Is the build green?", "--output-format", "stream-json",
         "--verbose", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )


def start(provider: str, script: dict[str, Any]) -> tuple[LoopbackServer, list[str]]:
    if provider == "anthropic":
        return AnthropicTestServer(script).start(), []
    return OpenAITestServer(script).start(), ["--model", "openai:gpt-4.1"]


def saved_assistant_texts(tmp_path: Path) -> list[str]:
    """The text of every assistant message in the main transcript."""
    texts = []
    for path in (tmp_path / "catui-home").rglob("*.jsonl"):
        if "subagents" in path.parts:
            continue
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            if message.get("role") == "assistant":
                texts.append("".join(b.get("text", "") for b in message["content"] if b.get("type") == "text"))
    return texts


def frames(raw: bytes | bytearray) -> int:
    return bytes(raw).count(b"\n\n")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_stream_cut_at_every_event_index_finishes_with_the_full_answer(tmp_path: Path, provider: str) -> None:
    server, args = start(provider, SCRIPT)
    try:
        # One fault per event index, in order: the request is cut after 0, 1, 2, ... events until an
        # index lies past the stream's end, which lets the whole answer through.
        server.inject(*[Fault(cut_after_events=index) for index in range(MAX_CUTS)])
        done = run_catui(tmp_path, server, *args, retries=MAX_CUTS)
        responses = list(server.responses)
        requests = len(server.requests)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    full = frames(responses[-1])
    assert 3 <= full < MAX_CUTS, "the stream must be shorter than the number of cuts injected"
    # Every index before the end was cut once; the next request got the whole stream.
    assert requests == full + 1 or requests == full  # a cut right before the end marker may be whole
    assert events[-1]["type"] == "result" and events[-1]["result"] == ANSWER and not events[-1]["is_error"]
    retries = [e for e in events if e["type"] == "system" and e["subtype"] == "stream_retry"]
    # A cut before the first event withdraws nothing and is retried silently; the others announce it.
    assert len(retries) >= full - 2
    for notice in retries:
        assert ANSWER.startswith(notice["withdrawn_text"])
        assert notice["max_retries"] == MAX_CUTS and notice["error"]
    assert [n["attempt"] for n in retries] == sorted(n["attempt"] for n in retries)
    assistants = [e for e in events if e["type"] == "assistant"]
    assert [b["text"] for e in assistants for b in e["message"]["content"]] == [ANSWER]
    assert saved_assistant_texts(tmp_path) == [ANSWER]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("error_type", ["overloaded_error", "api_error"])
def test_an_error_event_mid_stream_is_retried_and_the_partial_text_withdrawn(
    tmp_path: Path, provider: str, error_type: str
) -> None:
    server, args = start(provider, SCRIPT)
    try:
        server.inject(Fault(error_event_after=4, error_type=error_type, message="try later"))
        done = run_catui(tmp_path, server, *args, "--include-partial-messages", retries=2)
        streamed = [r.body["stream"] for r in server.requests]
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    # Claude Code asks for the whole message without streaming after an error event (observed §11); catui
    # does so on the Anthropic API, and streams again on OpenAI-compatible servers (docs/decisions.md).
    assert streamed == ([True, False] if provider == "anthropic" else [True, True])
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["result"] == ANSWER and not events[-1]["is_error"]
    kinds = [(e["type"], e.get("subtype")) for e in events]
    retry_at = kinds.index(("system", "stream_retry"))
    notice = events[retry_at]
    assert f"{error_type}: try later" in notice["error"] and notice["attempt"] == 1
    # The partial events came before the notice, a whole new message after it.
    assert any(e["type"] == "stream_event" for e in events[:retry_at])
    after = [e["event"]["type"] for e in events[retry_at:] if e["type"] == "stream_event"]
    assert after[0] == "message_start" and after[-1] == "message_stop"
    assert saved_assistant_texts(tmp_path) == [ANSWER]


def test_the_retry_budget_ends_the_run_with_nothing_half_saved(tmp_path: Path) -> None:
    server, args = start("anthropic", SCRIPT)
    try:
        server.inject(*[Fault(cut_after_events=5)] * 3)
        done = run_catui(tmp_path, server, *args, retries=2)
    finally:
        server.stop()
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["is_error"] and "gave up after 2 retries" in events[-1]["result"]
    assert saved_assistant_texts(tmp_path) == []


def test_a_sub_agents_cut_stream_is_retried_the_same_way(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"first_user_contains": "Is the build", "last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_child", "name": "Agent",
             "input": {"description": "check ci", "prompt": "CHILD-JOB: look at CI", "subagent_type": "Explore"}}]},
        {"match": {"first_user_contains": "CHILD-JOB"}, "repeat": True, "content": [{"type": "text", "text": "CI is green."}]},
        {"match": {"first_user_contains": "Is the build", "last_is_tool_result": True},
         "content": [{"type": "text", "text": ANSWER}]},
    ]}
    server, args = start("anthropic", script)
    try:
        # The first request (the parent's) goes through; the second (the child's) is cut mid-message.
        server.inject(Fault(), Fault(cut_after_events=4))
        done = run_catui(tmp_path, server, *args, retries=2)
        bodies = server.bodies()
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    child_requests = [b for b in bodies if "CHILD-JOB" in json.dumps(b["messages"][0])]
    assert len(child_requests) == 2
    events = [json.loads(line) for line in done.stdout.splitlines()]
    notices = [e for e in events if e["type"] == "system" and e["subtype"] == "stream_retry"]
    assert len(notices) == 1 and notices[0]["parent_tool_use_id"] == "toolu_child"
    final_parent = bodies[-1]
    results = [b for b in final_parent["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert "CI is green." in json.dumps(results) and events[-1]["result"] == ANSWER


def test_the_terminal_says_the_partial_answer_was_withdrawn(tmp_path: Path) -> None:
    server, _ = start("anthropic", SCRIPT)
    project = tmp_path / "proj"
    project.mkdir()
    try:
        server.inject(Fault(error_event_after=4, error_type="overloaded_error", message="Overloaded"))
        done = subprocess.run(
            [sys.executable, "-m", "catui"], input="Is the build green?\n",
            cwd=project, env=cli_env(tmp_path, server, CATUI_MAX_RETRIES="2"),
            capture_output=True, text=True, timeout=120,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    out = done.stdout
    notice = out.index("Stream interrupted:")
    line = out[notice:].splitlines()[0]
    assert "overloaded_error: Overloaded" in line and "retrying (1/2)" in line and "withdrawn" in line
    # The whole answer follows the notice.
    assert ANSWER in out[notice:]
