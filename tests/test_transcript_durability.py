"""Transcripts under attack: a full disk, a read-only disk, a torn last line, kill -9 mid-compaction.

The promise (docs/sessions.md, "What a transcript guarantees"): every line is
written whole or not at all, a line that cannot be written is an error the user
sees (print mode exits 1), the next line never glues onto a torn one, and a
compaction's boundary, summary and kept messages land together.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from catui.paths import project_slug
from catui.session.store import conversation, read_records
from catui.session.transcript import TranscriptWriteError, TranscriptWriter, read_transcript, torn_compactions
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui
from tests.support.small_disk import fill, remount_read_only, small_tmpfs

SRC = Path(__file__).resolve().parents[1] / "src"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines() if line.strip()]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_a_full_disk_leaves_whole_lines_only_and_the_unsaved_ones_follow_when_space_returns(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", 64 * 1024) as disk:
        path = disk / "s.jsonl"
        writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
        writer.append(user("first"))
        filler = fill(disk, 2048)
        big = "x" * 20_000
        with pytest.raises(TranscriptWriteError, match=r"could not save the conversation to .*s\.jsonl: No space"):
            writer.append(user(big))
        # Complete or absent: the short write of the big line was undone.
        assert [line["message"]["content"][0]["text"] for line in lines_of(path)] == ["first"]
        with pytest.raises(TranscriptWriteError):
            writer.append(user("third"))  # still full: it waits behind the big one, in order
        assert writer.unsaved_paths == [path]
        filler.unlink()
        writer.append(user("fourth"))
        texts = [line["message"]["content"][0]["text"] for line in lines_of(path)]
        assert texts == ["first", big, "third", "fourth"]
        chain = lines_of(path)
        assert all(chain[i]["parentUuid"] == chain[i - 1]["uuid"] for i in range(1, len(chain)))
        assert writer.unsaved_paths == []


def test_a_read_only_disk_is_an_error_and_the_file_is_unchanged(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", 64 * 1024) as disk:
        path = disk / "s.jsonl"
        writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
        writer.append(user("kept"))
        remount_read_only(disk)
        with pytest.raises(TranscriptWriteError, match="Read-only file system"):
            writer.append(user("lost?"))
        assert len(lines_of(path)) == 1


def test_the_next_line_never_glues_onto_a_torn_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = json.dumps({"type": "user", "message": user("before"), "uuid": "u1"})
    path.write_text(whole + "\n" + '{"type": "assistant", "message": {"role": "assis', encoding="utf-8")
    writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
    writer.append(user("after"))
    read = read_records(path)
    assert [r["message"]["content"][0]["text"] for r in read.records] == ["before", "after"]
    assert len(read.warnings) == 1 and "line 2 is not valid JSON" in read.warnings[0]


def test_text_that_is_not_unicode_round_trips_through_the_transcript(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    odd_name = os.fsdecode(b"/repo/caf\xe9.txt")  # a Latin-1 file name, read with surrogateescape
    lone = "half a pair: \ud83d"
    TranscriptWriter([path], session_id="s", cwd=tmp_path).append(user(odd_name + " " + lone))
    path.read_bytes().decode("utf-8")  # the file stays valid UTF-8
    assert read_transcript(path)[0]["content"][0]["text"] == odd_name + " " + lone


def test_a_boundary_without_its_summary_does_not_resume_from_nothing(tmp_path: Path) -> None:
    """A transcript from a writer that appended the three separately and died after the boundary."""
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
    writer.append(user("one"))
    writer.append({"role": "assistant", "content": [{"type": "text", "text": "two"}]})
    writer.append_system("compact_boundary", "Conversation compacted", {"compactMetadata": {"trigger": "auto"}})
    messages = conversation(read_records(path).records)
    assert [m["content"][0]["text"] for m in messages] == ["one", "two"]
    writer.append_compaction({"trigger": "auto", "preTokens": 9}, user("SUMMARY"),
                             [{"role": "assistant", "content": [{"type": "text", "text": "two"}]}])
    messages = conversation(read_records(path).records)
    assert [m["content"][0]["text"] for m in messages] == ["SUMMARY", "two"]
    assert [m["content"][0]["text"] for m in read_transcript(path)] == ["SUMMARY", "two"]


KILL_LOOP_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from catui.session.transcript import TranscriptWriter
    path = Path(sys.argv[1])
    writer = TranscriptWriter([path], session_id="s", cwd=path.parent)
    kept = [{"role": "assistant", "content": [{"type": "text", "text": "k" * 3000}]} for _ in range(20)]
    n = 0
    print("ready", flush=True)
    while True:
        n += 1
        writer.append({"role": "user", "content": [{"type": "text", "text": f"m{n}" + "p" * 5000}]})
        writer.append_compaction({"trigger": "auto", "preTokens": n}, {"role": "user", "content": "S%d" % n}, kept)
""")


