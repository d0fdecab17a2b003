"""The session-wide budget (``--max-budget-usd``, the SDK's ``max_budget_usd``) through the real CLI and the SDK.

The models answer from the loopback Anthropic server (claude-sonnet-4-6: $3 per million input tokens, $15
per million output tokens) or the scripted provider (no price). Each test makes one response cross the
budget and checks who stops: the parent's tools, a foreground child, a background child, later turns.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from catui import CatuiOptions, query
from catui.errors import ConfigurationError, ResultError
from catui.models.pricing import cost_usd
from catui.session.budget import SessionBudget
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.inflight_server import InFlightServer
from tests.support.sdk_backend import isolated_sdk_home  # noqa: F401 (autouse fixture)

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)
SONNET = "claude-sonnet-4-6"


class NoServer:
    """For runs on the scripted provider: no loopback server, no API settings."""

    def env(self, api_key: str) -> dict[str, str]:
        return {}


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "worker.md").write_text(
        "---\nname: worker\ndescription: A worker.\nmodel: sonnet\n---\nYou are WORKER.\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def run_cli(repo: Path, env: dict[str, str], prompt: str, *args: str,
            output: str = "stream-json") -> subprocess.CompletedProcess[str]:
    extra = ["--verbose"] if output == "stream-json" else []
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", prompt, "--output-format", output, *extra, *args],
        cwd=repo, env=env, capture_output=True, text=True, timeout=GUARD_S,
    )


def lines_of(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def agent_call(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_parent", "name": "Agent",
            "input": {"description": "worker job", "prompt": prompt, "subagent_type": "worker", **extra}}


def bash_call(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


def requests_with(server: AnthropicTestServer, marker: str) -> list[dict[str, Any]]:
    return [b for b in server.bodies() if marker in json.dumps(b)]


def test_the_turn_that_reaches_the_budget_is_the_last_and_its_tools_do_not_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    # 10,000 input tokens of sonnet cost $0.03, over a $0.01 budget.
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [{"type": "text", "text": "Spending."},
                                                              bash_call("touch ran.txt")],
         "usage": {"input_tokens": 10_000, "output_tokens": 10}},
        {"match": {"last_is_tool_result": True}, "content": text("SHOULD NOT HAPPEN")},
    ]}
    with AnthropicTestServer(script) as server:
        done = run_cli(repo, cli_env(tmp_path, server), "PARENT spend", "--max-budget-usd", "0.01",
                       "--allowedTools", "Bash", output="json")
        assert len(server.bodies()) == 1
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"] is True
    assert result["num_turns"] == 1
    assert result["total_cost_usd"] == pytest.approx(cost_usd(SONNET, {"input_tokens": 10_000, "output_tokens": 10}))
    assert "$0.0100" in result["result"] and "--max-budget-usd" in result["result"]
    assert result["errors"] == [result["result"]]
    assert not (repo / "ran.txt").exists()


def test_a_foreground_childs_spending_stops_the_child_and_the_parent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = {"turns": [
        {"match": {"system_contains": "You are WORKER", "last_is_tool_result": False},
         "content": [{"type": "text", "text": "Child spending."}, bash_call("touch child_ran.txt")],
         "usage": {"input_tokens": 10_000, "output_tokens": 10}},
        {"match": {"system_contains": "You are WORKER"}, "content": text("CHILD SHOULD NOT GO ON")},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("CHILD spend")], "usage": {"input_tokens": 10, "output_tokens": 10}},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True}, "content": text("PARENT GOES ON")},
    ]}
    with AnthropicTestServer(script) as server:
        done = run_cli(repo, cli_env(tmp_path, server), "PARENT go", "--max-budget-usd", "0.01",
                       "--allowedTools", "Bash")
        assert len(requests_with(server, "You are WORKER")) == 1
        assert len(server.bodies()) == 2  # the parent's first turn and the child's: nothing after
    lines = lines_of(done)
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "error_max_budget_usd", done.stderr
    assert "PARENT GOES ON" not in done.stdout and "CHILD SHOULD NOT GO ON" not in done.stdout
    assert not (repo / "child_ran.txt").exists()
    # Both agents' costs are counted: the child's response alone crossed the budget.
    assert result["total_cost_usd"] == pytest.approx(
        cost_usd(SONNET, {"input_tokens": 10_010, "output_tokens": 20}))


def test_a_background_agent_crossing_the_budget_while_the_parent_waits_ends_the_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = {"turns": [
        {"match": {"system_contains": "You are WORKER", "last_is_tool_result": False},
         "content": [{"type": "text", "text": "Background spending."}, bash_call("touch bg_ran.txt")],
         "usage": {"input_tokens": 10_000, "output_tokens": 10}},
        {"match": {"system_contains": "You are WORKER"}, "content": text("CHILD SHOULD NOT GO ON")},
        {"match": {"first_user_contains": "PARENT", "last_user_contains": "<task-notification>"},
         "content": text("PARENT SHOULD NOT BE ASKED AGAIN")},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("CHILD spend", run_in_background=True)],
         "usage": {"input_tokens": 10, "output_tokens": 10}},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True}, "content": text("waiting"),
         "usage": {"input_tokens": 10, "output_tokens": 10}},
    ]}
    # The child's crossing answer is held until the parent's turn has ended (its result line is out): the
    # parent then waits for its background agent, whatever the machine's speed. (A fixed delay here let a
    # slow parent still be in its turn when the child crossed, and that turn became the last.)
    with InFlightServer(script, marker="CHILD", hold_until=2, hold_timeout_s=GUARD_S) as server:
        done = run_cli_releasing_after_first_result(
            repo, cli_env(tmp_path, server), server, "PARENT go", "--max-budget-usd", "0.01",
            "--allowedTools", "Bash",
        )
        assert len(requests_with(server, "You are WORKER")) == 1
        assert not requests_with(server, "<task-notification>")
    lines = lines_of(done)
    results = [line for line in lines if line["type"] == "result"]
    assert [r["subtype"] for r in results] == ["success", "error_max_budget_usd"], done.stderr
    assert "CHILD SHOULD NOT GO ON" not in done.stdout and "PARENT SHOULD NOT" not in done.stdout
    assert not (repo / "bg_ran.txt").exists()
    assert done.returncode == 1


def run_cli_releasing_after_first_result(
    repo: Path, env: dict[str, str], server: InFlightServer, prompt: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``run_cli`` in stream-json, releasing the server's held requests once the first result line is printed."""
    command = [sys.executable, "-m", "catui", "-p", prompt, "--output-format", "stream-json", "--verbose", *args]
    with tempfile.TemporaryFile("w+") as stderr, subprocess.Popen(
        command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
    ) as proc:
        assert proc.stdout is not None
        out: list[str] = []
        try:
            for line in proc.stdout:  # ends when the CLI exits; the server's hold guards against a hang
                out.append(line)
                if line.strip() and json.loads(line).get("type") == "result":
                    server.release()
            proc.wait(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr.seek(0)
        return subprocess.CompletedProcess(command, proc.returncode, "".join(out), stderr.read())


def test_models_without_a_price_count_tokens_and_say_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps({"turns": [{"content": text("done"),
                                                   "usage": {"input_tokens": 500, "output_tokens": 5}}]}))
    done = run_cli(repo, cli_env(tmp_path, NoServer()), "PARENT go", "--max-budget-usd", "0.01",
                   "--model", f"scripted:{script_file}", output="json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["subtype"] == "success"
    warning = [line for line in done.stderr.splitlines() if "--max-budget-usd" in line]
    assert len(warning) == 1 and "no known price" in warning[0] and "tokens are counted" in warning[0]


@pytest.mark.parametrize("value", ["-1", "0", "lots", "nan"])
def test_a_bad_budget_is_a_one_line_error(tmp_path: Path, value: str) -> None:
    done = run_cli(tmp_path, cli_env(tmp_path, NoServer()), "hi", f"--max-budget-usd={value}", output="json")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "--max-budget-usd must be a positive amount" in done.stderr
    assert "Traceback" not in done.stderr


def test_budget_unit_counts_each_response_once_and_trips_once() -> None:
    budget = SessionBudget(0.01)
    trips: list[float] = []
    budget.on_exceeded.append(lambda: trips.append(budget.spent_usd))
    budget.observe(SONNET, {"input_tokens": 2_000})  # $0.006
    assert not budget.exceeded and not trips
    budget.observe(SONNET, {"input_tokens": 2_000})  # $0.012
    budget.observe(SONNET, {"input_tokens": 2_000})
    assert budget.exceeded and trips == [pytest.approx(0.012)]
    budget.observe("gpt-4.1", {"input_tokens": 7, "output_tokens": 3})
    budget.observe("gpt-4.1", {"input_tokens": 7})
    assert budget.unpriced_tokens == {"gpt-4.1": 17} and len(budget.warnings) == 1
    assert "17 tokens of models without a known price (gpt-4.1)" in budget.describe()


async def test_sdk_max_budget_usd_ends_the_query(tmp_path: Path) -> None:
    script = {"turns": [{"content": [{"type": "text", "text": "pricey"}, bash_call("touch sdk_ran.txt")],
                         "usage": {"input_tokens": 10_000, "output_tokens": 1}}]}
    with AnthropicTestServer(script) as server:
        options = CatuiOptions(cwd=tmp_path, env=server.env(), model=SONNET, max_budget_usd=0.01,
                               allowed_tools=["Bash"])
        messages: list[Any] = []
        # As claude-agent-sdk: a one-shot query raises ResultError after yielding an error result.
        with pytest.raises(ResultError, match="error_max_budget_usd"):
            async for message in query("spend", options):
                messages.append(message)
        assert len(server.bodies()) == 1
    result = messages[-1]
    assert getattr(result, "subtype", None) == "error_max_budget_usd" and result.is_error
    assert not (tmp_path / "sdk_ran.txt").exists()
    with pytest.raises(ConfigurationError, match=r"CatuiOptions\.max_budget_usd must be a positive amount"):
        [m async for m in query("x", CatuiOptions(cwd=tmp_path, max_budget_usd=-2))]
