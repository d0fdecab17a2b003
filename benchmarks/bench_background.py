"""What background agents cost against the same agents run in the foreground.

Run from the repository root::

    .venv/bin/python benchmarks/bench_background.py [--agents 50] [--rounds 20]
    .venv/bin/python benchmarks/bench_background.py --agents 1000 --rounds 0   # issue 13's scale goal

Everything runs in this process on the scripted provider (no network), with
the real application (``build_app``) and print mode's conversation loop:

- memory per running agent: one parent message starts N agents whose children
  all wait at a gate tool; Python heap in use (tracemalloc) while all N wait,
  minus the heap before the run, divided by N. Background run vs the same N
  agents in the foreground (one message's Agent calls run side by side).
  The tool-call window and the cap on running background agents are raised
  to N for these runs (``CATUI_MAX_TOOL_USE_CONCURRENCY`` /
  ``CATUI_MAX_CONCURRENT_SUBAGENTS``), so that all N are alive at once; a
  third run keeps the default cap (20): 20 agents run and the rest queue, and
  the heap per launched agent shows what a queued one costs.
- notification latency: the child's final answer ends (its model stream is
  done) → the parent's next model request starts. In the background that is
  the notified turn (a new parent turn started by ``next_notification``); in
  the foreground it is the parent's request carrying the tool_result.

Numbers are printed with their ratio to the foreground baseline; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import Field

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from catui.app import RunOptions, build_app  # noqa: E402
from catui.cli.run import conversation_events  # noqa: E402
from catui.models.resolve import clear_provider_cache  # noqa: E402
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult  # noqa: E402

WORKER = {"description": "Does one job.", "prompt": "You are the worker agent.", "tools": ["Gate", "Glob"]}


class GateInput(ToolInput):
    key: str = Field(description="which gate")


class GateTool(Tool):
    """Waits until the benchmark opens the gate; counts who is waiting."""

    name: ClassVar[str] = "Gate"
    input_model: ClassVar[type[ToolInput]] = GateInput
    read_only: ClassVar[bool] = True

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.waiting = 0

    @property
    def description(self) -> str:
        return "Waits for the benchmark."

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.waiting += 1
        await self.gate.wait()
        return ToolResult("open")


class TimedProvider:
    """Wraps the scripted provider; records (kind, is_child, last user text, time) per request start and end."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.log: list[tuple[str, bool, str, float]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        is_child = request.metadata.get("agent_id") is not None
        last = str(request.messages[-1].get("content"))[:2000] if request.messages else ""
        self.log.append(("start", is_child, last, time.perf_counter()))
        async for event in self.inner.stream(request):
            yield event
        self.log.append(("end", is_child, last, time.perf_counter()))

    async def aclose(self) -> None:
        await self.inner.aclose()


def _script(folder: Path, turns: list[dict[str, Any]]) -> Path:
    path = folder / f"script-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return path


def _calls(count: int, background: bool) -> list[dict[str, Any]]:
    calls = []
    for i in range(count):
        args: dict[str, Any] = {"description": f"job {i}", "prompt": f"Do job {i}", "subagent_type": "worker"}
        if background:
            args["run_in_background"] = True
        calls.append({"type": "tool_use", "name": "Agent", "input": args})
    return calls


def _turns(count: int, background: bool, child_turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "Noted."}],
         "repeat": True},
        {"match": {"first_user_contains": "BENCH", "last_is_tool_result": False}, "content": _calls(count, background)},
        {"match": {"first_user_contains": "BENCH", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Parent done."}], "repeat": True},
        *child_turns,
    ]


async def _run(folder: Path, turns: list[dict[str, Any]], gate: GateTool | None,
               on_all_waiting: Any = None, expected: int = 0) -> TimedProvider:
    project = folder / f"project-{time.monotonic_ns()}"
    project.mkdir()
    tools: list[Tool] = [gate] if gate is not None else []
    options = RunOptions(cwd=project, model=f"scripted:{_script(folder, turns)}", flag_agents={"worker": WORKER},
                         extra_tools=tools, write_transcript=False)
    app = build_app(options)
    timed = TimedProvider(app.session.config.provider)
    app.session.config.provider = timed  # children inherit the parent's provider

    async def drive() -> None:
        async for _event in conversation_events(app, "BENCH go"):
            pass

    runner = asyncio.create_task(drive())
    if gate is not None:
        while gate.waiting < expected:
            await asyncio.sleep(0.005)
        if on_all_waiting is not None:
            on_all_waiting()
        gate.gate.set()
    await runner
    await app.aclose()
    clear_provider_cache()
    return timed


async def memory_per_agent(folder: Path, count: int, background: bool, running: int | None = None) -> float:
    """Heap bytes per launched agent while ``running`` of ``count`` agents (all by default) wait at the gate."""
    child = [
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Gate", "input": {"key": "k"}}], "repeat": True},
        {"match": {"system_contains": "You are the worker agent", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "Child done."}], "repeat": True},
    ]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    during: list[int] = []

    def sample() -> None:
        gc.collect()
        during.append(tracemalloc.get_traced_memory()[0])

    await _run(folder, _turns(count, background, child), GateTool(), sample, count if running is None else running)
    tracemalloc.stop()
    return (during[0] - before) / count