def test_kill_9_at_random_moments_never_leaves_a_boundary_without_its_summary(tmp_path: Path) -> None:
    rng = random.Random(26)
    for trial in range(12):
        path = tmp_path / f"t{trial}.jsonl"
        child = subprocess.Popen([sys.executable, "-c", KILL_LOOP_CHILD, str(path)], stdout=subprocess.PIPE,
                                 env={**os.environ, "PYTHONPATH": str(SRC)})
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.25))
        child.send_signal(signal.SIGKILL)
        child.wait()
        records = read_records(path).records
        torn = torn_compactions(records)
        # A kill can cut even one write short, but only the last batch: every earlier boundary is whole.
        boundaries = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
        for index in boundaries:
            if str(records[index]["uuid"]) in torn:
                assert index == boundaries[-1], trial
                continue
            following = records[index + 1: index + 22]
            assert len(following) == 21 and following[0].get("isCompactSummary"), trial
        # Resuming gives a whole summary and its 20 kept messages, or (a torn last batch, or a kill before
        # any compaction) the messages before it: never a summary without all of its kept messages.
        messages = conversation(records)
        assert messages, trial
        summaries = [i for i, m in enumerate(messages) if str(m.get("content", "")).startswith("S")]
        if summaries:
            assert summaries == [0] and len(messages) >= 21, trial
            assert all(m["content"][0]["text"] == "k" * 3000 for m in messages[1:21]), trial


SCRIPT: dict[str, Any] = {"turns": [
    {"match": {"last_user_contains": "long"}, "repeat": True, "content": [{"type": "text", "text": "A" * 30_000}]},
    {"repeat": True, "content": [{"type": "text", "text": "short"}]},
]}


