"""Issue 31: a background session is called by its prompt until a model labels it (2–4 lowercase words, unique among
running sessions, asked again when taken), and its state after a turn comes from Claude Code's plain markers or a
classifier model's JSON. Real detached sessions against the loopback server, plus the pure text functions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from catui.bgsessions import classify
from catui.bgsessions.classify import CLASSIFIER_SYSTEM, NAMER_SYSTEM
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import GUARD_S, bg_repo, catui, kill_all, session_row, start, wait_for  # noqa: F401 - bg_repo: the repo fixture
from tests.support.cli_env import cli_env


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def side_bodies(server: AnthropicTestServer, system: str, needle: str) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if system in json.dumps(b.get("system")) and needle in json.dumps(b)]


def test_names_come_from_the_prompt_then_a_unique_label_and_states_from_markers_or_the_classifier(
        tmp_path: Path, repo: Path) -> None:
    namer = {"system_contains": NAMER_SYSTEM}
    script = {"turns": [
        {"match": namer | {"last_user_contains": "tidy the parser again"}, "content": text("Parser Cleanup")},
        {"match": namer | {"last_user_contains": "tidy the parser again"}, "content": text("parser followup")},
        {"match": namer | {"last_user_contains": "tidy the parser"}, "content": text("Parser Cleanup")},
        {"match": {"system_contains": CLASSIFIER_SYSTEM, "last_user_contains": "summarize it"},
         "content": text('```json\n{"state": "working", "detail": "waits for the report", "tempo": "idle"}\n```')},
        {"match": {"last_user_contains": "tidy the parser again"},
         "content": text("I looked at the parser. Which file should I tidy?")},
        {"match": {"last_user_contains": "tidy the parser"}, "content": [
            {"type": "tool_use", "id": "toolu_t", "name": "Write",
             "input": {"file_path": str(repo / "tidy.txt"), "content": "tidy\n"}}]},
        {"match": {"last_is_tool_result": True}, "content": text("Tidied parser.py.\nresult: parser tidied")},
        {"match": {"last_user_contains": "summarize it"}, "content": text("The module parses TOML files.")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        first = start(repo, env, "tidy the parser\n\n  please")
        # until the first turn has ended, the session is called by its prompt (on one line)
        row = wait_for("the permission request", session_row(repo, env, first, state="blocked"))
        assert row["name"] == "tidy the parser please" and row["needs"].startswith("permission for Write(")
        subprocess.run([sys.executable, "-m", "catui", "attach", first], cwd=repo, env=env, input="y\n",
                       capture_output=True, text=True, timeout=GUARD_S)
        # "result: …" settles the state without a classifier request; the label is lower-cased
        row = wait_for("the label", session_row(repo, env, first, name="parser cleanup"))
        assert row["state"] == "done" and row["status"] == "idle"
        assert not side_bodies(server, CLASSIFIER_SYSTEM, "tidy the parser")
        assert catui(repo, env, "logs", "parser cleanup").returncode == 0  # the label names it everywhere

        second = start(repo, env, "tidy the parser again")
        # a closing question blocks it on that question; the label the model repeats is taken, so it is asked again
        row = wait_for("the second label", session_row(repo, env, second, name="parser followup"))
        assert row["state"] == "blocked" and row["needs"] == "Which file should I tidy?"
        asks = side_bodies(server, NAMER_SYSTEM, "tidy the parser again")
        assert len(asks) == 2 and all("Already taken (pick another): parser cleanup" in json.dumps(a) for a in asks)

        third = start(repo, env, "summarize it", "--name", "summary")
        # no marker: the classifier model decides (here: still working, though the turn has ended)
        row = wait_for("the classified state", session_row(repo, env, third, state="working", status="idle"))
        assert row["name"] == "summary"  # a --name is never replaced: no namer request
        assert not side_bodies(server, NAMER_SYSTEM, "summarize it")
        (asked,) = side_bodies(server, CLASSIFIER_SYSTEM, "summarize it")
        assert "The module parses TOML files." in json.dumps(asked)


def test_preclassify_reads_claude_codes_plain_markers() -> None:
    def state(reply: str) -> tuple[str, str | None] | None:
        found = classify.preclassify(reply)
        return (found.state, found.needs) if found else None

    assert state("Changed it.\nresult: tests pass") == ("done", None)
    assert classify.preclassify("x\nresult: tests pass").output == {"result": "tests pass"}  # type: ignore[union-attr]
    assert state("Half done.\nresult: step one\nnext: step two") == ("working", None)
    assert state("Tried everything.\nfailed: the API is gone") == ("failed", None)
    assert state("Stopped.\nblocked: need the staging password") == ("blocked", "need the staging password")
    assert state("Found two fixes. Add it to this PR or open a new one?") == (
        "blocked", "Add it to this PR or open a new one?")
    assert state("Pushed. Waiting for CI to finish") == ("working", None)
    assert state("Draft is ready, awaiting your approval") == ("blocked", "awaiting your approval")
    assert state("All set. No action needed.") == ("done", None)
    assert state("Here is the fix:\n```\nresult: not a marker\n```") is None  # inside a code fence
    assert state("The cause is a race in the cache.") is None  # a model decides


def test_the_classifier_answer_is_checked_and_labels_are_cleaned() -> None:
    parsed = classify.parse_classification('{"state": "done", "tempo": "active", "needs": "x", '
                                           '"output": {"result": "ok", "extra": "dropped"}}', "working")
    assert parsed is not None and (parsed.state, parsed.tempo, parsed.needs, parsed.output) == (
        "done", "idle", None, {"result": "ok"})
    assert classify.parse_classification('{"state": "sleeping"}', "blocked").state == "blocked"  # type: ignore[union-attr]
    assert classify.parse_classification("no json here", "working") is None
    assert classify.clean_label('  "Parser Cleanup"\n') == "parser cleanup"
    assert classify.clean_label("untitled task") is None and classify.clean_label("") is None
    assert len(classify.clean_label("a" * 100) or "") == classify.LABEL_CHARS
    assert classify.prompt_name("fix\n  the   bug") == "fix the bug"
