"""``workflow(name, args)`` and ``workflow({scriptPath}, args)``: a workflow script running another one as a step.

What Claude Code does (2.1.332's workflow-authoring reference and its implementation, docs/workflows.md), and
catui with it: the child runs inline on its parent's :class:`~catui.workflows.runner.WorkflowRunner` — the same
concurrency cap, agent counts, stop and dollar budget, and the same journal, so a resume of the parent replays
the child's finished agents as its own. The child's agents are grouped under ``▸ <name>`` (``▸ <name> #2`` for
the second run of that name), which is their phase; the child's own ``phase()`` calls are ignored and its log
lines start with ``[<name>] ``. The child's ``args`` is the call's second argument. Nesting is one level deep:
``workflow()`` inside a child rejects. An unknown name, an unreadable ``scriptPath``, a child's syntax error
and a child that throws reject the parent's ``workflow()`` call, which the parent can catch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.workflows.engine import MEMORY_LIMIT_BYTES, STEP_TIME_LIMIT_S
from catui.workflows.runner import AgentFailed, WorkflowRunner

GROUP_MARK = "▸"
"""The mark before a child workflow's group title (Claude Code's)."""
NESTING_LIMIT = ("workflow() cannot be called from within a child workflow — nesting is limited to one level. "
                 "Inline the inner script or call its agents directly.")
"""The rejection of ``workflow()`` inside a child (Claude Code's words)."""
BAD_REFERENCE = "workflow() expects a workflow name (string) or {scriptPath: string}"
MAX_CHILD_SCRIPTS_AT_ONCE = 4
"""Child scripts that run at the same time in one run: each has a QuickJS context of its own (with the
engine's memory ceiling), so ``parallel()`` of a hundred ``workflow()`` calls must not make a hundred. Their
agents still share the run's cap."""
CHILD_LOG_MAX_CHARS = 16 * 1024 * 1024
"""``log()`` output all of a run's children keep together (each child's engine also cuts its own)."""


def resolve_script_path(text: str, cwd: Path) -> Path:
    """A ``scriptPath`` as a path: ``~`` expanded, relative to ``cwd``. CatuiError for an unknown user's ``~``."""
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~someone/x.js" for a user this machine does not know
        raise CatuiError(f"cannot read {text}: no such user's home folder") from None
    return path if path.is_absolute() else cwd / path


@dataclass(frozen=True)
class WorkflowSources:
    """Where ``workflow(name)`` and ``workflow({scriptPath})`` find their scripts: the named workflows the
    Workflow tool's ``name`` starts (``.claude/workflows/``, plugins, built-ins) and files under ``cwd``."""

    cwd: Path
    plugin_dirs: Callable[[], list[str]] = list

    def named(self) -> dict[str, str]:
        from catui.workflows.named import named_workflows

        return named_workflows(self.cwd, self.plugin_dirs())

    def read(self, script_path: str) -> str:
        from catui.workflows.script_file import SCRIPT_FILE_MAX_CHARS, read_script_file

        return read_script_file(resolve_script_path(script_path, self.cwd), SCRIPT_FILE_MAX_CHARS)


@dataclass
class NestedWorkflows:
    """The child workflows of one run: finds their scripts and runs each on the run's runner."""

    sources: WorkflowSources
    memory_limit: int = MEMORY_LIMIT_BYTES
    time_limit_s: float = STEP_TIME_LIMIT_S
    """Each child script's ceilings (its own QuickJS context), as a top-level script's."""
    runs: dict[str, int] = field(default_factory=dict)
    """How many children of each name this run started (the group title of the second is ``▸ name #2``)."""
    log_chars: int = 0
    _slots: asyncio.Semaphore | None = None

    async def run(self, runner: WorkflowRunner, ref: Any, args: Any) -> Any:
        """Run the child ``ref`` (a name or ``{"scriptPath": …}``) with ``args``; its return value.
        Raises AgentFailed (a rejection the parent script can catch)."""
        from catui.workflows.engine import ScriptEngine, ScriptFailed, ScriptParseError, check_syntax

        name, source, shown = self._script(ref)
        try:
            check_syntax(source)
        except ScriptParseError as exc:
            raise AgentFailed(f"{shown}: {exc}") from None
        count = self.runs.get(name, 0) + 1
        self.runs[name] = count
        group = f"{GROUP_MARK} {name}" + (f" #{count}" if count > 1 else "")
        runner.reserve_phase(group)
        runner.log(f"{GROUP_MARK} running dynamic workflow {name}")
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CHILD_SCRIPTS_AT_ONCE)
        try:
            async with self._slots:
                engine = ScriptEngine(source=source, args=args, host=ChildHost(self, runner, name, group),
                                      memory_limit=self.memory_limit, time_limit_s=self.time_limit_s)
                value = await engine.run()
        except (ScriptFailed, CatuiError) as exc:
            runner.log(f"{GROUP_MARK} {name} failed: {exc}")
            raise AgentFailed(f"{shown} failed: {exc}") from None
        runner.log(f"{GROUP_MARK} {name} done")
        return value

    def _script(self, ref: Any) -> tuple[str, str, str]:
        """(name, source, how the call is shown in errors) of the child ``ref``; AgentFailed when there is none."""
        if isinstance(ref, str):
            available = self.sources.named()
            shown = f"workflow('{_one_line(ref)}')"
            if ref not in available:
                names = ", ".join(sorted(available)) or "(none)"
                raise AgentFailed(f"{shown}: no workflow with that name. Available: {names}")
            return ref, available[ref], shown
        if isinstance(ref, dict) and isinstance(ref.get("scriptPath"), str):
            from catui.workflows.engine import read_meta

            path = ref["scriptPath"]
            shown = f"workflow({{scriptPath: '{_one_line(path)}'}})"
            try:
                source = self.sources.read(path)
            except CatuiError as exc:
                raise AgentFailed(f"{shown}: {_one_line(str(exc), 2000)}") from None
            meta_name = read_meta(source).get("name")
            return (meta_name if isinstance(meta_name, str) and meta_name else Path(path).stem), source, shown
        raise AgentFailed(BAD_REFERENCE)

    def child_log(self, runner: WorkflowRunner, name: str, message: str) -> None:
        if self.log_chars > CHILD_LOG_MAX_CHARS:
            return
        self.log_chars += len(message)
        if self.log_chars > CHILD_LOG_MAX_CHARS:
            message = f"(child workflows' log() output passed {CHILD_LOG_MAX_CHARS:,} characters; later lines are left out)"
        runner.log(f"[{name}] {message}")


def _one_line(text: str, limit: int = 200) -> str:
    """``text`` for a one-line message: line breaks and other control characters escaped, cut at ``limit``."""
    escaped = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text[:limit])
    return escaped + ("…" if len(text) > limit else "")


@dataclass
class ChildHost:
    """The host functions a child script sees: its parent run's, with its agents in its group."""

    children: NestedWorkflows
    runner: WorkflowRunner
    name: str
    group: str

    async def agent(self, prompt: str, opts: dict[str, Any]) -> Any:
        # The group is the phase, as in Claude Code; it is part of the call's journal key, so a child's call
        # and the parent's same call are two agents.
        return await self.runner.agent(prompt, {**opts, "phase": self.group} if isinstance(opts, dict) else opts)

    def phase(self, title: str) -> None:
        """Ignored: a child's agents stay in its group."""

    def log(self, message: str) -> None:
        self.children.child_log(self.runner, self.name, message)

    def budget(self, what: str) -> float | None:
        return self.runner.budget(what)

    async def sub_workflow(self, ref: Any, args: Any) -> Any:
        raise AgentFailed(NESTING_LIMIT)
