"""What claude-agent-sdk's typed control answers require, the real ``catui`` CLI answers: every required key
of the SDK's own TypedDicts (read from the installed package, so a newer SDK that requires more fails here)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeSDKClient  # noqa: E402
from claude_agent_sdk import types as sdk_types  # noqa: E402

from tests.test_cli_sdk_protocol import (  # noqa: E402
    GUARD_S,
    ServerFactory,
    collect_response,
    isolated_home,
    loopback,
    options_for,
)

__all__ = ["isolated_home", "loopback"]  # fixtures used by name


def missing_keys(typed: Any, value: dict[str, Any]) -> set[str]:
    return set(typed.__required_keys__) - set(value)


async def test_get_context_usage_has_every_key_the_sdk_requires(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}],
                                  "usage": {"input_tokens": 30_000, "output_tokens": 500}}]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        before = await client.get_context_usage()
        await client.query("hi")
        await asyncio.wait_for(collect_response(client), GUARD_S)
        after = await client.get_context_usage()
    for usage in (before, after):
        assert missing_keys(sdk_types.ContextUsageResponse, dict(usage)) == set()
        for category in usage["categories"]:
            assert missing_keys(sdk_types.ContextUsageCategory, dict(category)) == set()
    assert before["apiUsage"] is None and before["gridRows"][0][0]["categoryName"] == "Free space"
    assert after["apiUsage"] == {"input_tokens": 30_000, "output_tokens": 500, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0}
    assert after["isAutoCompactEnabled"] is True
    squares = [square for row in after["gridRows"] for square in row]
    assert len(squares) == 100 and all(len(row) == 10 for row in after["gridRows"])
    # 30,000 of a 200,000 window: 15 squares of messages, a part-filled one of the last answer, then free space
    names = [square["categoryName"] for square in squares]
    assert names.count("Messages") == 15 and names.count("Last answer") == 1
    assert names[:16] == ["Messages"] * 15 + ["Last answer"] and set(names[16:]) == {"Free space"}
    assert squares[15]["squareFullness"] == 0.25 and not squares[16]["isFilled"]
