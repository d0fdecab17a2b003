"""One workflow run: its files, its journal, and its agents on catui's sub-agent runtime.

:class:`WorkflowRunner` is the host of both front ends (the JavaScript engine and the Python API):
``agent()`` becomes one sub-agent run of a host app (``runtime.prepare`` +
``foreground.run_to_completion``, so the executor seam, the per-agent limits and the session budget
apply), under the concurrency cap, with its result journaled before the caller sees it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from catui.errors import CatuiError
from catui.paths import sessions_dir
from catui.workflows.journal import Journal, call_key
from catui.workflows.schema_check import agent_schema_problem

DEFAULT_AGENT_TYPE = "general-purpose"
MAX_CONCURRENT_ENV = "CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS"
AGENT_OPTION_KEYS = frozenset({"label", "phase", "schema", "model", "effort", "isolation", "agentType"})
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class AgentFailed(CatuiError):
    """An ``agent()`` call that did not give a result: a rejected promise / an exception the script can catch."""


class BudgetSpent(AgentFailed):
    """The workflow's dollar budget is spent: no new agent starts."""


def new_run_id() -> str:
    """``wf_`` + 8 hex + ``-`` + 3 hex, as Claude Code's run ids."""
    return f"wf_{secrets.token_hex(4)}-{secrets.token_hex(2)[:3]}"


def max_concurrent_agents(env: dict[str, str] | None = None) -> int:
    """``CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS``, else min(16, CPUs − 2), at least 1."""
    raw = (env if env is not None else dict(os.environ)).get(MAX_CONCURRENT_ENV)
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise CatuiError(f"{MAX_CONCURRENT_ENV}={raw!r} is not a whole number; set it to 1 or more") from None
        if value < 1:
            raise CatuiError(f"{MAX_CONCURRENT_ENV}={raw!r} must be 1 or more")
        return value
    return max(1, min(16, (os.cpu_count() or 1) - 2))


@dataclass(frozen=True)
class WorkflowFiles:
    """Where one run's files live: the record and script copy under ``root``, the journal under ``runs``.

    ``catui workflow`` keeps both in the project's ``workflows/`` folder; the Workflow tool, as Claude Code,
    puts the record in ``<session>/workflows/`` and the journal in ``<session>/subagents/workflows/<run id>/``.
    """

    root: Path
    run_id: str
    runs: Path | None = None

    @classmethod
    def for_project(cls, cwd: Path, run_id: str) -> WorkflowFiles:
        return cls(sessions_dir(cwd) / "workflows", run_id)

    @classmethod
    def for_session(cls, cwd: Path, session_id: str, run_id: str) -> WorkflowFiles:
        folder = sessions_dir(cwd) / session_id
        return cls(folder / "workflows", run_id, folder / "subagents" / "workflows")

    @property
    def record(self) -> Path:
        return self.root / f"{self.run_id}.json"

    @property
    def run_dir(self) -> Path:
        return (self.runs or self.root) / self.run_id

    @property
    def journal(self) -> Path:
        return self.run_dir / "journal.jsonl"

    def script_copy(self, name: str, suffix: str) -> Path:
        # The name is the script's meta.name: only a plain file name part of it, so "../x", "/", NUL or a
        # thousand characters can neither leave the scripts folder nor make the copy fail.
        safe = _UNSAFE_NAME.sub("_", name).lstrip(".")[:64] or "workflow"
        return self.root / "scripts" / f"{safe}-{self.run_id}{suffix}"


def frame_prompt(prompt: str) -> str:
    """The first message of a workflow agent: catui's own framing, then the task indented by two spaces."""
    body = "\n".join("  " + line if line else line for line in prompt.split("\n"))
    return ("[catui workflow step] A program started you as one step of a workflow and reads what you "
            "hand back. Do the task below completely; your final message (or your StructuredOutput call, "
            "when you have that tool) is the step's result.\n\nThe task:\n" + body)


@dataclass
class Counts:
    agent_count: int = 0
    agents_done: int = 0
    agents_error: int = 0
    agents_skipped: int = 0
    agents_empty_result: int = 0
    subagent_tokens: int = 0
    tool_uses: int = 0
    cost_usd: float = 0.0


