"""Many independent prompts, each run as its own agent: ``catui batch`` and the SDK's :func:`run_batch`.

A task is one JSON object a line: ``prompt`` (required), and optionally ``id``,
``agent`` (an agent type), ``model``, ``cwd`` (or ``repo``, the same: the
folder the agent works in). Each task becomes one sub-agent run of a host app
built for its folder, on the chosen executor (``in-process`` or ``ray``, where
it runs remotely in its own checkout). Results are appended as JSON lines as
tasks finish; a results file that already holds an id makes that task skip, so
an interrupted batch resumes by running the same command again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from catui.app.build import AgentApp, RunOptions, build_app
from catui.errors import ConfigurationError
from catui.messages import text_of
from catui.models.pricing import cost_usd
from catui.subagents.run import SpawnRequest
from catui.tools.base import ToolResult

DEFAULT_AGENT = "general-purpose"
TASK_KEYS = frozenset({"id", "prompt", "agent", "model", "cwd", "repo"})


@dataclass(frozen=True)
class BatchTask:
    """One prompt to run as its own agent."""

    id: str
    prompt: str
    agent: str | None = None
    model: str | None = None
    cwd: str | None = None


@dataclass
class BatchResult:
    """One finished task, as written to the results file."""

    id: str
    status: str  # completed | failed | stopped
    result: str | None
    usage: dict[str, Any] = field(default_factory=dict)
    cost_usd: float = 0.0
    branch: str | None = None
    worktree: str | None = None
    error: str | None = None
    duration_ms: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "result": self.result, "usage": self.usage,
                "cost_usd": self.cost_usd, "branch": self.branch, "worktree": self.worktree,
                "error": self.error, "duration_ms": self.duration_ms}


@dataclass
class BatchSummary:
    """What a batch run did: counts, cost, wall time."""

    total: int
    completed: int = 0
    failed: int = 0
    skipped: int = 0
    cost_usd: float = 0.0
    duration_s: float = 0.0
    results: list[BatchResult] = field(default_factory=list)

    def line(self) -> str:
        return (f"batch: {self.total} tasks — {self.completed} completed, {self.failed} failed, "
                f"{self.skipped} skipped (already in the results); ${self.cost_usd:.4f}; {self.duration_s:.1f}s")


def parse_tasks(lines: Iterable[str], source: str = "tasks") -> list[BatchTask]:
    """Tasks from JSONL text. Raises ConfigurationError naming ``source``, the line and the fix."""
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{source} line {number}"
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{where}: not JSON ({exc.msg}); write one JSON object a line") from None
        tasks.append(task_from_mapping(item, where, default_id=f"line-{number}"))
        if tasks[-1].id in seen:
            raise ConfigurationError(f"{where}: id {tasks[-1].id!r} is used twice; give each task its own id")
        seen.add(tasks[-1].id)
    return tasks


def task_from_mapping(item: Any, where: str, *, default_id: str) -> BatchTask:
    """One task from a JSON object (or a BatchTask-like mapping). Raises ConfigurationError."""
    if not isinstance(item, Mapping):
        raise ConfigurationError(f'{where}: expected an object such as {{"prompt": "..."}}')
    unknown = sorted(set(item) - TASK_KEYS)
    if unknown:
        raise ConfigurationError(f"{where}: unknown key {unknown[0]!r}; keys are {', '.join(sorted(TASK_KEYS))}")
    prompt = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigurationError(f'{where}: "prompt" must be a non-empty string')
    for key in ("id", "agent", "model", "cwd", "repo"):
        if item.get(key) is not None and not isinstance(item.get(key), str):
            raise ConfigurationError(f'{where}: "{key}" must be a string')
    return BatchTask(id=item.get("id") or default_id, prompt=prompt, agent=item.get("agent"),
                     model=item.get("model"), cwd=item.get("cwd") or item.get("repo"))


def finished_ids(results: Path) -> set[str]:
    """Ids already in a results file (a torn last line, from a crash mid-write, is ignored)."""
    if not results.exists():
        return set()
    done: set[str] = set()
    for raw in results.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            done.add(item["id"])
    return done


def _open_results(results: Path) -> TextIO:
    """The results file for appending; a torn last line (a crash mid-write) is ended first."""
    results.parent.mkdir(parents=True, exist_ok=True)
    torn = results.exists() and results.stat().st_size > 0 and not results.read_bytes().endswith(b"\n")
    sink = results.open("a", encoding="utf-8")
    if torn:
        sink.write("\n")
    return sink


class _Hosts:
    """One host app per folder: its main session is the parent of that folder's task agents."""

    def __init__(self, base: RunOptions) -> None:
        self.base = base
        self.apps: dict[Path, AgentApp] = {}

    def for_folder(self, cwd: str | None) -> AgentApp:
        folder = (self.base.cwd / cwd).resolve() if cwd else self.base.cwd.resolve()
        if not folder.is_dir():
            raise ConfigurationError(f"task folder {folder} does not exist; fix the task's cwd/repo")
        if folder not in self.apps:
            options = dataclasses.replace(self.base, cwd=folder)
            self.apps[folder] = build_app(options)
        return self.apps[folder]

    async def aclose(self) -> None:
        for app in self.apps.values():
            await app.aclose()


