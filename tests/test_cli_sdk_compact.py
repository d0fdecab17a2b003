"""``/compact`` sent by claude-agent-sdk to the real ``catui`` CLI compacts the session, as the init message's
``slash_commands`` promise (it was sent to the model as a prompt)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeSDKClient, ResultMessage, SystemMessage  # noqa: E402

from tests.test_cli_sdk_protocol import (  # noqa: E402
    GUARD_S,
    ServerFactory,
    collect_response,
    isolated_home,
    loopback,
    options_for,
)

__all__ = ["isolated_home", "loopback"]  # fixtures used by name


async def test_compact_summarises_the_session_and_the_next_prompt_starts_from_the_summary(
        loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"system_contains": "working memory of a coding agent"},
         "content": [{"type": "text", "text": "The user likes MANGO."}]},
        {"match": {"last_user_contains": "favourite"}, "content": [{"type": "text", "text": "Noted: mango."}]},
        {"content": [{"type": "text", "text": "Still here."}], "repeat": True},
    ]})
    async with ClaudeSDKClient(options_for(server, tmp_path)) as client:
        await client.query("My favourite fruit is the mango")
        await asyncio.wait_for(collect_response(client), GUARD_S)
        await client.query("/compact keep the fruit")
        compacted = await asyncio.wait_for(collect_response(client), GUARD_S)
        await client.query("What next?")
        after = await asyncio.wait_for(collect_response(client), GUARD_S)

    boundary = [m for m in compacted if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0].data["compact_metadata"]["trigger"] == "manual"
    result = compacted[-1]
    assert isinstance(result, ResultMessage) and not result.is_error and result.result.startswith("Compacted:")
    summary_request, = [b for b in server.bodies() if "working memory" in json.dumps(b.get("system"))]
    assert "keep the fruit" in json.dumps(summary_request["messages"][-1])  # the instructions reach the summary
    last_request = server.bodies()[-1]
    assert "The user likes MANGO." in json.dumps(last_request["messages"])  # the summary stands for the past
    assert "My favourite fruit" not in json.dumps(last_request["messages"])
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "Still here."
