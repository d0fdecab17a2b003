"""The tool-call window (issue 13): one message's Agent calls run at most N at a time, results in order.

The real CLI runs against :class:`~tests.support.inflight_server.InFlightServer`,
which counts the children's requests it is answering at once and holds each
until the window's width is reached, so the widest overlap the client allows
is always observed (no timing involved).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.cli_env import cli_env
from tests.support.inflight_server import InFlightServer

PARENT = "WINDOW-PARENT"
CHILD = "WINDOW-CHILD"
HOLD_S = 30.0  # how long a held request waits for the window to fill: a guard against hangs, not a timing


def make_repo(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("window test\n")
    if settings is not None:
        (repo / ".claude").mkdir()
        (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first"],
                   check=True)
    return repo


def fan_out_script(count: int) -> dict[str, Any]:
    """The parent sends ``count`` Explore calls in one message; child i answers ``answer i``."""
    calls = [{"type": "tool_use", "id": f"toolu_{i:03d}", "name": "Agent",
              "input": {"description": f"look {i}", "prompt": f"{CHILD}-{i}-END", "subagent_type": "Explore"}}
             for i in range(count)]
    turns: list[dict[str, Any]] = [
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": PARENT, "last_is_tool_result": True}, "repeat": True,
         "content": [{"type": "text", "text": "all done"}]},
    ]
    turns += [{"match": {"first_user_contains": f"{CHILD}-{i}-END"}, "repeat": True,
               "content": [{"type": "text", "text": f"answer {i}"}]} for i in range(count)]
    return {"turns": turns}


def run_fan_out(tmp_path: Path, server: InFlightServer, **env: str) -> subprocess.CompletedProcess[str]:
    if not (tmp_path / "repo").exists():
        make_repo(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", PARENT, "--output-format", "json"],
        cwd=tmp_path / "repo", env=cli_env(tmp_path, server, CATUI_TELEMETRY="0", **env),
        capture_output=True, text=True, timeout=180,
    )


def parent_tool_results(server: InFlightServer) -> list[dict[str, Any]]:
    """The tool_result blocks of the parent's request that follows the fan-out."""
    follow_ups = [b for b in server.bodies()
                  if PARENT in json.dumps(b["messages"][0]) and len(b["messages"]) > 1]
    assert follow_ups, "the parent never sent the children's results back"
    content = follow_ups[-1]["messages"][-1]["content"]
    return [block for block in content if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def assert_all_answered_in_order(server: InFlightServer, count: int) -> None:
    results = parent_tool_results(server)
    assert [r["tool_use_id"] for r in results] == [f"toolu_{i:03d}" for i in range(count)]
    for index, block in enumerate(results):
        assert not block.get("is_error"), result_text(block)
        assert f"answer {index}" in result_text(block)


def test_default_window_is_ten_and_results_keep_tool_use_order(tmp_path: Path) -> None:
    with InFlightServer(fan_out_script(14), marker=CHILD, hold_until=10, hold_timeout_s=HOLD_S) as server:
        done = run_fan_out(tmp_path, server)
    assert done.returncode == 0, done.stderr
    assert server.max_in_flight == 10
    assert_all_answered_in_order(server, 14)


def test_env_narrows_the_window_and_order_holds_with_a_window_smaller_than_the_batch(tmp_path: Path) -> None:
    with InFlightServer(fan_out_script(9), marker=CHILD, hold_until=3, hold_timeout_s=HOLD_S) as server:
        done = run_fan_out(tmp_path, server, CATUI_MAX_TOOL_USE_CONCURRENCY="3")
    assert done.returncode == 0, done.stderr
    assert server.max_in_flight == 3
    assert_all_answered_in_order(server, 9)


def test_claude_code_variable_and_setting_set_the_window_env_first(tmp_path: Path) -> None:
    make_repo(tmp_path, settings={"maxToolUseConcurrency": 4})
    with InFlightServer(fan_out_script(8), marker=CHILD, hold_until=4, hold_timeout_s=HOLD_S) as server:
        done = run_fan_out(tmp_path, server)
    assert done.returncode == 0, done.stderr
    assert server.max_in_flight == 4

    with InFlightServer(fan_out_script(8), marker=CHILD, hold_until=2, hold_timeout_s=HOLD_S) as server:
        done = run_fan_out(tmp_path, server, CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY="2")
    assert done.returncode == 0, done.stderr
    assert server.max_in_flight == 2
    assert_all_answered_in_order(server, 8)


def test_a_bad_window_value_warns_and_keeps_the_default(tmp_path: Path) -> None:
    with InFlightServer(fan_out_script(12), marker=CHILD, hold_until=10, hold_timeout_s=HOLD_S) as server:
        done = run_fan_out(tmp_path, server, CATUI_MAX_TOOL_USE_CONCURRENCY="zero")
    assert done.returncode == 0, done.stderr
    assert "CATUI_MAX_TOOL_USE_CONCURRENCY='zero' is not a positive whole number; using 10" in done.stderr
    assert server.max_in_flight == 10
    assert_all_answered_in_order(server, 12)


def test_a_bad_window_setting_warns_and_names_the_setting(tmp_path: Path) -> None:
    make_repo(tmp_path, settings={"maxToolUseConcurrency": -1})
    with InFlightServer(fan_out_script(2), marker=CHILD) as server:
        done = run_fan_out(tmp_path, server)
    assert done.returncode == 0, done.stderr
    assert "the `maxToolUseConcurrency` setting (-1) is not a positive whole number; using 10" in done.stderr
    assert_all_answered_in_order(server, 2)
