"""What OpenTelemetry export costs: per model turn, per agent, and at start-up; telemetry on against off.

Run from the repository root::

    .venv/bin/python benchmarks/bench_telemetry.py [--runs 9] [--agents 150] [--turns 40]

The real CLI (``python -m catui -p``) runs on the scripted provider (no HTTP to
a model, so the figures are catui's own), with telemetry off and with all three
signals exported over OTLP/HTTP to tests/support/otlp_receiver.py, started in
a process of its own (its CPU is not charged to catui). Each figure is the
CLI process's CPU time (user + system, from ``wait4``: the exporters' threads
included, and the final flush), the median of ``--runs`` runs, the cases
interleaved so that a noisy moment hits all alike:

- ``empty``: one answer, no tools (start-up, the SDK's import and set-up);
- ``turns``: ``--turns`` model turns, each with one tool call (Read);
- ``agents``: one message with ``--agents`` Agent calls, each child answering at once.

Per model turn = ((turns - empty) on - (turns - empty) off) / turns; per agent
likewise. Goal (issue 32): under 2 ms per agent. Start-up: the ``empty`` run's
wall time off and on, and how many ``opentelemetry`` modules a run imports
with telemetry off (must be 0).

The CLI differences are a few ms out of seconds of CPU, so a busy machine blurs
them; the in-process section measures the same calls directly: what the agent
loop's thread spends in the telemetry calls of one model turn (request span,
tool span, decision, five events, token and cost metrics) and of one agent run
(its span and ``subagent_completed``), ``thread_time`` of the calling thread,
and apart from it the exporter's flush. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
GOAL_MS_PER_AGENT = 2.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scripts(folder: Path, turns: int, agents: int) -> dict[str, Path]:
    empty = {"turns": [{"content": [{"type": "text", "text": "pong"}], "repeat": True}]}
    # Read, not Glob or Bash: a tool that starts a process (rg, bash) pays for fork() in a bigger process
    # with telemetry on, which would be counted here as telemetry's cost (see docs/decisions.md).
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": str(folder / "project" / "a.txt")}}
    many_turns = {"turns": [
        *({"match": {"first_user_contains": "turns"}, "content": [read]} for _ in range(turns)),
        {"content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}
    calls = [{"type": "tool_use", "name": "Agent", "input": {"description": f"job {i}", "prompt": f"CHILD {i}",
                                                             "subagent_type": "general-purpose"}}
             for i in range(agents)]
    many_agents = {"turns": [
        {"match": {"first_user_contains": "agents", "last_is_tool_result": False}, "content": calls},
        {"match": {"first_user_contains": "CHILD"}, "content": [{"type": "text", "text": "ok"}], "repeat": True},
        {"content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}
    out = {}
    for name, script in (("empty", empty), ("turns", many_turns), ("agents", many_agents)):
        path = folder / f"{name}.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        out[name] = path
    return out


def run_cli(cwd: Path, env: dict[str, str], prompt: str, script: Path, *extra: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one CLI run."""
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, *extra, "-m", "catui", "-p", prompt, "--model", f"scripted:{script}",
                             "--permission-mode", "bypassPermissions"], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"catui failed on {script.name} (exit {os.waitstatus_to_exitcode(status)})")
    return usage.ru_utime + usage.ru_stime, wall


