"""Durable workflows: real ``catui workflow run`` processes killed with SIGKILL at many points, then
``catui workflow resume``: only agents without a journaled result run again, and the run finishes with the
value an uninterrupted run gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

GUARD_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)
STEPS = ["one", "two", "three", "four", "five", "six"]
SCRIPT = """export const meta = { name: "steps", description: "Six steps" }
const first = await agent("Step one")
const pair = await parallel([() => agent("Step two"), () => agent("Step three")])
const rest = []
for (const n of ["four", "five", "six"]) rest.push(await agent("Step " + n))
return {first, pair, rest}
"""
EXPECTED = {"first": "answer one", "pair": ["answer two", "answer three"],
            "rest": ["answer four", "answer five", "answer six"]}


def turns() -> dict[str, Any]:
    # A delay spreads the run out so that the kills land at different points (coverage, not an assertion).
    return {"turns": [{"match": {"first_user_contains": f"Step {s}"}, "repeat": True, "delay_ms": 150,
                       "content": [{"type": "text", "text": f"answer {s}"}]} for s in STEPS]}


def journal_of(tmp_path: Path) -> list[dict[str, Any]]:
    found = list((tmp_path / "catui-home" / "projects").glob("*/workflows/wf_*/journal.jsonl"))
    if not found:
        return []
    entries = []
    for line in found[0].read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line torn by the kill
    return entries


def finished_steps(entries: list[dict[str, Any]]) -> set[str]:
    labels = {e["key"]: e["label"] for e in entries if e.get("type") == "started"}
    return {labels[e["key"]].removeprefix("Step ") for e in entries if e.get("type") == "result"}


def requests_per_step(server: Any) -> dict[str, int]:
    counts = dict.fromkeys(STEPS, 0)
    for request in server.requests:
        first = json.dumps(request.body["messages"][0]) if isinstance(request.body, dict) else ""
        for step in STEPS:
            if f"Step {step}" in first:
                counts[step] += 1
    return counts


@pytest.mark.parametrize("kill_after", [0, 1, 2, 3, 4, 5])
def test_killed_with_sigkill_then_resumed(tmp_path: Path, kill_after: int) -> None:
    (tmp_path / "steps.js").write_text(SCRIPT, encoding="utf-8")
    with AnthropicTestServer(turns()) as server:
        env = cli_env(tmp_path, server)
        child = subprocess.Popen([sys.executable, "-m", "catui", "workflow", "run", "steps.js",
                                  "--permission-mode", "bypassPermissions"], cwd=tmp_path, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + GUARD_S
        while True:  # kill once `kill_after` results are journaled (0: once the first agent started)
            entries = journal_of(tmp_path)
            started = any(e.get("type") == "started" for e in entries)
            if (len(finished_steps(entries)) >= kill_after and started) or child.poll() is not None:
                break
            assert time.monotonic() < deadline, "the workflow never reached the kill point"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(GUARD_S)
        assert child.stdout is not None
        run_id = child.stdout.readline().strip()
        child.stdout.close()
        child.stderr.close()  # type: ignore[union-attr]
        done_before = finished_steps(journal_of(tmp_path))
        before = requests_per_step(server)

        resumed = run_catui(tmp_path, env, "workflow", "resume", run_id, "--permission-mode", "bypassPermissions",
                            timeout=GUARD_S)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.splitlines() == [run_id, json.dumps(EXPECTED)]
        after = requests_per_step(server)
        for step in STEPS:
            ran_again = after[step] - before[step]
            assert ran_again == (0 if step in done_before else 1), (step, done_before)
        assert finished_steps(journal_of(tmp_path)) == set(STEPS)
        shown = run_catui(tmp_path, env, "workflow", "show", run_id, timeout=GUARD_S)
        assert "completed" in shown.stdout.splitlines()[0]

        again = run_catui(tmp_path, env, "workflow", "resume", run_id, timeout=GUARD_S)
        assert again.stdout.splitlines()[-1] == json.dumps(EXPECTED)
        assert requests_per_step(server) == after  # a finished run resumes from its journal alone
