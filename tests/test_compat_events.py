"""Point 6's events and turns in the current profile, through the real CLI against the loopback Anthropic server:
``run_id`` on task events, ``task_updated``'s ``error``, ``task_progress``/``task_notification`` as observed, one
numbered ``result`` per turn with a notification turn's ``origin``, the tools-used reminder before a notification
(idle and mid-turn), and the failed text of an agent ended by an API error. The 2.1.92 profile keeps its shapes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.compat_cli import (
    CURRENT,
    GUARD_S,
    agent_call,
    bodies_with_first,
    last_user_blocks,
    result_text,
    stream_run,
    text,
    tool_results,
)

RUN_ID = re.compile(r"^[0-9a-z]{9}-[0-9a-f]{8}$")
REMINDER = "<system-reminder>\n<tools-used-before-summary>Bash</tools-used-before-summary>\n</system-reminder>\n"
API_FAILURE = ("Agent terminated early due to an API error: API Error: 400 bad child (error type unknown, HTTP 400, "
               "model sent to the API: claude-sonnet-5-5)")
CHILD_BASH = {"type": "tool_use", "id": "toolu_sh", "name": "Bash",
              "input": {"command": "echo hi", "description": "Say hi"}}
TIMING_KEYS = ("time_to_request_ms", "ttft_stream_ms", "first_content_frame_ms", "ttft_ms")
FAILING_CHILD = [{"match": {"first_user_contains": "Child one"},
                  "error": {"status": 400, "type": "invalid_request_error", "message": "bad child"}, "repeat": True}]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def child_with_bash(answer: str = "All good") -> list[dict[str, Any]]:
    return [{"match": {"first_user_contains": "Child one", "last_is_tool_result": False}, "content": [CHILD_BASH]},
            {"match": {"first_user_contains": "Child one"}, "content": text(answer), "repeat": True}]


def script(call: dict[str, Any], child: list[dict[str, Any]], *middle: dict[str, Any]) -> dict[str, Any]:
    return {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        *middle,
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("parent done"),
         "repeat": True},
        *child,
    ]}


def run(tmp_path: Path, repo: Path, turns: dict[str, Any], *args: str,
        **extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with AnthropicTestServer(turns) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions", *args)
        assert done.returncode == 0, done.stderr
        return lines, server.bodies()


def system(lines: list[dict[str, Any]], subtype: str) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "system" and line.get("subtype") == subtype]


def task_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "system" and str(line.get("subtype")).startswith("task_")]


def results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "result"]


def notification_turn_message(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of the user message that brought the notification (the first request that carries it)."""
    main = bodies_with_first(bodies, "Go")
    body = next(b for b in main if "<task-notification>" in json.dumps(b["messages"][-1]))
    return last_user_blocks(body)


