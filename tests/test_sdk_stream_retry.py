"""The SDK learns that a partial message was withdrawn when a stream is cut and retried."""

from __future__ import annotations

from pathlib import Path

import catui
from tests.support.anthropic_server import AnthropicTestServer, Fault
from tests.support.sdk_backend import collect, isolated_sdk_home, texts  # noqa: F401 - isolated_sdk_home is a fixture

ANSWER = "Everything is in order: three files, no failing tests."


async def test_a_cut_stream_reaches_the_sdk_as_a_stream_retry_system_message(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with AnthropicTestServer({"turns": [{"repeat": True, "content": [{"type": "text", "text": ANSWER}]}]}) as server:
        server.inject(Fault(cut_after_events=4))
        options = catui.CatuiOptions(
            model="claude-sonnet-4-6", cwd=project, include_partial_messages=True,
            env={**server.env(), "CATUI_MAX_RETRIES": "2", "CATUI_RETRY_BASE_MS": "1"},
        )
        messages = await collect("How is the project?", options)
        assert len(server.requests) == 2
    notices = [m for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "stream_retry"]
    assert len(notices) == 1
    notice = notices[0].data
    assert notice["attempt"] == 1 and notice["max_retries"] == 2 and ANSWER.startswith(notice["withdrawn_text"])
    at = messages.index(notices[0])
    # The partial stream events before the notice are withdrawn; after it a whole message streams again.
    assert any(isinstance(m, catui.StreamEvent) for m in messages[:at])
    after = [m.event["type"] for m in messages[at:] if isinstance(m, catui.StreamEvent)]
    assert after[0] == "message_start" and after[-1] == "message_stop"
    answers = [m for m in messages if isinstance(m, catui.AssistantMessage)]
    assert [texts(m) for m in answers] == [ANSWER]
    assert isinstance(messages[-1], catui.ResultMessage) and messages[-1].result == ANSWER
