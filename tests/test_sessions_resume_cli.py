"""Resume, continue and fork through the real CLI against the loopback Anthropic server: the next request
carries the old conversation, a fork leaves the old transcript as it was, a torn last line is skipped."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "FIRST"}, "repeat": True, "content": [{"type": "text", "text": "Answer one."}]},
    {"match": {"last_user_contains": "OTHER"}, "repeat": True, "content": [{"type": "text", "text": "Other answer."}]},
    {"repeat": True, "content": [{"type": "text", "text": "Later answer."}]},
]}


@pytest.fixture
def server() -> Any:
    with AnthropicTestServer(SCRIPT) as running:
        yield running


def catui(tmp_path: Path, server: AnthropicTestServer, *args: str, stdin: str | None = None,
          print_mode: bool = True) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    mode = ["--output-format", "json"] if print_mode else []
    return subprocess.run(
        [sys.executable, "-m", "catui", *args, *mode], cwd=project, env=cli_env(tmp_path, server),
        capture_output=True, text=True, timeout=60, input=stdin,
    )


def run_ok(tmp_path: Path, server: AnthropicTestServer, *args: str) -> dict[str, Any]:
    done = catui(tmp_path, server, *args)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of each message, the context reminder left out."""
    pairs = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = " ".join(b["text"] for b in blocks if b.get("type") == "text"
                        and not b["text"].startswith("<system-reminder>"))
        pairs.append((message["role"], text))
    return pairs


def transcript(tmp_path: Path, session_id: str) -> Path:
    found = list((tmp_path / "catui-home" / "projects").glob(f"*/{session_id}.jsonl"))
    assert len(found) == 1
    return found[0]


def test_continue_sends_the_latest_sessions_messages_and_keeps_its_id(tmp_path: Path, server: Any) -> None:
    first = run_ok(tmp_path, server, "-p", "FIRST question")
    second = run_ok(tmp_path, server, "-c", "-p", "a follow-up")
    assert second["session_id"] == first["session_id"] and second["result"] == "Later answer."
    sent = server.bodies()[-1]["messages"]
    assert texts(sent) == [("user", "FIRST question"), ("assistant", "Answer one."), ("user", "a follow-up")]
    # The context reminder is not sent twice: the resumed first message already carries it.
    assert json.dumps(sent).count("<system-reminder>") == 1
    lines = [json.loads(line) for line in transcript(tmp_path, first["session_id"]).read_text().splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
    # The appended lines continue the old parentUuid chain.
    assert lines[2]["parentUuid"] == lines[1]["uuid"]


def test_resume_by_id_picks_that_session_not_the_latest(tmp_path: Path, server: Any) -> None:
    older = run_ok(tmp_path, server, "-p", "FIRST question")
    run_ok(tmp_path, server, "-p", "OTHER question")
    resumed = run_ok(tmp_path, server, "--resume", older["session_id"], "-p", "back to the first")
    assert resumed["session_id"] == older["session_id"]
    assert texts(server.bodies()[-1]["messages"]) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "back to the first")]


def test_fork_session_gets_a_new_id_and_leaves_the_old_transcript_untouched(tmp_path: Path, server: Any) -> None:
    original = run_ok(tmp_path, server, "-p", "FIRST question")
    old_file = transcript(tmp_path, original["session_id"])
    before = old_file.read_bytes()
    chosen = str(uuid.uuid4())
    forked = run_ok(tmp_path, server, "-r", original["session_id"], "--fork-session", "--session-id", chosen,
                    "-p", "try another way")
    assert forked["session_id"] == chosen != original["session_id"]
    assert texts(server.bodies()[-1]["messages"]) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "try another way")]
    assert old_file.read_bytes() == before
    lines = [json.loads(line) for line in transcript(tmp_path, chosen).read_text().splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
    assert {line["sessionId"] for line in lines} == {chosen}
    assert lines[0]["forkedFrom"] == {"sessionId": original["session_id"]}
    # Without --session-id a fork gets a fresh id of its own.
    again = run_ok(tmp_path, server, "-c", "--fork-session", "-p", "once more")
    assert again["session_id"] not in (chosen, original["session_id"])


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path: Path, server: Any) -> None:
    first = run_ok(tmp_path, server, "-p", "FIRST question")
    path = transcript(tmp_path, first["session_id"])
    with path.open("a") as handle:
        handle.write('{"parentUuid": "x", "type": "assistant", "message": {"role": "assis')
    done = catui(tmp_path, server, "-c", "-p", "still there?")
    assert done.returncode == 0, done.stderr
    assert "the last line is not valid JSON" in done.stderr and str(path) in done.stderr
    assert texts(server.bodies()[-1]["messages"]) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "still there?")]


