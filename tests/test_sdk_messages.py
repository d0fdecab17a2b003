"""Session events become claude-agent-sdk-named messages (catui.sdk.types)."""

from __future__ import annotations

from catui.sdk._internal.messages import content_blocks, message_from_event
from catui.sdk.types import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from catui.session.events import (
    AssistantMessageEvent,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    TextDelta,
    ToolStartEvent,
    UserMessageEvent,
)


def test_blocks_keep_their_fields_and_unknown_kinds_stay_dicts() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    blocks = content_blocks(
        [
            {"type": "text", "text": "hi"},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x", "is_error": True},
            image,
        ]
    )
    assert blocks == [
        TextBlock("hi"),
        ThinkingBlock("hmm", "sig"),
        ToolUseBlock("toolu_1", "Read", {"file_path": "/a"}),
        ToolResultBlock("toolu_1", "x", True),
        image,
    ]
    assert content_blocks("plain") == [TextBlock("plain")]


def test_a_sub_agents_assistant_message_carries_its_parent_tool_use_id() -> None:
    event = AssistantMessageEvent(
        message={"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        model="claude-haiku-4-5",
        uuid="0d3c-11",
        agent_id="a123",
        parent_tool_use_id="toolu_9",
    )
    message = message_from_event(event, "sess", last_usage={"output_tokens": 3})
    assert isinstance(message, AssistantMessage)
    assert message.parent_tool_use_id == "toolu_9"
    assert message.model == "claude-haiku-4-5"
    assert message.content == [TextBlock("done")]
    assert message.usage == {"output_tokens": 3}
    assert message.session_id == "sess"


def test_user_message_gets_the_structured_tool_result() -> None:
    event = UserMessageEvent(
        message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        tool_use_results={"t1": {"status": "completed", "agentId": "a1"}},
        parent_tool_use_id=None,
    )
    message = message_from_event(event, "sess")
    assert isinstance(message, UserMessage)
    assert message.tool_use_result == {"status": "completed", "agentId": "a1"}
    assert message.content == [ToolResultBlock("t1", "ok", None)]


def test_task_events_become_task_message_subclasses_of_system_message() -> None:
    started = message_from_event(
        SystemEvent(
            subtype="task_started",
            data={"task_id": "a1", "tool_use_id": "t1", "description": "Look", "task_type": "local_agent",
                  "prompt": "look around"},
        ),
        "sess",
    )
    assert isinstance(started, TaskStartedMessage) and isinstance(started, SystemMessage)
    assert (started.task_id, started.tool_use_id, started.task_type, started.description) == (
        "a1", "t1", "local_agent", "Look",
    )
    assert started.session_id == "sess" and started.data["prompt"] == "look around"

    progress = message_from_event(
        SystemEvent(subtype="task_progress", data={"task_id": "a1", "description": "Look", "last_tool_name": "Glob",
                                                   "usage": {"total_tokens": 10, "tool_uses": 1, "duration_ms": 5}}),
        "sess",
    )
    assert isinstance(progress, TaskProgressMessage)
    assert progress.usage == {"total_tokens": 10, "tool_uses": 1, "duration_ms": 5}
    assert progress.last_tool_name == "Glob"

    done = message_from_event(
        SystemEvent(subtype="task_notification", data={"task_id": "a1", "status": "completed",
                                                       "output_file": "/tmp/x", "summary": "Agent done"}),
        "sess",
    )
    assert isinstance(done, TaskNotificationMessage)
    assert (done.status, done.output_file, done.summary, done.usage) == ("completed", "/tmp/x", "Agent done", None)

    other = message_from_event(SystemEvent(subtype="compact_boundary", data={"x": 1}), "sess")
    assert type(other) is SystemMessage and other.data["x"] == 1


def test_only_the_main_agents_result_becomes_a_result_message() -> None:
    fields = dict(
        subtype="success", is_error=False, result="fine", session_id="s", num_turns=2, duration_ms=7,
        duration_api_ms=3, usage={"input_tokens": 1}, model_usage={"m": {"costUSD": 0.0}}, total_cost_usd=0.0,
        permission_denials=[{"tool_name": "Bash"}], stop_reason="end_turn",
    )
    main = message_from_event(ResultEvent(**fields), "s")  # type: ignore[arg-type]
    assert isinstance(main, ResultMessage)
    assert (main.result, main.num_turns, main.permission_denials, main.model_usage) == (
        "fine", 2, [{"tool_name": "Bash"}], {"m": {"costUSD": 0.0}},
    )
    assert message_from_event(ResultEvent(**fields, agent_id="a1"), "s") is None  # type: ignore[arg-type]


def test_partials_pass_through_and_internal_events_are_hidden() -> None:
    partial = message_from_event(StreamEventRaw(event={"type": "ping"}, parent_tool_use_id="t2"), "s")
    assert isinstance(partial, StreamEvent) and partial.parent_tool_use_id == "t2"
    assert message_from_event(TextDelta(text="x"), "s") is None
    assert message_from_event(ToolStartEvent(tool_use_id="t", name="Read", input={}), "s") is None


def test_a_sub_agents_task_events_inherit_its_parent_tool_use_id() -> None:
    from types import SimpleNamespace

    from catui.sdk import CatuiClient

    client = CatuiClient()
    driver = client._driver
    driver._app = SimpleNamespace(session=SimpleNamespace(session_id="s"))  # type: ignore[assignment]
    driver._deliver(
        AssistantMessageEvent(message={"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_x", "name": "Read", "input": {}}]}, model="m", agent_id="a1",
                              parent_tool_use_id="toolu_outer")
    )
    driver._deliver(SystemEvent(subtype="task_started", data={"task_id": "a2", "tool_use_id": "toolu_inner"},
                                agent_id="a1"))
    driver._deliver(SystemEvent(subtype="task_started", data={"task_id": "a1"}))
    delivered = [driver._outbox.get_nowait() for _ in range(3)]
    assert [getattr(m, "parent_tool_use_id", None) for m in delivered] == ["toolu_outer", "toolu_outer", None]
    assert isinstance(delivered[1], TaskStartedMessage) and delivered[1].tool_use_id == "toolu_inner"