def test_print_mode_exits_1_and_says_so_when_the_transcript_fills_the_disk(tmp_path: Path) -> None:
    """The real CLI: the sessions folder is a small tmpfs; the answer does not fit; then space returns."""
    project = tmp_path / "proj"
    project.mkdir()
    sessions = tmp_path / "catui-home" / "projects" / project_slug(project)
    with AnthropicTestServer(SCRIPT) as server, small_tmpfs(sessions, 16 * 1024) as disk:
        env = cli_env(tmp_path, server)
        done = run_catui(project, env, "-p", "write a long answer", "--output-format", "json", timeout=60)
        assert done.returncode == 1, done.stdout + done.stderr
        result = json.loads(done.stdout)
        assert result["is_error"] and "could not save the conversation" in result["result"]
        assert "No space left on device" in result["result"]
        (transcript,) = disk.glob("*.jsonl")
        assert [line["type"] for line in lines_of(transcript)] == ["user"]  # whole lines only
        resumed = run_catui(project, env, "-c", "-p", "again", "--output-format", "json", timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    sent = server.bodies()[-1]["messages"]
    # The resumed conversation is exactly what was saved whole: the first prompt, then the new one.
    assert [(m["role"], m["content"][-1]["text"]) for m in sent] == [("user", "write a long answer"),
                                                                     ("user", "again")]


def test_a_title_added_to_a_torn_transcript_is_its_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catui.sdk.sessions import get_session_info, rename_session

    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    project = tmp_path / "proj"
    project.mkdir()
    folder = tmp_path / "home" / "projects" / project_slug(project)
    folder.mkdir(parents=True)
    path = folder / "abc.jsonl"
    whole = json.dumps({"type": "user", "message": user("hello"), "uuid": "u1", "sessionId": "abc"})
    path.write_text(whole + "\n" + '{"type": "assistant", "mess', encoding="utf-8")
    rename_session("abc", "A title", directory=str(project))
    info = get_session_info("abc", directory=str(project))
    assert info is not None and info.custom_title == "A title"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[1] == '{"type": "assistant", "mess' and json.loads(lines[2])["customTitle"] == "A title"


def test_a_streamed_sdk_prompt_with_a_malformed_block_is_refused_naming_it() -> None:
    from catui.errors import ConfigurationError
    from catui.sdk._internal.prompts import prompt_from_message

    message = {"type": "user", "message": {"role": "user", "content": [{"type": "image", "source": "x.png"}]}}
    with pytest.raises(ConfigurationError, match=r"streamed prompt message 2: content block 0 \('image'\): "
                                                 r"needs a 'source' object"):
        prompt_from_message(message, 2)


def test_kill_9_of_the_real_cli_at_random_moments_leaves_a_resumable_transcript(tmp_path: Path) -> None:
    """The CLI mid-run (tool calls, lines being appended), killed at random; every line parses and -c resumes."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("".join(f"note {i}\n" for i in range(300)))
    read_notes = {"type": "tool_use", "name": "Read", "input": {"file_path": str(project / "notes.txt")}}
    script = {"turns": [
        {"match": {"last_user_contains": "resume check"}, "repeat": True,
         "content": [{"type": "text", "text": "resumed"}]},
        {"repeat": True, "match": {"last_is_tool_result": False}, "content": [read_notes]},
        {"repeat": True, "match": {"last_is_tool_result": True}, "content": [read_notes]},
    ]}
    rng = random.Random(2026)
    folder = tmp_path / "catui-home" / "projects" / project_slug(project)

    def lines_written(known: set[Path]) -> int:
        """Lines in the transcripts begun since ``known`` was listed (this trial's run)."""
        fresh = [path for path in folder.glob("*.jsonl") if path not in known]
        return max((path.read_bytes().count(b"\n") for path in fresh), default=0)

    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server)
        for trial in range(5):
            known = set(folder.glob("*.jsonl"))
            child = subprocess.Popen([sys.executable, "-m", "catui", "-p", f"loop {trial}", "--max-turns", "40"],
                                     cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # Kill once the run is appending lines (a loaded machine can take seconds to start one), at a
            # random moment after that; the guard only stops a broken run from hanging the test.
            guard = time.monotonic() + 120
            while lines_written(known) <= 3 and child.poll() is None and time.monotonic() < guard:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.8))
            child.send_signal(signal.SIGKILL)
            child.wait()
        written = [len(read_records(path).records) for path in folder.glob("*.jsonl")]
        assert max(written) > 3, written  # the kills came mid-run, between appended lines
        for transcript in folder.glob("*.jsonl"):
            read = read_records(transcript)
            assert read.warnings == [], read.warnings  # no torn line, none glued
            messages = conversation(read.records)
            assert not messages or messages[-1]["role"] in ("user", "assistant")
        done = run_catui(project, env, "-c", "-p", "resume check", timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "resumed", done.stderr


def test_a_compaction_cut_short_on_disk_is_ignored_whole(tmp_path: Path) -> None:
    """kill -9 can stop even one write() part way: a batch missing lines counts as no compaction at all."""
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
    writer.append(user("one"))
    writer.append({"role": "assistant", "content": [{"type": "text", "text": "two"}]})
    before = path.stat().st_size
    kept = [{"role": "assistant", "content": [{"type": "text", "text": f"kept {n}"}]} for n in range(3)]
    writer.append_compaction({"trigger": "auto", "preTokens": 9}, user("SUMMARY"), kept)
    whole = path.read_bytes()
    assert [m["content"][0]["text"] for m in read_transcript(path)] == ["SUMMARY", "kept 0", "kept 1", "kept 2"]
    lines = whole[before:].splitlines(keepends=True)
    path.write_bytes(whole[:before] + b"".join(lines[:-1]))  # the last kept line never reached the disk
    records = read_records(path).records
    assert len(torn_compactions(records)) == 1
    assert [m["content"][0]["text"] for m in conversation(records)] == ["one", "two"]
    assert [m["content"][0]["text"] for m in read_transcript(path)] == ["one", "two"]