async def notification_latency(folder: Path, rounds: int, background: bool) -> list[float]:
    """Milliseconds from the child's final answer to the parent's next request, per round."""
    child = [{"match": {"system_contains": "You are the worker agent"}, "delay_ms": 30,
              "content": [{"type": "text", "text": "Child done."}], "repeat": True}]
    out: list[float] = []
    for _ in range(rounds):
        timed = await _run(folder, _turns(1, background, child), None)
        child_end = next(t for kind, is_child, _, t in timed.log if kind == "end" and is_child)
        marker = "<task-notification>" if background else "tool_result"
        parent_next = next(t for kind, is_child, last, t in timed.log
                           if kind == "start" and not is_child and t > child_end and marker in last)
        out.append((parent_next - child_end) * 1000)
    return out


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def _set_limits(window: int, background_cap: int) -> None:
    os.environ["CATUI_MAX_TOOL_USE_CONCURRENCY"] = str(window)
    os.environ["CATUI_MAX_CONCURRENT_SUBAGENTS"] = str(background_cap)


async def main_async(agents: int, rounds: int) -> None:
    os.environ.setdefault("CATUI_HOME", tempfile.mkdtemp(prefix="bench-bg-home-"))
    default_cap = 20
    with tempfile.TemporaryDirectory(prefix="bench-bg-") as tmp:
        folder = Path(tmp)
        _set_limits(max(agents, 10), max(agents, default_cap))
        # Warm-up: lazy imports and one-time caches must not be counted against the first mode measured.
        await memory_per_agent(folder, 2, background=False)
        await memory_per_agent(folder, 2, background=True)
        started = time.perf_counter()
        fg_mem = await memory_per_agent(folder, agents, background=False)
        fg_s = time.perf_counter() - started
        started = time.perf_counter()
        bg_mem = await memory_per_agent(folder, agents, background=True)
        bg_s = time.perf_counter() - started
        queued_mem = None
        if agents > default_cap:
            _set_limits(max(agents, 10), default_cap)
            queued_mem = await memory_per_agent(folder, agents, background=True, running=default_cap)
        fg_lat = await notification_latency(folder, rounds, background=False) if rounds else []
        bg_lat = await notification_latency(folder, rounds, background=True) if rounds else []
    print(f"memory per running agent ({agents} at once, Python heap; goal <= 200 KB each):")
    print(f"  foreground (baseline): {fg_mem / 1024:8.1f} KiB   (whole run {fg_s:.1f} s)")
    print(f"  background:            {bg_mem / 1024:8.1f} KiB   {_ratio(bg_mem, fg_mem)}   (whole run {bg_s:.1f} s)")
    if queued_mem is not None:
        print(f"  background, cap {default_cap} ({agents - default_cap} queued): {queued_mem / 1024:8.1f} KiB"
              f" per launched agent   {_ratio(queued_mem, fg_mem)}")
    if not rounds:
        return
    fg_med, bg_med = statistics.median(fg_lat), statistics.median(bg_lat)
    print(f"child's final answer -> parent's next request ({rounds} rounds, median [min-max]):")
    print(f"  foreground tool_result (baseline): {fg_med:6.2f} ms [{min(fg_lat):.2f}-{max(fg_lat):.2f}]")
    print(f"  background notification turn:     {bg_med:6.2f} ms [{min(bg_lat):.2f}-{max(bg_lat):.2f}]"
          f"   {_ratio(bg_med, fg_med)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=50, help="agents running at once for the memory figure")
    parser.add_argument("--rounds", type=int, default=20, help="runs for the latency figure")
    args = parser.parse_args()
    asyncio.run(main_async(args.agents, args.rounds))


if __name__ == "__main__":
    main()