def test_background_agent_events_turns_and_the_tools_used_reminder(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose")
    lines, bodies = run(tmp_path, repo, script(call, child_with_bash()), **CURRENT)
    events = task_lines(lines)
    run_id = events[0]["run_id"]
    assert RUN_ID.match(run_id) and all(e["run_id"] == run_id for e in events)
    assert list(events[0])[:3] == ["type", "subtype", "task_id"] and list(events[0])[3] == "run_id"
    changed = system(lines, "background_tasks_changed")
    assert changed[0]["tasks"][0]["run_id"] == run_id and changed[-1]["tasks"] == []
    # The set changes before the task's start is announced, and after its notification (as observed).
    assert lines.index(changed[0]) < lines.index(system(lines, "task_started")[0])
    assert lines.index(changed[-1]) > lines.index(system(lines, "task_notification")[0])
    progress = system(lines, "task_progress")
    assert progress and all(p["description"] == "Running Say hi" and p["subagent_type"] == "general-purpose"
                            for p in progress)
    # The ended task's task_updated comes first, then its notification with the report as summary.
    ended = [e for e in events if e["subtype"] in ("task_updated", "task_notification")]
    assert [e["subtype"] for e in ended] == ["task_updated", "task_notification"]
    assert ended[0]["patch"]["status"] == "completed" and "error" not in ended[0]["patch"]
    note = ended[1]
    assert note["summary"] == "All good" and note["summary_is_report"] is True and note["usage"]["tool_uses"] == 1
    # One result per turn, numbered; the notification's turn names its producer and the run.
    first, second = results(lines)
    assert (first["result_index"], second["result_index"]) == (0, 1) and "origin" not in first
    assert first["result"] == "parent done" and second["result"] == "noted"
    assert second["origin"] == {"kind": "task-notification", "producer": "session-task", "runId": run_id}
    # Each counts its own turn's requests, as 2.1.332's did (2, then 1), not the session's running total.
    assert (first["num_turns"], second["num_turns"]) == (2, 1)
    assert all("subagent_stats" in r for r in (first, second))
    for shown in (first, second):
        assert shown["api_error_status"] is None and shown["safety_stops"] == 0 and shown["queued_turn_count"] == 0
    # model_usage_since_last_result: the first result's is all of it; the two add up to the second's modelUsage.
    assert first["model_usage_since_last_result"] == first["modelUsage"]
    since = second["model_usage_since_last_result"]
    assert since and all(entry["outputTokens"] > 0 for entry in since.values())
    for model, total in second["modelUsage"].items():
        earlier = first["model_usage_since_last_result"].get(model, {}).get("outputTokens", 0)
        assert earlier + since.get(model, {}).get("outputTokens", 0) == total["outputTokens"]
    # The notification turn: the tools-used reminder, then the notification, as two text blocks.
    blocks = notification_turn_message(bodies)
    assert [b["type"] for b in blocks] == ["text", "text"] and blocks[0]["text"] == REMINDER
    assert blocks[1]["text"].startswith("<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\n")


def test_the_old_profile_keeps_its_event_and_result_shapes(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", run_in_background=True)
    lines, bodies = run(tmp_path, repo, script(call, child_with_bash()))
    events = task_lines(lines)
    assert events and all("run_id" not in e for e in events)
    assert all(p["description"] == "job toolu_a" and "subagent_type" not in p for p in system(lines, "task_progress"))
    ended = [e["subtype"] for e in events if e["subtype"] in ("task_updated", "task_notification")]
    assert ended == ["task_notification", "task_updated"]
    note = system(lines, "task_notification")[0]
    assert note["summary"] == 'Agent "job toolu_a" completed' and "summary_is_report" not in note
    assert len(results(lines)) == 2
    assert all(not {"result_index", "origin", "safety_stops", "model_usage_since_last_result", "api_error_status",
                    *TIMING_KEYS} & {*r} for r in results(lines))
    blocks = notification_turn_message(bodies)
    assert len(blocks) == 1 and blocks[0]["text"].startswith("<task-notification>")


@pytest.mark.parametrize("background", [True, False])
def test_an_agent_ended_by_an_api_error(tmp_path: Path, repo: Path, background: bool) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", run_in_background=background)
    lines, bodies = run(tmp_path, repo, script(call, FAILING_CHILD), **CURRENT)
    updated = [e for e in system(lines, "task_updated") if e["patch"]["status"] == "failed"]
    assert len(updated) == 1 and updated[0]["patch"]["error"] == API_FAILURE
    note, = system(lines, "task_notification")
    assert note["status"] == "failed" and note["summary"] == API_FAILURE and "usage" not in note
    assert "summary_is_report" not in note
    if background:
        text_sent = "".join(b["text"] for b in notification_turn_message(bodies))
        assert f'<summary>Agent "job toolu_a" failed: {API_FAILURE}</summary>' in text_sent
        assert "<tools-used-before-summary>" not in text_sent  # it used no tools
        return
    (block, _), = tool_results(lines)
    assert block.get("is_error") is True and result_text(block) == API_FAILURE


@pytest.mark.parametrize("extra", [CURRENT, {}], ids=["current", "2.1.92"])
def test_result_timings_measure_the_turns_first_request(tmp_path: Path, repo: Path, extra: dict[str, str]) -> None:
    """2.1.332's timing keys, all from the turn's start to its first request's frames: the first request is
    answered after ``delay_ms``, so its frames come at least that late; the second request's pause falls after
    them, inside ``duration_ms`` only. The 2.1.92 profile's result has none of them."""
    first_pause, second_pause = 300, 800
    turns = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [{**CHILD_BASH, "id": "toolu_main"}],
         "delay_ms": first_pause},
        {"match": {"last_is_tool_result": True}, "content": text("done"), "delay_ms": second_pause},
    ]}
    lines, _ = run(tmp_path, repo, turns, **extra)
    shown, = results(lines)
    if not extra:
        assert not set(TIMING_KEYS) & set(shown)
        return
    timings = [shown[key] for key in TIMING_KEYS]
    assert all(isinstance(value, int) for value in timings) and timings == sorted(timings)
    assert shown["ttft_stream_ms"] >= first_pause
    assert shown["duration_ms"] - shown["ttft_ms"] >= second_pause
    assert list(shown)[-1] == "uuid"