async def run_one(app: AgentApp, task: BatchTask, default_agent: str) -> BatchResult:
    """Run ``task`` as one agent of ``app`` and describe how it ended."""
    system = app.services.subagents
    if system is None:
        raise ConfigurationError("the host app has no sub-agent runtime")
    runtime = system.runtime
    request = SpawnRequest(description=f"batch task {task.id}", prompt=task.prompt,
                           subagent_type=task.agent or default_agent, model=task.model,
                           tool_use_id=f"batch_{task.id}")
    started = time.monotonic()
    try:
        run = await runtime.prepare(request, app.session.ctx)
    except ConfigurationError as exc:
        return BatchResult(task.id, "failed", None, error=str(exc))
    except Exception as exc:  # an agent that cannot start fails its task only
        return BatchResult(task.id, "failed", None, error=f"{type(exc).__name__}: {exc}")
    outcome = await runtime.foreground.run_to_completion(run)
    data = outcome.data if isinstance(outcome.data, dict) else {}
    status = "stopped" if run.stop_requested else ("failed" if outcome.is_error else "completed")
    usage = {k: v for k, v in run.session.usage.items() if isinstance(v, int)}
    answer = run.latest_text() if not outcome.is_error else None
    return BatchResult(
        id=task.id, status=status, result=answer, usage=usage,
        cost_usd=round(cost_usd(run.model.model_id, run.session.usage), 6),
        branch=data.get("worktreeBranch"), worktree=data.get("worktreePath"),
        error=_error_text(outcome) if outcome.is_error else None,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _error_text(outcome: ToolResult) -> str:
    content = outcome.content
    text = content if isinstance(content, str) else text_of({"role": "user", "content": content})
    return text.splitlines()[0] if text else "failed"


async def run_batch(
    tasks: Iterable[BatchTask | Mapping[str, Any]], *, results: Path | None = None, out: TextIO | None = None,
    executor: str | None = None, concurrency: int = 4, agent: str | None = None, options: RunOptions | None = None,
    on_result: Callable[[BatchResult, BatchSummary], None] | None = None,
) -> BatchSummary:
    """Run every task as its own agent, ``concurrency`` at a time; returns the summary (with every result).

    ``results``: the JSONL file results are appended to as tasks finish; ids already in it are skipped
    (resume). ``out``: a stream each result line is also written to. ``executor``: ``in-process`` or ``ray``
    (None: ``CATUI_EXECUTOR`` / the ``executor`` setting). ``agent``: the agent type of tasks that name none.
    ``options``: the host apps' options (model, permission mode, settings); ``cwd`` is where relative task
    folders start. Raises ConfigurationError for a bad task or option.
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be 1 or more, not {concurrency}")
    items = [t if isinstance(t, BatchTask) else task_from_mapping(t, f"task {i}", default_id=f"line-{i}")
             for i, t in enumerate(tasks, start=1)]
    done = finished_ids(results) if results is not None else set()
    pending = [t for t in items if t.id not in done]
    summary = BatchSummary(total=len(items), skipped=len(items) - len(pending))
    base = options or RunOptions()
    hosts = _Hosts(dataclasses.replace(base, executor=executor or base.executor, remote_foreground=True))
    gate = asyncio.Semaphore(concurrency)
    started = time.monotonic()
    sink = _open_results(results) if results is not None else None

    async def one(task: BatchTask) -> None:
        async with gate:
            try:
                app = hosts.for_folder(task.cwd)
                result = await run_one(app, task, agent or DEFAULT_AGENT)
            except ConfigurationError as exc:
                result = BatchResult(task.id, "failed", None, error=str(exc))
        line = json.dumps(result.to_json(), ensure_ascii=False) + "\n"
        for stream in (sink, out):
            if stream is not None:
                stream.write(line)  # one write a line: a crash never leaves half of one behind
                stream.flush()
        summary.results.append(result)
        summary.completed += result.status == "completed"
        summary.failed += result.status != "completed"
        summary.cost_usd += result.cost_usd
        if on_result is not None:
            on_result(result, summary)

    try:
        await asyncio.gather(*(one(task) for task in pending))
    finally:
        summary.duration_s = time.monotonic() - started
        if sink is not None:
            sink.close()
        await hosts.aclose()
    return summary