def test_an_unanswered_tool_call_at_the_end_is_dropped(tmp_path: Path, server: Any) -> None:
    first = run_ok(tmp_path, server, "-p", "FIRST question")
    path = transcript(tmp_path, first["session_id"])
    cut = {"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": first["session_id"],
           "message": {"role": "assistant", "content": [
               {"type": "tool_use", "id": "toolu_lost", "name": "Bash", "input": {"command": "sleep 100"}}]}}
    with path.open("a") as handle:
        handle.write(json.dumps(cut) + "\n")
    run_ok(tmp_path, server, "-c", "-p", "after the crash")
    assert texts(server.bodies()[-1]["messages"]) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "after the crash")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "x", "-r"], "--resume needs a session id in print mode"),
        (["-p", "x", "-r", "no-such-session"], "no saved session no-such-session"),
        (["-p", "x", "-c"], "--continue: no saved session for"),
        (["-p", "x", "--session-id", "abc"], "--session-id 'abc' is not a UUID"),
        (["-p", "x", "--fork-session"], "--fork-session needs --resume ID or --continue"),
    ],
)
def test_bad_resume_options_fail_in_one_line(tmp_path: Path, server: Any, args: list[str], message: str) -> None:
    done = catui(tmp_path, server, *args)
    assert done.returncode != 0
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert server.requests == []


def test_a_session_id_in_use_is_refused(tmp_path: Path, server: Any) -> None:
    chosen = str(uuid.uuid4())
    run_ok(tmp_path, server, "--session-id", chosen, "-p", "FIRST question")
    done = catui(tmp_path, server, "--session-id", chosen, "-p", "again")
    assert done.returncode == 1 and f"--session-id {chosen} is already in use" in done.stderr


def test_interactive_resume_without_an_id_offers_a_numbered_list(tmp_path: Path, server: Any) -> None:
    older = run_ok(tmp_path, server, "-p", "FIRST question")
    newer = run_ok(tmp_path, server, "-p", "OTHER question")
    done = catui(tmp_path, server, "-r", stdin="2\nwhere were we?\n", print_mode=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # Newest first: 1 is the OTHER session, 2 the FIRST one.
    assert out.index(newer["session_id"]) < out.index(older["session_id"])
    assert "1. " in out and "OTHER question" in out and "Resume which?" in out
    assert f"Resumed session {older['session_id']} (2 earlier messages)" in out
    assert texts(server.bodies()[-1]["messages"]) == [
        ("user", "FIRST question"), ("assistant", "Answer one."), ("user", "where were we?")]


def test_an_agents_initial_prompt_opens_the_conversation_once(tmp_path: Path, server: Any) -> None:
    agents = tmp_path / "proj" / ".catui" / "agents"
    agents.mkdir(parents=True)
    (agents / "opener.md").write_text(
        "---\nname: opener\ndescription: Opens with a ritual.\ninitialPrompt: OPENING-RITUAL\n---\nYou open.\n")
    first = run_ok(tmp_path, server, "--agent", "opener", "-p", "FIRST question")
    assert "OPENING-RITUAL" in json.dumps(server.bodies()[-1]["messages"][-1])
    resumed = run_ok(tmp_path, server, "--agent", "opener", "-c", "-p", "next step")
    assert resumed["session_id"] == first["session_id"]
    sent = server.bodies()[-1]["messages"]
    assert json.dumps(sent).count("OPENING-RITUAL") == 1 and texts(sent)[-1] == ("user", "next step")