def test_old_profile_failure_text_is_unchanged(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose")
    lines, _ = run(tmp_path, repo, script(call, FAILING_CHILD))
    (block, _), = tool_results(lines)
    assert result_text(block).startswith('Agent "job toolu_a" (general-purpose) failed: ')
    assert "terminated early" not in result_text(block)


def test_json_output_prints_the_last_turns_numbered_result(tmp_path: Path, repo: Path) -> None:
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose")
    with AnthropicTestServer(script(call, child_with_bash())) as server:
        done = run_catui(repo, cli_env(tmp_path, server, **CURRENT), "-p", "Go", "--output-format", "json",
                         "--permission-mode", "bypassPermissions", timeout=GUARD_S)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["result"] == "noted" and shown["result_index"] == 1 and shown["safety_stops"] == 0
    assert shown["num_turns"] == 1
    assert list(shown)[-1] == "uuid" and shown["model_usage_since_last_result"]
    assert shown["origin"]["kind"] == "task-notification" and RUN_ID.match(shown["origin"]["runId"])
    assert shown["subagent_stats"]["completed"] == 1


def test_a_notification_that_joins_a_running_turn_has_the_reminder_too(tmp_path: Path, repo: Path) -> None:
    """The child ends while the parent is in a tool round: its notification rides on that round's results."""
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose")
    # The parent waits in Bash until the child's answer is in its output file, then keeps calling Bash until
    # the notification has come with a round (the race with the child's last step decides only how many rounds).
    wait = {"type": "tool_use", "id": "toolu_wait", "name": "Bash",
            "input": {"command": "until grep -qs 'All good' .catui/tasks/*.output; do sleep 0.05; done",
                      "description": "Wait for the child"}}
    again = {"type": "tool_use", "id": "toolu_again", "name": "Bash", "input": {"command": "true"}}
    turns = {"turns": [
        {"match": {"first_user_contains": "Go", "last_user_contains": "<task-notification>"},
         "content": text("saw it mid-turn"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go", "last_user_contains": "Async agent launched"}, "content": [wait]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": [again], "repeat": True},
        *child_with_bash(),
    ]}
    lines, bodies = run(tmp_path, repo, turns, **CURRENT)
    (only,) = results(lines)  # no notification turn: the running turn took it
    assert only["result"] == "saw it mid-turn" and only["result_index"] == 0 and "origin" not in only
    blocks = notification_turn_message(bodies)
    assert blocks[0]["type"] == "tool_result"
    assert len(blocks) == 3 and blocks[1]["text"] == REMINDER and "<task-notification>" in blocks[2]["text"]


def test_the_hand_back_names_a_foreground_grandchilds_tools(tmp_path: Path, repo: Path) -> None:
    """Tools used, in order of use, include those of a foreground grandchild (after the child's Agent call)."""
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose", run_in_background=False)
    nested = agent_call("toolu_g", "Grand one", subagent_type="general-purpose", run_in_background=False)
    family = [
        {"match": {"first_user_contains": "Grand one", "last_is_tool_result": False}, "content": [CHILD_BASH]},
        {"match": {"first_user_contains": "Grand one"}, "content": text("grand done"), "repeat": True},
        {"match": {"first_user_contains": "Child one", "last_is_tool_result": False}, "content": [nested]},
        {"match": {"first_user_contains": "Child one"}, "content": text("All good"), "repeat": True},
    ]
    lines, _ = run(tmp_path, repo, script(call, family), **CURRENT)
    (block, data), = tool_results(lines)
    assert result_text(block).startswith("  <tools-used-before-summary>Agent, Bash</tools-used-before-summary>\n  \n")
    assert data["content"] == [{"type": "text", "text": "All good"}]
    inner = next(b for line in lines if line.get("type") == "user" and line.get("parent_tool_use_id") == "toolu_a"
                 for b in line["message"]["content"] if b.get("type") == "tool_result" and b["tool_use_id"] == "toolu_g")
    assert result_text(inner).startswith("  <tools-used-before-summary>Bash</tools-used-before-summary>\n")


def test_a_driven_session_numbers_its_results_and_names_the_notification_run(tmp_path: Path, repo: Path) -> None:
    """``--input-format stream-json`` (the SDKs' transport): the same per-turn results as print mode."""
    call = agent_call("toolu_a", "Child one", subagent_type="general-purpose")
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "Go"}, "session_id": "",
                         "parent_tool_use_id": None})
    with AnthropicTestServer(script(call, child_with_bash())) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
             "--verbose", "--permission-mode", "bypassPermissions"],
            cwd=repo, env=cli_env(tmp_path, server, **CURRENT), input=prompt + "\n", capture_output=True, text=True,
            timeout=GUARD_S)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    first, second = results(lines)
    run_id = system(lines, "task_started")[0]["run_id"]
    assert (first["result_index"], second["result_index"]) == (0, 1) and "origin" not in first
    assert (first["num_turns"], second["num_turns"]) == (2, 1)
    assert second["origin"] == {"kind": "task-notification", "producer": "session-task", "runId": run_id}


def test_a_compaction_in_a_driven_session_counts_none_of_the_prompts_requests(tmp_path: Path, repo: Path) -> None:
    """``/compact``'s result says 0 (it ran no turn), and the next prompt still counts only its own request."""
    prompts = ["My favourite fruit is the mango", "/compact keep the fruit", "What next?"]
    stdin = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": p}, "session_id": "",
                                "parent_tool_use_id": None}) + "\n" for p in prompts)
    turns = {"turns": [
        {"match": {"system_contains": "working memory of a coding agent"}, "content": text("The user likes MANGO.")},
        {"content": text("Still here."), "repeat": True},
    ]}
    with AnthropicTestServer(turns) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
             "--verbose"],
            cwd=repo, env=cli_env(tmp_path, server, **CURRENT), input=stdin, capture_output=True, text=True,
            timeout=GUARD_S)
    assert done.returncode == 0, done.stderr
    shown = results([json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")])
    assert shown[1]["result"].startswith("Compacted:")
    assert [r["num_turns"] for r in shown] == [1, 0, 1] and [r["result_index"] for r in shown] == [0, 1, 2]
