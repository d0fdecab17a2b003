"""claude-agent-sdk driving catui (``cli_path``) against ``catui -p`` doing the same one-turn run, in the same run.

    .venv/bin/python benchmarks/bench_sdk_protocol.py [--runs N]

Cases, each the median of N runs (interleaved, so that a noisy moment hits
every case alike), all on the loopback Messages API server of
``tests/support/anthropic_server.py``:
  * ``catui -p pong --output-format stream-json --system-prompt ""`` as a subprocess
    (the baseline; the empty prompt is what the SDK passes by default),
  * claude-agent-sdk's ``query()`` with ``cli_path`` = this venv's ``catui``
    (start, ``initialize``, one prompt, result, stdin closed, exit),
  * the same with a ``PreToolUse`` hook callback and an in-process SDK MCP tool
    called once (two control round trips more, and the MCP handshake).
Prints medians in ms and ratios to the baseline; asserts nothing.
Needs the test extra (claude-agent-sdk). No network beyond 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CATUI = str(Path(sys.executable).with_name("catui"))
sys.path.insert(0, str(ROOT))


def plain_turns() -> list[dict[str, Any]]:
    return [{"content": [{"type": "text", "text": "pong"}], "repeat": True}]


def tool_turns() -> list[dict[str, Any]]:
    return [
        {"match": {"last_is_tool_result": False}, "repeat": True,
         "content": [{"type": "tool_use", "name": "mcp__calc__add", "input": {"a": 1, "b": 2}}]},
        {"match": {"last_is_tool_result": True}, "repeat": True, "content": [{"type": "text", "text": "3"}]},
    ]


def time_cli(server: Any, home: Path, work: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), **server.env())
    started = time.perf_counter()
    # --system-prompt "": what the SDK passes by default, so both skip the same start-up work (git status, memory)
    done = subprocess.run([CATUI, "-p", "pong", "--output-format", "stream-json", "--model", "claude-sonnet-4-6",
                           "--system-prompt", ""],
                          cwd=work, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"catui -p failed: {done.stderr}")
    return elapsed


async def time_sdk(server: Any, work: Path, *, with_tools: bool) -> float:
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        HookMatcher,
        ResultMessage,
        create_sdk_mcp_server,
        query,
        tool,
    )

    extra: dict[str, Any] = {}
    if with_tools:
        @tool("add", "Add two integers", {"a": int, "b": int})
        async def add(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

        async def allow(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
            return {}

        extra = {"mcp_servers": {"calc": create_sdk_mcp_server("calc", tools=[add])},
                 "allowed_tools": ["mcp__calc__add"], "hooks": {"PreToolUse": [HookMatcher(hooks=[allow])]}}
    options = ClaudeAgentOptions(cli_path=CATUI, cwd=str(work), model="claude-sonnet-4-6", env=server.env(),
                                 **extra)
    started = time.perf_counter()
    results = [m async for m in query(prompt="pong", options=options) if isinstance(m, ResultMessage)]
    elapsed = time.perf_counter() - started
    if not results or results[-1].is_error:
        raise SystemExit(f"the SDK run failed: {results}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError:
        raise SystemExit("claude-agent-sdk is not installed: pip install -e '.[test]'") from None
    from tests.support.anthropic_server import AnthropicTestServer

    plain = AnthropicTestServer({"turns": plain_turns()}).start()
    tools = AnthropicTestServer({"turns": tool_turns()}).start()
    times: dict[str, list[float]] = {"catui -p (baseline)": [], "SDK query()": [], "SDK query() + hook + MCP tool": []}
    with tempfile.TemporaryDirectory() as folder:
        home, work = Path(folder) / "home", Path(folder) / "work"
        work.mkdir()
        os.environ.update(HOME=str(home), CATUI_HOME=str(home / ".catui"))
        try:
            for _ in range(runs):
                times["catui -p (baseline)"].append(time_cli(plain, home, work))
                times["SDK query()"].append(asyncio.run(time_sdk(plain, work, with_tools=False)))
                times["SDK query() + hook + MCP tool"].append(asyncio.run(time_sdk(tools, work, with_tools=True)))
        finally:
            plain.stop()
            tools.stop()
    baseline = statistics.median(times["catui -p (baseline)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32s} {median * 1000:8.1f} ms  {median / baseline:5.2f}x")


if __name__ == "__main__":
    main()
