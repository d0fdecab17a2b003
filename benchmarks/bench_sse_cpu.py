"""CPU time catui's process spends per SSE event, on each HTTP transport (lean and httpx2).

    .venv/bin/python benchmarks/bench_sse_cpu.py [--streams 20] [--blocks 400] [--rounds 5]

The loopback Messages API server of ``tests/support/anthropic_server.py`` runs
in a separate process (so its CPU is not counted) and answers every request
with one long turn: ``--blocks`` text blocks of about five events each, every
event its own chunk on the wire, as the real API sends them. This process
streams ``--streams`` such turns at once through ``AnthropicProvider`` (the
fan-out case: many sub-agents streaming together), ``--rounds`` times per
transport, transports interleaved, and reports the median CPU time
(``time.process_time``: user + system of this process) per event received.
The connections are warmed first, so neither imports nor connecting are
counted. No assertions: this is a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = ("lean", "httpx")


def script_text(blocks: int) -> str:
    content = [{"type": "text", "text": f"event payload number {i} of the benchmark"} for i in range(blocks)]
    return json.dumps({"turns": [{"repeat": True, "content": content}]})


async def stream_round(url: str, transport: str, streams: int) -> tuple[float, int]:
    """CPU seconds and events for ``streams`` concurrent turns through ``transport``."""
    from catui.models.base import ModelRequest
    from catui.models.http_api.anthropic import AnthropicProvider

    # The transport is named both ways: the provider's env (where catui reads it) and the process
    # environment (where versions before the env plumbing read it), so one script measures both.
    os.environ["CATUI_HTTP_CLIENT"] = transport
    provider = AnthropicProvider(base_url=url, api_key="k", env={"CATUI_HTTP_CLIENT": transport})
    request = ModelRequest(model="claude-sonnet-4-6", system=[], messages=[{"role": "user", "content": "go"}])

    async def one() -> int:
        return sum([1 async for _ in provider.stream(request)])

    started = time.process_time()
    counts = await asyncio.gather(*(one() for _ in range(streams)))
    return time.process_time() - started, sum(counts)


async def measure(url: str, streams: int, rounds: int) -> dict[str, list[float]]:
    from catui.models.http_api.post import aclose_http_client

    per_event: dict[str, list[float]] = {name: [] for name in TRANSPORTS}
    for name in TRANSPORTS:  # warm-up: imports, connections, TLS-free pools
        await stream_round(url, name, streams)
    for _ in range(rounds):
        for name in TRANSPORTS:
            cpu, events = await stream_round(url, name, streams)
            per_event[name].append(cpu / events * 1e6)
    await aclose_http_client()
    return per_event


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=20, help="concurrent streams per round (default 20)")
    parser.add_argument("--blocks", type=int, default=400, help="text blocks per streamed turn (default 400)")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per transport (default 5)")
    args = parser.parse_args()
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            del os.environ[name]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(script_text(args.blocks))
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.support.anthropic_server", str(script)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = json.loads(server.stdout.readline())["url"]
            results = asyncio.run(measure(url, args.streams, args.rounds))
        finally:
            server.terminate()
            server.wait(timeout=10)
    medians = {name: statistics.median(values) for name, values in results.items()}
    print(f"{args.streams} concurrent streams x ~{args.blocks * 5} events, median of {args.rounds} rounds")
    for name in TRANSPORTS:
        print(f"  {name:6s} {medians[name]:7.1f} us CPU per event")
    print(f"  httpx / lean: {medians['httpx'] / medians['lean']:.2f}x")


if __name__ == "__main__":
    main()