def in_process(rounds: int) -> tuple[float, float, float]:
    """(µs per model turn, µs per agent run, µs of flush per turn) of the telemetry calls, in this process."""
    sys.path.insert(0, str(ROOT))
    from tests.support.otlp_receiver import OtlpReceiver

    from catui.telemetry.otel_config import otel_settings
    from catui.telemetry.otel_telemetry import OtelTelemetry

    message = {"id": "msg_1", "stop_reason": "tool_use", "content": [
        {"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {}}],
        "usage": {"input_tokens": 1200, "output_tokens": 40, "cache_read_input_tokens": 900}}
    with OtlpReceiver() as receiver:
        telemetry = OtelTelemetry(otel_settings(receiver.env()))
        with telemetry.run(session_id="s", agent_id=None, agent_type=None, prompt="p", model="claude-sonnet-4-5",
                           spawned_from=None):
            started = time.thread_time()
            for i in range(rounds):
                request = telemetry.model_request(model="claude-sonnet-4-5", query_source="main", effort="high",
                                                  system="anthropic")
                request.first_event()
                request.finished(model="claude-sonnet-4-5", message=message)
                tool_input = {"pattern": "*.py"}
                with telemetry.tool_call(name="Glob", tool_use_id=f"toolu_{i}", tool_input=tool_input) as call:
                    telemetry.tool_decision(name="Glob", tool_use_id=f"toolu_{i}", decision="accept", source="config",
                                            tool_input=tool_input)
                    call.finished(is_error=False, content="a.py\nb.py", data=None)
            per_turn = (time.thread_time() - started) / rounds
            started = time.thread_time()
            telemetry.flush()
            flush = (time.thread_time() - started) / rounds
            parent = telemetry.spawn_context()
            started = time.thread_time()
            for i in range(rounds):
                with telemetry.run(session_id="s", agent_id=f"a{i}", agent_type="Explore", prompt="x",
                                   model="claude-haiku-4-5", spawned_from=parent) as run:
                    run.finished(subtype="success", is_error=False, num_turns=1, duration_ms=5)
                telemetry.subagent_completed(agent_id=f"a{i}", agent_type="Explore", status="completed",
                                             duration_ms=5, total_tokens=10, tool_uses=0, is_async=False)
            per_agent = (time.thread_time() - started) / rounds
        telemetry.flush()
        telemetry.providers.shutdown()  # while the receiver still listens
    return per_turn * 1e6, per_agent * 1e6, flush * 1e6


def opentelemetry_modules_imported(cwd: Path, env: dict[str, str], script: Path) -> int:
    done = subprocess.run([PYTHON, "-X", "importtime", "-m", "catui", "-p", "ping", "--model", f"scripted:{script}"],
                          cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return sum(1 for line in done.stderr.splitlines() if "opentelemetry" in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--agents", type=int, default=150)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="catui-bench-telemetry-") as tmp:
        folder = Path(tmp)
        project = folder / "project"
        project.mkdir()
        (project / "a.txt").write_text("a\n", encoding="utf-8")
        paths = scripts(folder, args.turns, args.agents)
        port = free_port()
        receiver = subprocess.Popen([PYTHON, "-m", "tests.support.otlp_receiver", "--port", str(port)], cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.0)  # the receiver's import and bind
            base = {k: v for k, v in os.environ.items()
                    if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_", "OTEL_"))}
            base.update(HOME=str(folder / "home"), CATUI_HOME=str(folder / "catui-home"),
                        PYTHONPATH=str(ROOT / "src"), NO_PROXY="127.0.0.1,localhost")
            on = {**base, "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "otlp",
                  "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp",
                  "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
            envs = {"off": base, "on": on}
            cpu: dict[tuple[str, str], list[float]] = {}
            wall: dict[tuple[str, str], list[float]] = {}
            prompts = {"empty": "ping", "turns": "turns please", "agents": "agents please"}
            for _ in range(args.runs):
                for case in ("empty", "turns", "agents"):
                    for mode in ("off", "on"):
                        c, w = run_cli(project, envs[mode], prompts[case], paths[case])
                        cpu.setdefault((case, mode), []).append(c)
                        wall.setdefault((case, mode), []).append(w)
            imported_off = opentelemetry_modules_imported(project, base, paths["empty"])
            imported_on = opentelemetry_modules_imported(project, on, paths["empty"])
        finally:
            receiver.terminate()
            receiver.wait()
    med: dict[tuple[str, str], Any] = {key: statistics.median(values) * 1000 for key, values in cpu.items()}
    print(f"CPU ms per CLI run (median of {args.runs}):")
    for case in ("empty", "turns", "agents"):
        print(f"  {case:7} off {med[(case, 'off')]:8.1f}   on {med[(case, 'on')]:8.1f}   "
              f"on-off {med[(case, 'on')] - med[(case, 'off')]:7.1f}")
    per_turn = ((med[("turns", "on")] - med[("empty", "on")]) - (med[("turns", "off")] - med[("empty", "off")])) / args.turns
    per_agent = ((med[("agents", "on")] - med[("empty", "on")])
                 - (med[("agents", "off")] - med[("empty", "off")])) / args.agents
    print(f"telemetry on, per model turn (one request + one tool call): {per_turn:.2f} ms CPU")
    print(f"telemetry on, per agent (its span, Agent call, one request, events): {per_agent:.2f} ms CPU "
          f"(goal < {GOAL_MS_PER_AGENT} ms: {'met' if per_agent < GOAL_MS_PER_AGENT else 'NOT met'})")
    wall_off = statistics.median(wall[("empty", "off")]) * 1000
    wall_on = statistics.median(wall[("empty", "on")]) * 1000
    print(f"start-up (empty run, wall ms): off {wall_off:.0f}, on {wall_on:.0f} (ratio {wall_on / wall_off:.2f})")
    print(f"opentelemetry modules imported: off {imported_off}, on {imported_on}")
    turn_us, agent_us, flush_us = in_process(2000)
    print(f"in process, the loop's thread: {turn_us:.0f} µs per model turn, {agent_us:.0f} µs per agent run "
          f"(+ its model turns); export (flush) {flush_us:.0f} µs per turn's records")


if __name__ == "__main__":
    main()
