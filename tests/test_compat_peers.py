"""ListAgents with a sub-agent and a peer session at once, in the current profile, through the real CLI: as Claude
Code 2.1.332 answered when run against the loopback server beside a ``claude --bg`` session, the first line names
this session, then ``Subagents (1):`` and, after a blank line, ``Peer sessions (1):`` with the background session
(``<name> [<ref>]  ·  bg  ·  idle  ·  started Ns ago``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import bg_repo, session_row, start, wait_for
from tests.support.cli_env import cli_env
from tests.support.compat_cli import CURRENT, agent_call, result_text, stream_run, text, tool_results

repo = bg_repo  # the fixture: a git repository whose background sessions are killed when the test ends


def test_list_agents_shows_subagents_then_peer_sessions(tmp_path: Path, repo: Path) -> None:
    script: dict[str, Any] = {"turns": [
        {"match": {"first_user_contains": "Peer task"}, "content": text("peer says hi"), "repeat": True},
        {"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "Child one"}, "content": text("child done"), "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False},
         "content": [agent_call("toolu_a", "Child one", subagent_type="general-purpose", run_in_background=True)]},
        {"match": {"first_user_contains": "Go", "last_user_contains": "internal ID"},
         "content": [{"type": "tool_use", "id": "toolu_list", "name": "ListAgents", "input": {}}]},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": True}, "content": text("listed"),
         "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, **CURRENT)
        peer = start(repo, env, "Peer task", "--name", "buddy")
        wait_for("the peer to be idle", session_row(repo, env, peer, status="idle"))
        done, lines = stream_run(repo, env, "Go", "--permission-mode", "bypassPermissions")
        assert done.returncode == 0, done.stderr
    launched = next(data for block, data in tool_results(lines) if block["tool_use_id"] == "toolu_a")
    listing = next(result_text(block) for block, _ in tool_results(lines)
                   if block["tool_use_id"] == "toolu_list").split("\n")
    assert re.fullmatch(r"This session is repo-[0-9a-f]{2} \[[0-9a-f]{6}\] — the name other sessions use to "
                        r"message it \(it is not listed below; a message to it would be a message to yourself\)\.",
                        listing[0])
    assert listing[1:3] == ["", "Subagents (1):"]
    assert re.fullmatch(rf"  {launched['agentId']}  ·  general-purpose  ·  (running|completed)  ·  started \d+s ago",
                        listing[3])
    assert listing[4:6] == ["", "Peer sessions (1):"]
    assert re.fullmatch(r"  buddy \[[0-9a-f]{6}\]  ·  bg  ·  idle  ·  started \d+s ago", listing[6])
    assert len(listing) == 7, json.dumps(listing)
