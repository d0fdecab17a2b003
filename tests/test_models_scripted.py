"""ScriptedProvider and ScriptEngine: selection rules, event shape, concurrency, errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from catui.errors import ConfigurationError, ProviderError
from catui.models.base import ModelRequest, StreamEvent
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.replay.scripted import RequestView, ScriptedProvider, ScriptEngine, ScriptNoMatchError

TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Glob", "Read", "Agent")]


def request(text: str | list[dict[str, Any]] = "hello", **overrides: Any) -> ModelRequest:
    messages = overrides.pop("messages", None) or [{"role": "user", "content": text}]
    return ModelRequest(
        model=overrides.pop("model", "claude-sonnet-4-6"),
        messages=messages,
        tools=overrides.pop("tools", TOOLS),
        **overrides,
    )


async def run(provider: ScriptedProvider, req: ModelRequest) -> tuple[list[StreamEvent], dict[str, Any]]:
    events = [e async for e in provider.stream(req)]
    accumulator = MessageAccumulator()
    for event in events:
        accumulator.feed(event)
    assert accumulator.done
    return events, accumulator.message


def text_turn(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


async def test_turns_play_in_order_and_are_used_up() -> None:
    provider = ScriptedProvider({"turns": [text_turn("one"), text_turn("two")]})
    assert (await run(provider, request()))[1]["content"][0]["text"] == "one"
    assert (await run(provider, request()))[1]["content"][0]["text"] == "two"
    with pytest.raises(
        ScriptNoMatchError, match=r"no turn left for the request whose last user message is 'hello'"
    ):
        await run(provider, request())


async def test_every_match_rule() -> None:
    script = {
        "turns": [
            text_turn("model", match={"model_contains": "haiku"}, repeat=True),
            text_turn("system", match={"system_contains": ["reviewer", "strict"]}, repeat=True),
            text_turn("no-agent", match={"tools_exclude": ["Agent"]}, repeat=True),
            text_turn(
                "tool-result", match={"last_is_tool_result": True, "last_user_contains": "42"}, repeat=True
            ),
            text_turn(
                "first", match={"first_user_contains": "begin", "last_user_contains": "again"}, repeat=True
            ),
            text_turn("tools", match={"tools_include": ["Glob", "Read"]}, repeat=True),
        ]
    }
    provider = ScriptedProvider(script)

    async def answer(req: ModelRequest) -> str:
        return str((await run(provider, req))[1]["content"][0]["text"])

    assert await answer(request(model="claude-haiku-4-5-20251001")) == "model"
    assert await answer(request(system=[{"type": "text", "text": "a strict reviewer"}])) == "system"
    assert await answer(request(tools=TOOLS[:2])) == "no-agent"
    tool_result = [
        {"role": "user", "content": "begin"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "answer is 42"}],
        },
    ]
    assert await answer(request(messages=tool_result)) == "tool-result"
    conversation = [
        {"role": "user", "content": [{"type": "text", "text": "begin here"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "again please"},
    ]
    assert await answer(request(messages=conversation)) == "first"
    assert await answer(request("anything")) == "tools"
    with pytest.raises(ScriptNoMatchError):
        await answer(request(tools=[TOOLS[2]]))


async def test_events_have_the_api_shape_and_ids_are_deterministic() -> None:
    script = {
        "turns": [
            {
                "content": [
                    {"type": "thinking", "thinking": "think about the request first"},
                    {"type": "text", "text": "Looking around the repository now."},
                    {"type": "tool_use", "name": "Glob", "input": {"pattern": "**/*.md"}},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "/x"}, "id": "toolu_mine"},
                ]
            },
            {
                "content": [{"type": "tool_use", "name": "Glob", "input": {}}],
                "usage": {"input_tokens": 7, "output_tokens": 3},
            },
        ]
    }
    provider = ScriptedProvider(script)
    events, message = await run(provider, request())
    assert [b.get("id") for b in message["content"] if b["type"] == "tool_use"] == ["toolu_01", "toolu_mine"]
    assert message["content"][2]["input"] == {"pattern": "**/*.md"}
    assert message["content"][0]["signature"]
    assert message["stop_reason"] == "tool_use"
    text_deltas = [
        e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    ]
    json_deltas = [
        e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    ]
    assert len(text_deltas) > 1 and len(json_deltas) > 2
    assert message["usage"]["input_tokens"] > 0 and message["usage"]["output_tokens"] > 0
    _, second = await run(provider, request())
    assert second["content"][0]["id"] == "toolu_02"
    assert second["usage"]["input_tokens"] == 7 and second["usage"]["output_tokens"] == 3


async def test_explicit_stop_reason_error_turn_and_delay() -> None:
    script = {
        "turns": [
            text_turn("cut", stop_reason="max_tokens", delay_ms=5),
            {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}},
        ]
    }
    provider = ScriptedProvider(script)
    assert (await run(provider, request()))[1]["stop_reason"] == "max_tokens"
    with pytest.raises(ProviderError, match="529 overloaded_error: Overloaded") as caught:
        await run(provider, request())
    assert caught.value.status == 529 and caught.value.retryable


async def test_concurrent_sessions_never_get_the_same_turn() -> None:
    turns = [text_turn(f"answer {i}", delay_ms=1) for i in range(40)]
    provider = ScriptedProvider({"turns": turns})
    results = await asyncio.gather(*(run(provider, request(f"q{i}")) for i in range(40)))
    texts = sorted(r[1]["content"][0]["text"] for r in results)
    assert texts == sorted(f"answer {i}" for i in range(40))
    ids = {r[1]["id"] for r in results}
    assert len(ids) == 40


def test_yaml_and_json_files_and_the_no_match_message_names_the_file(tmp_path: Path) -> None:
    yaml_file = tmp_path / "script.yaml"
    yaml_file.write_text(
        "turns:\n  - match: {last_user_contains: hi}\n    content:\n      - {type: text, text: hey}\n"
    )
    json_file = tmp_path / "script.json"
    json_file.write_text(json.dumps({"turns": [text_turn("json")]}))
    engine = ScriptEngine.from_file(yaml_file)
    assert engine.select(RequestView(last_user_text="hi there")).number == 1
    long_text = "x" * 200
    with pytest.raises(ScriptNoMatchError) as caught:
        engine.select(RequestView(last_user_text=long_text))
    assert str(yaml_file) in str(caught.value) and repr("x" * 80) in str(caught.value)
    assert ScriptedProvider(json_file).engine.turns[0].content[0]["text"] == "json"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("turns: 3\n", "expected a `turns:` list"),
        ("turns:\n  - content: []\n", "turn 1: a turn needs `content` blocks or an `error`"),
        ("turns:\n  - {content: [{type: text, text: a}], mtach: {}}\n", "turn 1: unknown key 'mtach'"),
        (
            "turns:\n  - {content: [{type: text, text: a}], match: {last_user: x}}\n",
            "unknown match rule 'last_user'",
        ),
        ("turns:\n  - {content: [{type: image}]}\n", "turn 1: content[0]: a content block needs `type`"),
        ("turns:\n  - {content: [{type: tool_use, input: {}}]}\n", "a tool_use block needs a `name`"),
        ("turns:\n  - {content: [{type: text, text: a}], stop_reason: done}\n", "unknown stop_reason 'done'"),
        ("turns:\n  - {content: [{type: text, text: a}]\n  - oops: [\n", "line "),
        ("", "the file is empty"),
    ],
)
def test_invalid_scripts_say_what_and_where(tmp_path: Path, document: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(document)
    with pytest.raises(ConfigurationError) as caught:
        ScriptedProvider(path)
    assert str(path) in str(caught.value) and problem in str(caught.value)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"cannot read script .*nope\.yaml"):
        ScriptedProvider(tmp_path / "nope.yaml")
