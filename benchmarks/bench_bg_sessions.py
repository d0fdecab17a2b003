"""Background sessions (issue 31): message hop, memory of idle sessions, ``catui sessions`` with 50 listed.

    .venv/bin/python benchmarks/bench_bg_sessions.py [--hops N] [--idle N] [--listed N]

Real detached sessions (``python -m catui.bgsessions.worker``) against tests/support/anthropic_server.py on
127.0.0.1, with a temporary catui home. Measured in the same run:

- message hop: from a message written to a live idle session's inbox (what SendMessage to a peer does) to that
  session's model request reaching the server, median over N hops; beside it, the server's answer time to a
  direct request (the floor any session pays). Goal: under 20 ms.
- memory: the resident set (RSS, and PSS that splits shared pages) of N idle background sessions, per
  session, beside a bare ``python -c`` process; and the CPU they use while idle (polling their inboxes).
- listing: ``python -m catui sessions --all`` with N registered sessions, median of 5, beside
  ``python -c pass`` (interpreter start, the floor). Goal: under 0.2 s.

Prints the numbers and ratios; there are no assertions. Every session it starts is killed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.support.anthropic_server import AnthropicTestServer  # noqa: E402
from tests.support.bg_sessions import main_bodies  # noqa: E402


def env_for(home: Path, server: AnthropicTestServer) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home / "home"),
            "CATUI_HOME": str(home / "catui-home"), "PYTHONPATH": str(ROOT / "src"), **server.env("test")}


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of ``pid`` in kB."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            values[key] = int(rest.split()[0])
    return values["Rss"], values["Pss"]


def wait_until(check, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.01)


def entries(home: Path) -> list[dict]:  # type: ignore[type-arg]
    found = []
    for path in (home / "catui-home" / "bg").glob("*/session.json"):
        try:
            found.append(json.loads(path.read_text()))
        except ValueError:
            continue
    return found


def start(folder: Path, env: dict[str, str], prompt: str, name: str) -> str:
    done = subprocess.run([sys.executable, "-m", "catui", "--bg", prompt, "--name", name], cwd=folder, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout.split(" · ")[1].split()[0]


def kill_all(home: Path) -> None:
    for entry in entries(home):
        if entry.get("pid"):
            try:
                os.killpg(entry["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass


def turn_requests(server: AnthropicTestServer) -> int:
    """Requests of turns (not the classifier and namer requests a session makes after each turn)."""
    return len(main_bodies(server))


def bench_hops(home: Path, server: AnthropicTestServer, hops: int) -> None:
    from catui.bgsessions import inbox

    env = env_for(home, server)
    folder = home / "work"
    folder.mkdir(exist_ok=True)
    session = start(folder, env, "wait here", "receiver")
    session_folder = home / "catui-home" / "bg" / session
    idle = lambda: any(e["id"] == session and e["status"] == "idle" for e in entries(home))  # noqa: E731
    wait_until(idle)
    times = []
    for _ in range(hops):
        before = turn_requests(server)
        sent = time.perf_counter()
        inbox.post(session_folder, inbox.new_message("peer", "ping", from_ref="catui:bench", from_name="bench",
                                                     from_mode="default"))
        wait_until(lambda before=before: turn_requests(server) > before)  # type: ignore[misc]
        times.append(time.perf_counter() - sent)
        wait_until(idle)
    direct = []
    for _ in range(hops):
        body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 16, "stream": True,
                           "messages": [{"role": "user", "content": "ping"}]}).encode()
        request = urllib.request.Request(server.url + "/v1/messages", body, {
            "content-type": "application/json", "x-api-key": "test", "anthropic-version": "2023-06-01"})
        began = time.perf_counter()
        with urllib.request.urlopen(request) as answer:
            answer.read(1)
        direct.append(time.perf_counter() - began)
    hop = statistics.median(times) * 1000
    print(f"message hop (inbox write -> receiver's model request): median {hop:.1f} ms over {hops} "
          f"(goal < 20 ms); a direct request's first byte: {statistics.median(direct) * 1000:.1f} ms")


def bench_memory(home: Path, server: AnthropicTestServer, count: int) -> None:
    env = env_for(home, server)
    folder = home / "work"
    folder.mkdir(exist_ok=True)
    ids = [start(folder, env, "wait here", f"idle-{i}") for i in range(count)]
    wait_until(lambda: sum(1 for e in entries(home) if e["id"] in ids and e["status"] == "idle") == count)
    pids = [e["pid"] for e in entries(home) if e["id"] in ids]
    rss, pss = zip(*(memory_kb(pid) for pid in pids), strict=True)
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_s() -> float:
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        return total / ticks

    before_cpu, began = cpu_s(), time.perf_counter()
    time.sleep(3)
    idle_cpu = (cpu_s() - before_cpu) / (time.perf_counter() - began) / count
    bare = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    time.sleep(0.3)
    bare_rss, _ = memory_kb(bare.pid)
    bare.kill()
    bare.wait()
    print(f"{count} idle sessions: RSS {statistics.mean(rss) / 1024:.1f} MB each (PSS {statistics.mean(pss) / 1024:.1f} "
          f"MB), {sum(pss) / 1024:.0f} MB PSS in all; a bare python: RSS {bare_rss / 1024:.1f} MB "
          f"(ratio {statistics.mean(rss) / bare_rss:.1f}x); CPU while idle: {idle_cpu * 100:.1f}% of a core each")


def bench_listing(home: Path, listed: int) -> None:
    from catui.bgsessions.registry import SessionEntry, write_entry

    os.environ["CATUI_HOME"] = str(home / "catui-listing")
    for i in range(listed):
        write_entry(SessionEntry(id=f"{i:08x}", session_id=f"{i:08x}-0000-4000-8000-000000000000",
                                 name=f"session-{i}", cwd=str(home), permission_mode="default",
                                 started_at=int(time.time() * 1000), pid=os.getpid() if i % 2 else 999999,
                                 pid_start=None))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

    def timed(*args: str) -> float:
        runs = []
        for _ in range(5):
            began = time.perf_counter()
            subprocess.run([sys.executable, *args], env=env, capture_output=True, check=True)
            runs.append(time.perf_counter() - began)
        return statistics.median(runs)

    floor = timed("-c", "pass")
    for label, args in (("sessions --all --json", ("sessions", "--all", "--json")), ("logs ID", ("logs", "00000000")),
                        ("stop ID (a stopped one)", ("stop", "00000000"))):
        took = timed("-m", "catui", *args)
        imported = subprocess.run([sys.executable, "-X", "importtime", "-m", "catui", *args], env=env,
                                  capture_output=True, text=True, check=True).stderr.count("import time:") - 1
        print(f"catui {label} with {listed} listed: {took * 1000:.0f} ms (goal < 200 ms); python -c pass: "
              f"{floor * 1000:.0f} ms (ratio {took / floor:.2f}x); {imported} modules imported")
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=env, capture_output=True,
                          text=True, check=True).stderr.count("import time:") - 1
    print(f"python -c pass imports {bare} modules")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hops", type=int, default=20)
    parser.add_argument("--idle", type=int, default=20)
    parser.add_argument("--listed", type=int, default=50)
    args = parser.parse_args()
    script = {"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}
    with tempfile.TemporaryDirectory() as raw, AnthropicTestServer(script) as server:
        home = Path(raw)
        try:
            bench_hops(home, server, args.hops)
            bench_memory(home, server, args.idle)
        finally:
            kill_all(home)
        bench_listing(home, args.listed)


if __name__ == "__main__":
    main()