AgentRunner = Callable[[str, dict[str, Any], str, Callable[[str], None]], Awaitable[tuple[Any, dict[str, Any]]]]
"""(framed prompt, options, label, started) → (result, stats: agentId, tokens, toolUses, costUsd, toolsUsed,
sessionId, placement).

The options carry the call's phase (its own, else the current one). ``started(agent_id)`` is called once the
agent has its id, before it runs (its journal ``started`` line and its progress entry name it).
"""


class ChildWorkflows(Protocol):
    """Runs ``workflow(name, args)`` for a runner (:class:`catui.workflows.nested.NestedWorkflows`)."""

    async def run(self, runner: WorkflowRunner, ref: Any, args: Any) -> Any: ...


@dataclass
class WorkflowRunner:
    """The host of one run: agent calls, phases, logs, the budget, the journal and the run record."""

    files: WorkflowFiles
    run_agent: AgentRunner
    concurrency: int
    budget_usd: float | None = None
    replay: dict[str, Any] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    logs: list[str] = field(default_factory=list)
    progress: list[dict[str, Any]] = field(default_factory=list)
    current_phase: str | None = None
    on_progress: Callable[[], None] | None = None
    """Called after each progress entry (phase, agent start, agent done): the Workflow tool's task_progress."""
    stopping: bool = False
    """Set when the run is being stopped (TaskStop): no new agent starts."""
    children: ChildWorkflows | None = None
    """Where ``workflow(name, args)`` runs a child workflow; None: the call rejects."""
    groups: list[str] = field(default_factory=list)
    """The progress groups of the run's child workflows (``▸ name``), in the order they started."""
    _seen: dict[str, int] = field(default_factory=dict)
    _gate: asyncio.Semaphore | None = None

    def __post_init__(self) -> None:
        self.journal = Journal(self.files.journal)

    def _progress(self, entry: dict[str, Any]) -> None:
        self.progress.append(entry)
        if self.on_progress is not None:
            self.on_progress()

    # -- host functions ------------------------------------------------------------------------

    def phase(self, title: str) -> None:
        self.current_phase = title
        self._progress({"type": "workflow_phase", "title": title})

    def reserve_phase(self, title: str) -> None:
        """A progress group (a child workflow's) that does not become the current phase."""
        self.groups.append(title)
        self._progress({"type": "workflow_phase", "title": title})

    def log(self, message: str) -> None:
        self.logs.append(message)

    def budget(self, what: str) -> float | None:
        if what == "spent":
            return round(self.counts.cost_usd, 6)
        if self.budget_usd is None:
            return None
        return self.budget_usd if what == "total" else max(0.0, round(self.budget_usd - self.counts.cost_usd, 6))

    async def sub_workflow(self, ref: Any, args: Any) -> Any:
        """``workflow(ref, args)``: run the child workflow ``ref`` (a name or ``{"scriptPath": …}``) on this run."""
        if self.children is None:
            raise AgentFailed("workflow(): this run cannot start child workflows")
        return await self.children.run(self, ref, args)

    async def agent(self, prompt: str, opts: dict[str, Any]) -> Any:
        if not isinstance(opts, dict):
            raise AgentFailed("agent(prompt, options): options must be an object")
        unknown = sorted(set(opts) - AGENT_OPTION_KEYS)
        if unknown:
            raise AgentFailed(f"agent(): unknown option {unknown[0]!r}; options are {', '.join(sorted(AGENT_OPTION_KEYS))}")
        if opts.get("schema") is not None:  # checked before anything starts: the script can catch it at once
            problem = agent_schema_problem(opts["schema"])
            if problem is not None:
                raise AgentFailed(problem)
        identity = json.dumps({"prompt": prompt, "opts": opts}, sort_keys=True, ensure_ascii=False)
        occurrence = self._seen.get(identity, 0)
        self._seen[identity] = occurrence + 1
        key = call_key(prompt, opts, occurrence)
        label = str(opts.get("label") or prompt)
        self.counts.agent_count += 1
        if key in self.replay:
            self.counts.agents_skipped += 1
            self._progress({"type": "workflow_agent", "label": label, "phase": opts.get("phase") or self.current_phase,
                            "state": "done", "replayed": True})
            return self.replay[key]
        if self.budget_usd is not None and self.counts.cost_usd >= self.budget_usd:
            self.counts.agents_error += 1
            raise BudgetSpent(f"the workflow budget of ${self.budget_usd:g} is spent; agent {label!r} was not started")
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)
        phase = opts.get("phase") or self.current_phase
        agent_id: str | None = None

        def started(new_id: str) -> None:
            nonlocal agent_id
            agent_id = new_id
            self.journal.append({"type": "started", "key": key, "agentId": new_id, "label": label, "phase": phase},
                                durable=False)
            self._progress({"type": "workflow_agent", "label": label, "agentId": new_id, "phase": phase,
                            "state": "start"})

        async with self._gate:
            if self.stopping:
                raise AgentFailed(f"the workflow is stopping; agent {label!r} was not started")
            try:
                result, stats = await self.run_agent(frame_prompt(prompt), {**opts, "phase": phase}, label, started)
            except AgentFailed as exc:
                self.counts.agents_error += 1
                self.journal.append({"type": "error", "key": key, "agentId": agent_id, "label": label,
                                     "error": str(exc)})
                self._progress({"type": "workflow_agent", "label": label, "agentId": agent_id, "phase": phase,
                                "state": "error", "error": str(exc)})
                raise
        self.counts.agents_done += 1
        self.counts.agents_empty_result += result in (None, "")
        self.counts.subagent_tokens += int(stats.get("tokens", 0))
        self.counts.tool_uses += int(stats.get("toolUses", 0))
        self.counts.cost_usd += float(stats.get("costUsd", 0.0))
        # The fields and their order of Claude Code's result lines (observed-cc-now.md §7).
        entry: dict[str, Any] = {"type": "result", "key": key, "agentId": stats.get("agentId"), "result": result,
                                 "remoteControlDeviceReport": False}
        if stats.get("toolsUsed"):
            entry["toolsUsed"] = stats["toolsUsed"]
        if stats.get("sessionId"):
            entry["sessionId"] = stats["sessionId"]
        if stats.get("placement"):
            entry["placement"] = stats["placement"]  # where it ran (Ray: node, pid); the journal is the caller's
        self.journal.append(entry)  # before the script sees it: a kill from here on never repeats the agent
        self._progress({"type": "workflow_agent", "label": label, "agentId": stats.get("agentId"), "phase": phase,
                        "state": "done", "tokens": int(stats.get("tokens", 0))})
        return result

    # -- the run record ------------------------------------------------------------------------

    def write_record(self, record: dict[str, Any]) -> None:
        path = self.files.record
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".json.tmp")
        # errors: a lone surrogate (a script's string) is written as its JSON escape, which reads back the same
        temporary.write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8",
                             errors="backslashreplace")
        os.replace(temporary, path)  # atomic: a kill leaves the old record or the new one

    def record_fields(self) -> dict[str, Any]:
        return {"agentCount": self.counts.agent_count, "logs": list(self.logs), "workflowProgress": list(self.progress),
                "totalTokens": self.counts.subagent_tokens, "totalToolCalls": self.counts.tool_uses,
                "counts": {"agent_count": self.counts.agent_count, "agents_done": self.counts.agents_done,
                           "agents_error": self.counts.agents_error, "agents_skipped": self.counts.agents_skipped,
                           "agents_empty_result": self.counts.agents_empty_result},
                "costUsd": round(self.counts.cost_usd, 6)}


