"""The agent loop: multi-turn tool use, concurrency of read-only calls, max turns, abort, bad calls."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from catui.models.replay.scripted import ScriptedProvider
from catui.permissions.context import PermissionContext
from catui.session.events import (
    AssistantMessageEvent,
    Event,
    ResultEvent,
    TextDelta,
    ToolEndEvent,
    ToolStartEvent,
)
from catui.session.session import Session, SessionConfig
from catui.session.transcript import TranscriptWriter, read_transcript
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult
from catui.tools.registry import builtin_tools


class SleepInput(ToolInput):
    label: str
    seconds: float = 0.2


class RecordingTool(Tool):
    """A test tool that sleeps and records when each call ran."""

    name: ClassVar[str] = "Sleepy"
    input_model = SleepInput
    read_only: ClassVar[bool] = True
    log: ClassVar[list[tuple[str, float, float]]] = []

    @property
    def description(self) -> str:
        return "Sleeps, then answers with its label."

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        start = time.monotonic()
        await asyncio.sleep(args.seconds)
        self.log.append((args.label, start, time.monotonic()))
        return ToolResult(f"slept {args.label}")


class WritingSleepy(RecordingTool):
    name: ClassVar[str] = "SleepyWriter"
    read_only: ClassVar[bool] = False


def make_session(tmp_path: Path, script: dict[str, Any], *, tools: list[Tool] | None = None,
                 mode: str = "bypassPermissions", max_turns: int | None = None,
                 transcript: TranscriptWriter | None = None) -> Session:
    ctx = ToolContext(
        cwd=tmp_path, project_root=tmp_path,
        permissions=PermissionContext(mode=mode, working_directories=(tmp_path,)),  # type: ignore[arg-type]
    )
    return Session(
        SessionConfig(
            provider=ScriptedProvider(script),
            model="claude-sonnet-4-6",
            tools=tools if tools is not None else builtin_tools(),
            tool_context=ctx,
            max_turns=max_turns,
            transcript=transcript,
        )
    )


async def collect(session: Session, prompt: str) -> list[Event]:
    return [event async for event in session.run(prompt)]


def result_of(events: list[Event]) -> ResultEvent:
    assert isinstance(events[-1], ResultEvent)
    return events[-1]


async def test_multi_turn_reads_a_file_and_answers(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    script = {
        "turns": [
            {"match": {"last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(tmp_path / "notes.txt")}}]},
            {"match": {"last_user_contains": "beta"}, "content": [{"type": "text", "text": "The file has two lines."}]},
        ]
    }
    session = make_session(tmp_path, script)
    events = await collect(session, "What is in notes.txt?")
    result = result_of(events)
    assert result.subtype == "success" and not result.is_error
    assert result.result == "The file has two lines."
    assert result.num_turns == 2
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    tool_result = session.messages[2]["content"][0]
    assert tool_result["type"] == "tool_result" and "beta" in json.dumps(tool_result["content"])
    assert any(isinstance(e, TextDelta) for e in events)
    assert result.usage["output_tokens"] > 0 and "claude-sonnet-4-6" in result.model_usage


async def test_read_only_calls_run_concurrently_and_results_keep_tool_use_order(tmp_path: Path) -> None:
    RecordingTool.log = []
    calls = [{"type": "tool_use", "name": "Sleepy", "input": {"label": label, "seconds": secs}}
             for label, secs in (("slow", 0.3), ("fast", 0.05), ("mid", 0.15))]
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": calls},
        {"content": [{"type": "text", "text": "done"}]},
    ]}
    session = make_session(tmp_path, script, tools=[RecordingTool()])
    await collect(session, "go")
    finished = [label for label, _, _ in RecordingTool.log]
    assert finished == ["fast", "mid", "slow"], "concurrent calls finish in order of their durations"
    starts = {label: start for label, start, _ in RecordingTool.log}
    ends = {label: end for label, _, end in RecordingTool.log}
    assert starts["mid"] < ends["fast"] or starts["mid"] < ends["slow"], "calls overlapped"
    results = session.messages[2]["content"]
    assert [r["content"] for r in results] == ["slept slow", "slept fast", "slept mid"]


async def test_non_read_only_calls_run_one_after_another(tmp_path: Path) -> None:
    RecordingTool.log = []
    calls = [{"type": "tool_use", "name": "SleepyWriter", "input": {"label": label, "seconds": secs}}
             for label, secs in (("first", 0.1), ("second", 0.01))]
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": calls},
        {"content": [{"type": "text", "text": "done"}]},
    ]}
    session = make_session(tmp_path, script, tools=[WritingSleepy()])
    await collect(session, "go")
    (first, _, f_end), (second, s_start, _) = RecordingTool.log
    assert (first, second) == ("first", "second")
    assert s_start >= f_end, "a writing call starts only after the previous one ended"


async def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    script = {"turns": [{"repeat": True, "content": [
        {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.nothing"}}]}]}
    session = make_session(tmp_path, script, max_turns=3)
    events = await collect(session, "loop forever")
    result = result_of(events)
    assert result.subtype == "error_max_turns" and result.is_error
    assert result.num_turns == 3
    assert sum(isinstance(e, AssistantMessageEvent) for e in events) == 3


async def test_abort_ends_the_run_with_a_result(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "sleep 30"}}]},
        {"content": [{"type": "text", "text": "never"}]},
    ]}
    session = make_session(tmp_path, script)
    events: list[Event] = []
    started = time.monotonic()
    async for event in session.run("sleep"):
        events.append(event)
        if isinstance(event, ToolStartEvent):
            session.abort()
    result = result_of(events)
    assert result.is_error and result.subtype == "error_during_execution"
    assert time.monotonic() - started < 20, "the sleeping command was killed, not waited for"


async def test_unknown_tool_and_bad_arguments_become_error_results(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "name": "Teleport", "input": {}},
            {"type": "tool_use", "name": "Read", "input": {"path": "/etc/hostname"}},
            {"type": "tool_use", "name": "Read", "input": {"file_path": "/etc/hostname", "limit": "many"}},
        ]},
        {"content": [{"type": "text", "text": "recovered"}]},
    ]}
    session = make_session(tmp_path, script)
    events = await collect(session, "try things")
    assert result_of(events).result == "recovered"
    unknown, invalid, wrong_type = session.messages[2]["content"]
    assert unknown["is_error"] and unknown["content"] == (
        "<tool_use_error>Error: No such tool available: Teleport</tool_use_error>")
    assert invalid["is_error"] and "InputValidationError" in invalid["content"]
    assert "`file_path` is missing" in invalid["content"] and "`path`" in invalid["content"]
    assert wrong_type["is_error"] and "The parameter `limit` is invalid" in wrong_type["content"]
    assert "integer" in wrong_type["content"]
    ends = [e for e in events if isinstance(e, ToolEndEvent)]
    assert [e.is_error for e in ends] == [True, True, True]


async def test_print_mode_denial_is_reported_and_recorded(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    script = {"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(target), "content": "x"}}]},
        {"content": [{"type": "text", "text": "could not write"}]},
    ]}
    session = make_session(tmp_path, script, mode="dontAsk")
    result = result_of(await collect(session, "write a file"))
    assert not target.exists()
    denial = session.messages[2]["content"][0]
    assert denial["is_error"]
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "Write"


async def test_transcript_is_written_message_by_message(tmp_path: Path) -> None:
    path = tmp_path / "t" / "session.jsonl"
    writer = TranscriptWriter([path], session_id="s1", cwd=tmp_path)
    script = {"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}]},
        {"content": [{"type": "text", "text": "ok"}]},
    ]}
    session = make_session(tmp_path, script, transcript=writer)
    await collect(session, "list")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
    assert lines[1]["parentUuid"] == lines[0]["uuid"] and lines[0]["sessionId"] == "s1"
    assert read_transcript(path) == session.messages


async def test_provider_error_ends_the_run_cleanly(tmp_path: Path) -> None:
    script = {"turns": [{"error": {"status": 400, "type": "invalid_request_error", "message": "bad request"}}]}
    session = make_session(tmp_path, script)
    result = result_of(await collect(session, "hello"))
    assert result.is_error and result.subtype == "error_during_execution"
    assert "bad request" in result.result


@pytest.mark.parametrize("turns", [1, 2])
async def test_a_session_keeps_the_conversation_across_runs(tmp_path: Path, turns: int) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "first"}, "content": [{"type": "text", "text": "one"}]},
        {"match": {"first_user_contains": "first", "last_user_contains": "second"},
         "content": [{"type": "text", "text": "two"}]},
    ]}
    session = make_session(tmp_path, script)
    assert result_of(await collect(session, "first")).result == "one"
    if turns == 2:
        assert result_of(await collect(session, "second")).result == "two"
        assert len(session.messages) == 4


async def test_bash_sees_the_session_environment(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo value=$CATUI_TEST_VAR"}}]},
        {"content": [{"type": "text", "text": "ok"}]},
    ]}
    session = make_session(tmp_path, script)
    session.ctx.services.env = {"CATUI_TEST_VAR": "from-settings"}
    await collect(session, "print it")
    assert "value=from-settings" in json.dumps(session.messages[2]["content"][0]["content"])


async def test_an_overloaded_model_hands_the_turn_to_the_fallback_model(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"model_contains": "opus"}, "repeat": True,
         "error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}},
        {"match": {"model_contains": "sonnet"}, "content": [{"type": "text", "text": "answered by the fallback"}]},
    ]}
    session = make_session(tmp_path, script)
    session.config.model = "claude-opus-4-6"
    session.config.fallback = (ScriptedProvider(script), "claude-sonnet-4-6")
    events = await collect(session, "hello")
    result = result_of(events)
    assert result.result == "answered by the fallback" and not result.is_error
    assert session.config.model == "claude-sonnet-4-6"
    assert any(getattr(e, "subtype", "") == "model_fallback" for e in events)


async def test_without_a_fallback_an_overloaded_model_fails_the_run(tmp_path: Path) -> None:
    script = {"turns": [{"repeat": True, "error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}]}
    session = make_session(tmp_path, script)
    result = result_of(await collect(session, "hello"))
    assert result.is_error and "Overloaded" in result.result


async def test_abort_lands_while_the_model_has_not_answered_yet(tmp_path: Path) -> None:
    script = {"turns": [{"delay_ms": 20000, "content": [{"type": "text", "text": "too late"}]}]}
    session = make_session(tmp_path, script)
    started = time.monotonic()

    async def abort_soon() -> None:
        await asyncio.sleep(0.2)
        session.abort()

    aborter = asyncio.create_task(abort_soon())
    result = result_of(await collect(session, "slow model"))
    await aborter
    assert result.is_error and result.subtype == "error_during_execution"
    assert time.monotonic() - started < 10, "the abort did not wait for the model's answer"


async def test_stop_now_ends_the_stream_at_once_and_cancels_the_request(tmp_path: Path) -> None:
    script = {"turns": [{"delay_ms": 30_000, "content": [{"type": "text", "text": "too late"}]}]}
    session = make_session(tmp_path, script)
    events: list[Event] = []

    async def consume() -> None:
        async for event in session.run("hello"):
            events.append(event)

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    started = time.monotonic()
    session.stop_now()
    await asyncio.wait_for(consumer, 20)
    assert time.monotonic() - started < 10, "the stream waited for the model's 30 s answer"
    assert not any(isinstance(e, ResultEvent) for e in events)  # the caller reports a stop
    assert not session.is_running()
    assert session.ctx.abort.is_set()


async def test_events_emitted_between_runs_are_held_for_the_next_run(tmp_path: Path) -> None:
    script = {"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]}
    session = make_session(tmp_path, script)
    await collect(session, "first")
    early = TextDelta(text="from a teammate", agent_id="mate@team")
    session.emit(TextDelta(text="dropped", agent_id="mate@team"))  # plain emit between runs: nobody to show it
    session.emit_or_hold(early)
    events = await collect(session, "second")
    assert events[0] is early
    assert not any(isinstance(e, TextDelta) and e.text == "dropped" for e in events)
    assert not any(e is early for e in await collect(session, "third"))  # held once, shown once
