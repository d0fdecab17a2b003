"""Compaction through the real CLI against the loopback Anthropic server at a small context window: the older
part of the conversation is summarised by the model, the run goes on from the summary, stream-json carries a
compact_boundary event, the transcript keeps everything and a resume starts from the summary; PreCompact
hooks run; a conversation that cannot fit even after compaction ends with an error saying so."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import catui
from catui.session.compaction import SUMMARISER_SYSTEM
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.sdk_backend import collect

MARKER = SUMMARISER_SYSTEM[:40]
WINDOW = "100000"  # usable 80000 tokens, auto-compaction from 92% of that (73600)


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    # Each file is about 10k tokens by catui's estimate: the kept tail (a fifth of 80000) holds one of them.
    (folder / "alpha.txt").write_text("".join(f"ALPHA line {i} of the first file\n" for i in range(1200)))
    (folder / "bravo.txt").write_text("".join(f"BRAVO line {i} of the second file\n" for i in range(1200)))
    return folder


def script(tmp_path: Path, *, second_usage: int = 80_000) -> dict[str, Any]:
    folder = project(tmp_path)
    return {"turns": [
        {"name": "summary", "match": {"system_contains": MARKER},
         "content": [{"type": "text", "text": "SUMMARY-OF-EARLIER-WORK: alpha.txt was read."}]},
        {"name": "read alpha", "match": {"first_user_contains": "COMPACT ME", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "alpha.txt")}}],
         "usage": {"input_tokens": 1000}},
        {"name": "read bravo", "match": {"last_is_tool_result": True, "last_user_contains": "ALPHA"},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "bravo.txt")}}],
         "usage": {"input_tokens": second_usage}},
        {"name": "finish", "match": {"last_is_tool_result": True, "last_user_contains": "BRAVO"},
         "content": [{"type": "text", "text": "All done."}]},
        {"name": "follow-up", "match": {"last_user_contains": "NEXT QUESTION"}, "repeat": True,
         "content": [{"type": "text", "text": "Next answer."}]},
    ]}


def run(tmp_path: Path, server: AnthropicTestServer, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catui", *args, "--output-format", "stream-json", "--verbose"],
        cwd=project(tmp_path), env=cli_env(tmp_path, server, CATUI_CONTEXT_WINDOW=WINDOW, **env),
        capture_output=True, text=True, timeout=120,
    )


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def transcript_lines(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    (path,) = (tmp_path / "catui-home" / "projects").glob(f"*/{session_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_auto_compaction_summarises_the_older_part_and_the_run_goes_on(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with AnthropicTestServer(script(tmp_path)) as server:
        done = run(tmp_path, server, "-p", "COMPACT ME please")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    out = events(done)
    result = out[-1]
    assert result["type"] == "result" and result["result"] == "All done." and not result["is_error"]
    (boundary,) = [e for e in out if e.get("subtype") == "compact_boundary"]
    assert boundary["type"] == "system" and boundary["compact_metadata"]["trigger"] == "auto"
    assert boundary["compact_metadata"]["pre_tokens"] >= 80_000
    # Requests: prompt, first result, the summary, then the compacted conversation.
    assert len(bodies) == 4
    summary_request = bodies[2]
    assert MARKER in json.dumps(summary_request["system"])
    assert "ALPHA line 1 " in json.dumps(summary_request["messages"])
    assert "BRAVO" not in json.dumps(summary_request["messages"])  # the kept tail is not summarised
    after = json.dumps(bodies[3]["messages"])
    assert "SUMMARY-OF-EARLIER-WORK" in after and "BRAVO line 1 " in after
    assert "ALPHA line 1 " not in after  # the summarised part is gone from the request
    first = bodies[3]["messages"][0]
    assert first["role"] == "user" and bodies[3]["messages"][1]["role"] == "assistant"
    # The summary request's cost counts.
    assert result["usage"]["input_tokens"] > 80_000

    lines = transcript_lines(tmp_path, result["session_id"])
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert ("system", "compact_boundary") in kinds
    boundary_line = lines[kinds.index(("system", "compact_boundary"))]
    assert boundary_line["compactMetadata"]["trigger"] == "auto" and boundary_line["parentUuid"] is None
    assert lines[kinds.index(("system", "compact_boundary")) + 1].get("isCompactSummary") is True
    # Everything stays in the file: the summarised messages are still there, before the boundary.
    assert "ALPHA line 1 " in json.dumps(lines[:kinds.index(("system", "compact_boundary"))])
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))  # where the CLI run saved it
    # The SDK's reader starts at the summary, as claude-agent-sdk's does, and lists no message twice.
    listed = catui.get_session_messages(result["session_id"], directory=str(tmp_path / "proj"))
    assert "SUMMARY-OF-EARLIER-WORK" in json.dumps(listed[0].message)
    assert "ALPHA line 1 " not in json.dumps([m.message for m in listed])
    assert len({m.uuid for m in listed}) == len(listed)


def test_resume_after_compaction_starts_from_the_summary_and_later_messages(tmp_path: Path) -> None:
    with AnthropicTestServer(script(tmp_path)) as server:
        first = run(tmp_path, server, "-p", "COMPACT ME please")
        assert first.returncode == 0, first.stderr
        again = run(tmp_path, server, "-c", "-p", "NEXT QUESTION here")
        bodies = server.bodies()
    assert again.returncode == 0, again.stderr
    assert events(again)[-1]["result"] == "Next answer."
    sent = bodies[-1]["messages"]
    text = json.dumps(sent)
    assert "SUMMARY-OF-EARLIER-WORK" in text and "BRAVO line 1 " in text and "All done." in text
    assert "ALPHA line 1 " not in text
    assert sent[-1]["role"] == "user" and "NEXT QUESTION" in json.dumps(sent[-1])


def test_pre_compact_hook_receives_the_trigger_and_can_add_instructions(tmp_path: Path) -> None:
    seen = tmp_path / "hook-input.json"
    hook = (f"cat > {seen}; printf '%s' "
            "'{\"hookSpecificOutput\": {\"hookEventName\": \"PreCompact\", "
            "\"additionalContext\": \"Keep the word PINEAPPLE.\"}}'")
    settings = {"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": hook}]}]}}
    with AnthropicTestServer(script(tmp_path)) as server:
        done = run(tmp_path, server, "-p", "COMPACT ME please", "--settings", json.dumps(settings))
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreCompact" and payload["trigger"] == "auto"
    assert payload["custom_instructions"] == ""
    assert "Keep the word PINEAPPLE." in json.dumps(bodies[2]["messages"])


def test_a_pre_compact_hook_that_blocks_leaves_the_conversation_whole_while_it_still_fits(tmp_path: Path) -> None:
    hook = "echo 'not now' >&2; exit 2"
    settings = {"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": hook}]}]}}
    # 62500 measured + the second file (~13000 estimated): past the threshold (73600), below the usable 80000.
    with AnthropicTestServer(script(tmp_path, second_usage=62_500)) as server:
        done = run(tmp_path, server, "-p", "COMPACT ME please", "--settings", json.dumps(settings))
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    assert events(done)[-1]["result"] == "All done."
    assert not [e for e in events(done) if e.get("subtype") == "compact_boundary"]
    assert len(bodies) == 3 and "ALPHA line 1 " in json.dumps(bodies[2]["messages"])


def test_a_conversation_that_cannot_fit_even_after_compaction_ends_with_a_clear_error(tmp_path: Path) -> None:
    with AnthropicTestServer(script(tmp_path)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "COMPACT ME please", "--output-format", "json"],
            cwd=project(tmp_path), env=cli_env(tmp_path, server, CATUI_CONTEXT_WINDOW="1000"),
            capture_output=True, text=True, timeout=120,
        )
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["is_error"]
    assert "does not fit the context window" in result["result"] and "even after compaction" in result["result"]


def test_a_malformed_window_setting_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    with AnthropicTestServer(script(tmp_path)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "hi"], cwd=project(tmp_path),
            env=cli_env(tmp_path, server, CATUI_CONTEXT_WINDOW="lots"), capture_output=True, text=True, timeout=60,
        )
    assert done.returncode != 0
    assert "CATUI_CONTEXT_WINDOW='lots'" in done.stderr and "whole number of tokens" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_sub_agent_compacts_its_own_conversation(tmp_path: Path) -> None:
    folder = project(tmp_path)
    child = {"tools_exclude": ["Agent"]}
    turns = [
        {"name": "summary", "match": {"system_contains": MARKER},
         "content": [{"type": "text", "text": "SUMMARY-OF-CHILD-WORK"}]},
        {"name": "parent calls", "match": {"tools_include": ["Agent"], "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Agent", "id": "toolu_parent_agent",
                      "input": {"description": "read both", "prompt": "CHILD TASK: read both files",
                                "subagent_type": "general-purpose"}}]},
        {"name": "parent ends", "match": {"tools_include": ["Agent"], "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Parent done."}]},
        {"name": "child alpha", "match": {**child, "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "alpha.txt")}}],
         "usage": {"input_tokens": 1000}},
        {"name": "child bravo", "match": {**child, "last_user_contains": "ALPHA"},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "bravo.txt")}}],
         "usage": {"input_tokens": 80_000}},
        {"name": "child ends", "match": {**child, "last_user_contains": "BRAVO"},
         "content": [{"type": "text", "text": "Child read both."}]},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done = run(tmp_path, server, "-p", "PARENT asks")
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    out = events(done)
    assert out[-1]["result"] == "Parent done."
    (boundary,) = [e for e in out if e.get("subtype") == "compact_boundary"]
    assert boundary["parent_tool_use_id"] == "toolu_parent_agent"
    assert boundary["compact_metadata"]["trigger"] == "auto"
    child_after = [b for b in bodies if "SUMMARY-OF-CHILD-WORK" in json.dumps(b["messages"])]
    assert len(child_after) == 1 and "ALPHA line 1 " not in json.dumps(child_after[0]["messages"])
    (child_file,) = (tmp_path / "catui-home" / "projects").glob("*/*/subagents/agent-*.jsonl")
    lines = [json.loads(line) for line in child_file.read_text().splitlines()]
    assert any(line.get("subtype") == "compact_boundary" for line in lines)
    # The main conversation was never compacted.
    (main_file,) = (tmp_path / "catui-home" / "projects").glob(f"*/{out[-1]['session_id']}.jsonl")
    assert "compact_boundary" not in main_file.read_text()


def test_a_request_refused_as_too_long_is_compacted_and_sent_again(tmp_path: Path) -> None:
    folder = project(tmp_path)
    turns = [
        {"name": "summary", "match": {"system_contains": MARKER},
         "content": [{"type": "text", "text": "SUMMARY-OF-EARLIER-WORK"}]},
        {"name": "read alpha", "match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "alpha.txt")}}]},
        {"name": "refused", "match": {"last_is_tool_result": True, "first_user_contains": "COMPACT ME"},
         "error": {"status": 400, "type": "invalid_request_error",
                   "message": "prompt is too long: 210000 tokens > 200000 maximum"}},
        {"name": "after", "match": {"first_user_contains": "SUMMARY-OF-EARLIER-WORK"},
         "content": [{"type": "text", "text": "Done after compaction."}]},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "COMPACT ME please", "--output-format", "stream-json", "--verbose"],
            cwd=folder, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=120)
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr + done.stdout
    out = events(done)
    assert out[-1]["result"] == "Done after compaction."
    (boundary,) = [e for e in out if e.get("subtype") == "compact_boundary"]
    assert boundary["compact_metadata"]["trigger"] == "auto"
    assert len(bodies) == 4 and "ALPHA line 1 " in json.dumps(bodies[2]["messages"])


def test_compact_by_hand_in_print_mode_on_a_continued_session(tmp_path: Path) -> None:
    turns = [
        {"name": "summary", "match": {"system_contains": MARKER},
         "content": [{"type": "text", "text": "SUMMARY-BY-HAND"}]},
        {"name": "later", "match": {"first_user_contains": "SUMMARY-BY-HAND"},
         "content": [{"type": "text", "text": "Going on from the summary."}]},
        {"name": "hello", "repeat": True, "content": [{"type": "text", "text": "Hello back."}]},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        empty = run(tmp_path, server, "-p", "/compact")
        assert empty.returncode == 1 and "nothing to compact" in events(empty)[-1]["result"]
        first = run(tmp_path, server, "-p", "hello there")
        assert first.returncode == 0, first.stderr
        compacted = run(tmp_path, server, "-c", "-p", "/compact keep the word MANGO")
        after = run(tmp_path, server, "-c", "-p", "and now?")
        bodies = server.bodies()
    assert compacted.returncode == 0, compacted.stderr
    out = events(compacted)
    (boundary,) = [e for e in out if e.get("subtype") == "compact_boundary"]
    assert boundary["compact_metadata"]["trigger"] == "manual" and boundary["compact_metadata"]["pre_tokens"] > 0
    assert out[-1]["type"] == "result" and out[-1]["result"].startswith("Compacted: ")
    summary_request = [b for b in bodies if MARKER in json.dumps(b["system"])]
    assert len(summary_request) == 1 and "keep the word MANGO" in json.dumps(summary_request[0]["messages"])
    assert events(after)[-1]["result"] == "Going on from the summary."


def test_the_sdk_compacts_a_resumed_session_on_a_compact_prompt(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))  # where the CLI run below saved it
    turns = [
        {"name": "summary", "match": {"system_contains": MARKER},
         "content": [{"type": "text", "text": "SUMMARY-FROM-SDK"}]},
        {"name": "hello", "repeat": True, "content": [{"type": "text", "text": "Hello back."}]},
    ]
    with AnthropicTestServer({"turns": turns}) as server:
        first = run(tmp_path, server, "-p", "hello there")
        session_id = events(first)[-1]["session_id"]
        options = catui.CatuiOptions(cwd=tmp_path / "proj", resume=session_id, env=server.env("test"))
        messages = asyncio.run(collect("/compact keep the word KIWI", options))
        bodies = server.bodies()
    boundary = [m for m in messages if getattr(m, "subtype", None) == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0].data["compact_metadata"]["trigger"] == "manual"
    result = messages[-1]
    assert result.subtype == "success" and result.result.startswith("Compacted: ")
    assert "keep the word KIWI" in json.dumps(bodies[-1]["messages"])
    assert "SUMMARY-FROM-SDK" in json.dumps(transcript_lines(tmp_path, session_id))