def locate_run(cwd: Path, run_id: str) -> WorkflowFiles | None:
    """The files of run ``run_id`` of this project: a ``catui workflow`` run or a Workflow tool run of any session."""
    project = WorkflowFiles.for_project(cwd, run_id)
    try:
        if project.record.is_file():
            return project
        for record in sorted(sessions_dir(cwd).glob(f"*/workflows/{run_id}.json")):
            return WorkflowFiles.for_session(cwd, record.parent.parent.name, run_id)
    except OSError:  # an id no file can be named after (too long for the file system): no such run
        return None
    return None


def read_record(cwd: Path, run_id: str) -> dict[str, Any]:
    """A run's record. Raises CatuiError naming the run when there is none."""
    files = locate_run(cwd, run_id)
    path = files.record if files is not None else WorkflowFiles.for_project(cwd, run_id).record
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatuiError(f"no workflow run {run_id} in this project; `catui workflow list` shows the runs") from None
    except OSError as exc:  # e.g. an id too long to be a file name
        raise CatuiError(f"no workflow run {run_id[:80]} in this project ({exc.strerror}); `catui workflow list` "
                         "shows the runs") from None
    except json.JSONDecodeError as exc:
        raise CatuiError(f"{path}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise CatuiError(f"{path}: not a run record")
    return data


def elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
