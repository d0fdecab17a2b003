"""Agent teams: message latency between the lead and a teammate, and memory per teammate.

Run from the repository root::

    .venv/bin/python benchmarks/bench_teams.py [--rounds 20] [--members 20]

It runs the real CLI (``python -m catui -p``, ``CATUI_AGENT_TEAMS=1``) against
the loopback Anthropic server; all times are taken in the server process.

- baseline: the lead's response carrying a trivial tool call ends → the lead's
  next request arrives (one back-to-back request, same run);
- hop lead → teammate: the lead's response carrying ``SendMessage`` to an idle
  teammate ends → the teammate's request with that message arrives;
- hop teammate → lead: the teammate's response carrying ``SendMessage`` to the
  idle lead ends → the lead's request with that message arrives.
  (Claude Code polls the mailbox: ~0.4-0.5 s a hop. Goal: under 20 ms.)
  Both sides answer their message-sending requests after 50 ms, so that the
  other side has finished its turn (is idle) when the message arrives; the
  delay is not part of any measured figure.
- memory: peak RSS (sampled every 5 ms) of a run whose lead keeps ``--members`` idle teammates,
  against a run with as many background agents alive at once and a trivial
  run; the difference per agent.

Numbers are printed with their ratio to the baseline; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_subagent_overhead import TimedServer, make_repo, ms, text  # noqa: E402

LEAD = "TEAM-BENCH-LEAD"
SEND_DELAY_MS = 50


def tool(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": tool_name, "input": args}


def run_cli(base: Path, server: TimedServer, prompt: str, *, teams: bool = True) -> int:
    """Run the CLI to completion; returns its peak resident memory in KiB."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(base / "home"),
        "CATUI_HOME": str(base / "catui-home"),
        "PYTHONPATH": str(ROOT / "src"),
        "CATUI_TELEMETRY": "0",
        "CATUI_MAX_TOOL_USE_CONCURRENCY": "1000",
        "CATUI_MAX_CONCURRENT_SUBAGENTS": "1000",
        "CATUI_TEAM_SHUTDOWN_GRACE_MS": "2000",
        **({"CATUI_AGENT_TEAMS": "1"} if teams else {}),
        **server.env("test"),
    }
    proc = subprocess.Popen([sys.executable, "-m", "catui", "-p", prompt, "--output-format", "json"],
                            cwd=base / "repo", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Sampled from /proc rather than wait4's ru_maxrss: Linux carries the forking parent's (this benchmark's,
    # which grows with the server's recorded requests) high-water mark across exec into ru_maxrss.
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _rss_kib(proc.pid))
        time.sleep(0.005)
    stdout = proc.stdout.read() if proc.stdout else b""
    stderr = proc.stderr.read() if proc.stderr else b""
    if b'"is_error": false' not in stdout:
        raise SystemExit(f"the benchmark run failed:\n{stdout.decode()[-2000:]}\n{stderr.decode()[-2000:]}")
    return peak


def _rss_kib(pid: int) -> int:
    """The process's resident set now (``VmRSS``), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((ln for ln in status.splitlines() if ln.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1])


def ping_pong(base: Path, rounds: int) -> dict[str, list[float]]:
    turns: list[dict[str, Any]] = [
        *({"name": f"noop-{k}", "match": {"first_user_contains": LEAD},
           "content": [tool("NoSuchBenchTool")]} for k in range(rounds)),
        {"match": {"first_user_contains": LEAD, "last_user_contains": "No such tool"},
         "content": [tool("TeamCreate", team_name="bench")]},
        {"match": {"first_user_contains": LEAD, "last_user_contains": "lead_agent_id"},
         "content": [tool("Agent", description="echo", prompt="ECHO-START", name="echo")]},
        {"match": {"first_user_contains": LEAD, "last_user_contains": "Spawned"}, "content": text("started")},
        {"match": {"first_user_contains": LEAD, "last_user_contains": '"from":"echo","timestamp"'},
         "content": [tool("SendMessage", to="echo", message="PING-0", summary="ping")], "delay_ms": SEND_DELAY_MS},
    ]
    for k in range(rounds):
        turns.append({"match": {"first_user_contains": LEAD, "last_user_contains": f"PONG-{k}\n"},
                      "content": [tool("SendMessage", to="echo", message=f"PING-{k + 1}", summary="ping")]
                      if k + 1 < rounds else text("done"), "delay_ms": SEND_DELAY_MS if k + 1 < rounds else 0})
        turns.append({"match": {"first_user_contains": "ECHO-START", "last_user_contains": f"PING-{k}\n"},
                      "content": [tool("SendMessage", to="team-lead", message=f"PONG-{k}", summary="pong")],
                      "delay_ms": SEND_DELAY_MS})
    turns += [
        {"match": {"first_user_contains": LEAD, "last_user_contains": "still has active members"},
         "content": text("done")},
        {"match": {"first_user_contains": LEAD}, "content": text("noted"), "repeat": True},
        {"match": {"first_user_contains": "ECHO-START"}, "content": text("ok"), "repeat": True},
    ]
    server = BodyTimedServer({"turns": turns})
    with server:
        run_cli(base, server, LEAD)
    lead = [r for r in server.records if LEAD in r.first_user]
    echo = [r for r in server.records if "ECHO-START" in r.first_user]
    out: dict[str, list[float]] = {"baseline": [], "to_teammate": [], "to_lead": []}
    out["baseline"] = [lead[k + 1].arrived - lead[k].ended for k in range(rounds)]
    for k in range(rounds):
        out["to_teammate"].append(_receiver(echo, f"PING-{k}").arrived - _sender(lead, f"PING-{k}").ended)
        out["to_lead"].append(_receiver(lead, f"PONG-{k}").arrived - _sender(echo, f"PONG-{k}").ended)
    return out


class Timed:
    """One request: whose conversation, what it carried, when it arrived and when its answer ended."""

    def __init__(self, body: dict[str, Any], arrived: float, ended: float) -> None:
        messages = body.get("messages") or []
        self.first_user = _text(messages[0]["content"]) if messages else ""
        self.last_user = _text(messages[-1]["content"]) if messages else ""
        self.previous_answer = str(messages[-2]["content"]) if len(messages) > 1 else ""
        self.arrived = arrived
        self.ended = ended


def _text(content: Any) -> str:
    """A message's text (text blocks, tool_result contents), whatever shape the request gave it."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        inner = block.get("text", block.get("content", ""))
        parts.append(inner if isinstance(inner, str) else _text(inner))
    return "".join(parts)


class BodyTimedServer(TimedServer):
    """TimedServer that keeps, per request, what the benchmark needs of its body."""

    def __init__(self, script: Any) -> None:
        super().__init__(script)
        self.records: list[Timed] = []

    def handle_post(self, handler: Any, request: Any, fault: Any) -> None:
        arrived = time.perf_counter()
        super().handle_post(handler, request, fault)
        ended = time.perf_counter()
        with self._timing_lock:
            self.records.append(Timed(request.body if isinstance(request.body, dict) else {}, arrived, ended))


def _sender(requests: list[Timed], marker: str) -> Timed:
    """The request whose answer carried ``SendMessage(marker)``: the one before the request that shows it."""
    ordered = sorted(requests, key=lambda r: r.arrived)
    for index, record in enumerate(ordered):
        if f"'message': '{marker}'" in record.previous_answer:
            return ordered[index - 1]
    raise SystemExit(f"no answer carried {marker}")


def _receiver(requests: list[Timed], marker: str) -> Timed:
    """The first request whose new user message holds ``marker`` as a teammate message."""
    return min((r for r in requests if f"\n{marker}\n" in r.last_user), key=lambda r: r.arrived)


def memory(base: Path, members: int, runs: int) -> tuple[int, int, int]:
    """Median peak KiB over ``runs``: a lead with ``members`` idle teammates, ``members`` background agents
    alive at once, a trivial run."""
    spawn = [tool("Agent", description=f"member {i}", prompt=f"MEMBER-{i}-END", name=f"m{i}")
             for i in range(members)]
    team_script = {"turns": [
        {"match": {"first_user_contains": LEAD, "last_is_tool_result": False, "last_user_contains": LEAD},
         "content": [tool("TeamCreate", team_name="mem")]},
        {"match": {"first_user_contains": LEAD, "last_user_contains": "lead_agent_id"}, "content": spawn},
        {"match": {"first_user_contains": "MEMBER-"}, "content": text("idle"), "repeat": True},
        {"match": {"first_user_contains": LEAD}, "content": text("done"), "repeat": True},
    ]}
    background = [tool("Agent", description=f"bg {i}", prompt=f"BG-{i}-END", run_in_background=True)
                  for i in range(members)]
    bg_script = {"turns": [
        {"match": {"first_user_contains": LEAD, "last_is_tool_result": False, "last_user_contains": LEAD},
         "content": background},
        {"match": {"first_user_contains": "BG-"}, "content": text("done"), "delay_ms": 1500, "repeat": True},
        {"match": {"first_user_contains": LEAD}, "content": text("done"), "repeat": True},
    ]}
    peaks: dict[str, list[int]] = {"team": [], "background": [], "trivial": []}
    scripts = {"team": team_script, "background": bg_script,
               "trivial": {"turns": [{"content": text("done"), "repeat": True}]}}
    for _ in range(runs):  # peak RSS varies by a few MiB from run to run: the median of several
        for kind, script in scripts.items():
            # A fresh project and home each time: what earlier runs left (tasks in state.db, transcripts)
            # is read at start-up and would count against whichever run comes later.
            with tempfile.TemporaryDirectory(dir=base) as fresh, TimedServer(script) as server:
                make_repo(Path(fresh))
                peaks[kind].append(run_cli(Path(fresh), server, LEAD))
    median = {k: int(statistics.median(v)) for k, v in peaks.items()}
    return median["team"], median["background"], median["trivial"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="ping-pong round trips")
    parser.add_argument("--members", type=int, default=20, help="teammates (and background agents) for memory")
    parser.add_argument("--memory-runs", type=int, default=5, help="runs per memory figure (the median is used)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        make_repo(base)
        result = ping_pong(base, args.rounds)
        baseline = statistics.median(result["baseline"])
        print(f"lead <-> idle teammate, {args.rounds} round trips")
        print(f"  baseline (back-to-back request): {ms(result['baseline'])}")
        for key, label in (("to_teammate", "hop lead -> teammate"), ("to_lead", "hop teammate -> lead")):
            median = statistics.median(result[key])
            print(f"  {label}: {ms(result[key])} = {median / baseline:5.1f}x baseline (goal < 20 ms)")
        team_peak, bg_peak, trivial = memory(base, args.members, args.memory_runs)
        print(f"memory, {args.members} agents each (median of {args.memory_runs} runs)")
        print(f"  trivial run peak RSS: {trivial / 1024:.1f} MiB")
        per_member = (team_peak - trivial) / args.members
        per_bg = (bg_peak - trivial) / args.members
        print(f"  teammates: {team_peak / 1024:.1f} MiB = +{per_member:.0f} KiB per teammate")
        print(f"  background agents: {bg_peak / 1024:.1f} MiB = +{per_bg:.0f} KiB per background agent")
        if per_bg > 0:
            print(f"  teammate / background agent: {per_member / per_bg:.2f}x")


if __name__ == "__main__":
    main()
