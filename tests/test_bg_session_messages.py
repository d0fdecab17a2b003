"""Issue 31: background sessions find each other (ListAgents' peer sessions) and message each other (SendMessage to
a peer's name, notify_when_idle, held across permission modes), through the real CLI and loopback server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.bg_sessions import (
    GUARD_S,
    catui,
    kill_all,
    main_bodies,
    session_row,
    sessions_json,
    wait_for,
)
from tests.support.cli_env import cli_env, git_repo

CURRENT = {"CATUI_COMPAT": "2.1.332"}


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    folder = git_repo(tmp_path)
    yield folder
    kill_all(tmp_path / "catui-home")


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def tool_use(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def start(repo: Path, env: dict[str, str], prompt: str, *args: str) -> str:
    done = catui(repo, env, "--bg", prompt, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0].split(" · ")[1]


def message_texts(body: dict[str, Any]) -> list[str]:
    found = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
            continue
        for block in content:
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                found.extend(str(b.get("text", "")) for b in inner)
            elif isinstance(inner, str):
                found.append(inner)
            else:
                found.append(str(block.get("text", "")))
    return found


def with_text(server: AnthropicTestServer, needle: str) -> list[dict[str, Any]]:
    return [b for b in main_bodies(server) if any(needle in t for t in message_texts(b))]


def sender_script(peer: str, mode_note: str) -> list[dict[str, Any]]:
    return [
        {"match": {"last_user_contains": f"ping {peer}"}, "content": [tool_use("toolu_list", "ListAgents")]},
        {"match": {"last_is_tool_result": True, "first_user_contains": f"ping {peer}"},
         "content": [tool_use("toolu_send", "SendMessage", to=peer, message=f"hello {peer}", summary="a greeting",
                              notify_when_idle=True)]},
        {"match": {"last_is_tool_result": True, "first_user_contains": f"ping {peer}"}, "content": text("sent")},
        {"match": {"last_user_contains": mode_note}, "content": text("noted")},
    ]


def test_peers_list_each_other_and_a_message_arrives_as_a_cross_session_turn(tmp_path: Path, repo: Path) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "wait here"}, "content": text("ready")},
        *sender_script("alpha", "[Cross-session idle notice] alpha is idle now"),
        {"match": {"last_user_contains": "cross-session-message"}, "content": text("pong")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, **CURRENT)
        alpha = start(repo, env, "wait here", "--name", "alpha")
        wait_for("alpha to be idle", session_row(repo, env, alpha, status="idle"))
        beta = start(repo, env, "ping alpha", "--name", "beta")

        wait_for("alpha's message turn", lambda: with_text(server, "<cross-session-message"))
        (turn,) = with_text(server, "<cross-session-message")
        delivered = next(t for t in message_texts(turn) if "<cross-session-message" in t)
        assert delivered.startswith(
            f'Another Claude session sent a message:\n<cross-session-message from="catui:{beta}" from-name="beta" '
            'from-mode="default">\nhello alpha\n</cross-session-message>\n\n')

        listing = next(t for t in message_texts(with_text(server, "Peer sessions")[0]) if "Peer sessions" in t)
        assert listing.startswith("This session is beta [")
        peer_line = listing.split("Peer sessions (1):\n")[1]
        assert peer_line.startswith("  alpha [") and "]  ·  bg  ·  idle  ·  started " in peer_line

        reply = json.loads(next(t for t in message_texts(with_text(server, '"msg_id"')[0]) if '"msg_id"' in t))
        assert reply["success"] is True and reply["message"].startswith("“a greeting” → alpha (another catui session")

        # notify_when_idle: one notice reaches beta once alpha has answered and is idle again
        wait_for("beta's idle notice", lambda: with_text(server, "[Cross-session idle notice] alpha is idle now"))
        wait_for("beta to settle", session_row(repo, env, beta, status="idle", state="done"))
        assert len(with_text(server, "[Cross-session idle notice]")) == 1
        assert "pong" in catui(repo, env, "logs", "alpha").stdout


def test_a_peer_in_another_mode_holds_the_message_until_a_person_accepts_it(tmp_path: Path, repo: Path) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "wait here"}, "content": text("ready")},
        *sender_script("gamma", "[Cross-session delivery notice] gamma holds your message “a greeting”"),
        {"match": {"last_user_contains": "cross-session-message"}, "content": text("pong")},
        {"match": {"last_user_contains": "[Cross-session idle notice] gamma"}, "content": text("ok")},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, **CURRENT)
        gamma = start(repo, env, "wait here", "--name", "gamma", "--permission-mode", "acceptEdits")
        wait_for("gamma to be idle", session_row(repo, env, gamma, status="idle"))
        start(repo, env, "ping gamma", "--name", "delta")

        row = wait_for("gamma to hold it", session_row(repo, env, gamma, state="blocked"))
        assert row["needs"] == f"a message from delta is held — accept it with: catui attach {gamma}"
        wait_for("delta's delivery notice", lambda: with_text(server, "[Cross-session delivery notice] gamma holds"))
        assert not with_text(server, "<cross-session-message")
        # held messages are unread: rm refuses without --force
        refused = catui(repo, env, "rm", "gamma")
        assert refused.returncode == 1 and "unread message" in refused.stderr

        accepted = subprocess.run([sys.executable, "-m", "catui", "attach", "gamma"], cwd=repo, env=env,
                                  input="accept\n", capture_output=True, text=True, timeout=GUARD_S)
        assert "[accepted 1 held message(s)]" in accepted.stdout
        wait_for("gamma's message turn", lambda: with_text(server, "<cross-session-message"))
        assert 'from-name="delta" from-mode="default"' in "".join(message_texts(with_text(server, "<cross-session")[0]))


def test_a_killed_session_leaves_discovery_but_stays_listed_as_stopped_until_rm(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    script = {"turns": [
        {"match": {"last_user_contains": "list peers"}, "content": [tool_use("toolu_l", "ListAgents")],
         "repeat": True},
        {"match": {"last_user_contains": "message beta"},
         "content": [tool_use("toolu_m", "SendMessage", to="beta", message="are you there?", summary="a question")]},
        {"match": {"last_is_tool_result": True}, "content": text("ok"), "repeat": True},
        {"match": {"last_user_contains": "wait here"}, "content": text("ready"), "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        env = cli_env(tmp_path, server, **CURRENT)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        import catui as sdk

        alpha = start(repo, env, "wait here", "--name", "alpha")
        beta = start(repo, env, "wait here", "--name", "beta")
        for session in (alpha, beta):
            wait_for("idle", session_row(repo, env, session, status="idle"))
        peers_dir = Path(env["CATUI_HOME"]) / "peers"
        beta_pid = sdk.get_bg_session("beta")["pid"]
        assert sorted(p.name for p in peers_dir.iterdir()) == sorted(
            [f"{alpha}-{sdk.get_bg_session('alpha')['pid']}.json", f"{beta}-{beta_pid}.json"])

        def listings() -> list[str]:
            """ListAgents results alpha's model got, one per request that ends with one."""
            found = []
            for body in main_bodies(server):
                last = {**body, "messages": body["messages"][-1:]}
                found += [t for t in message_texts(last) if t.startswith("This session is alpha")]
            return found

        def listing(count: int) -> str:
            sdk.message_bg_session("alpha", "list peers")
            wait_for("the listing", lambda: len(listings()) >= count)
            return listings()[-1]

        assert "  beta [" in listing(1)
        os.killpg(beta_pid, signal.SIGKILL)
        wait_for("the crash", session_row(repo, env, beta, state="stopped"))
        # discovery: alpha no longer sees beta, and beta's stale entry is gone from the registry
        assert "beta" not in listing(2)
        assert [p.name for p in peers_dir.iterdir()] == [f"{alpha}-{sdk.get_bg_session('alpha')['pid']}.json"]
        sdk.message_bg_session("alpha", "message beta")
        wait_for("the SendMessage result", lambda: with_text(server, "No agent named 'beta' is reachable"))
        # the sessions registry: beta is stopped (listed with --all), respawnable, until rm
        assert [r["id"] for r in sessions_json(repo, env)] == [alpha]
        assert {r["id"]: r["state"] for r in sessions_json(repo, env, "--all")}[beta] == "stopped"
        assert catui(repo, env, "respawn", "beta").returncode == 0
        wait_for("beta back", session_row(repo, env, beta, status="idle"))
        assert "  beta [" in listing(3)
        assert catui(repo, env, "rm", "beta").returncode == 0
        assert beta not in {r["id"] for r in sessions_json(repo, env, "--all")}
        assert "beta" not in listing(4)
