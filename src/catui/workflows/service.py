"""Start, run and resume a workflow (a JavaScript file or a Python function) and keep its record."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catui.app import AgentApp, RunOptions, build_app
from catui.errors import CatuiError
from catui.workflows.agents import agents_context, runtime_agent_runner
from catui.workflows.execute import WorkflowOutcome, execute
from catui.workflows.nested import NestedWorkflows, WorkflowSources
from catui.workflows.runner import (
    AgentRunner,
    WorkflowFiles,
    WorkflowRunner,
    locate_run,
    max_concurrent_agents,
    new_run_id,
    read_record,
)


def load_python_workflow(path: Path) -> Callable[..., Any]:
    """The ``@workflow`` function of a Python file (or its ``main``). Raises CatuiError."""
    spec = importlib.util.spec_from_file_location(f"catui_workflow_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise CatuiError(f"{path}: cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CatuiError(f"{path}: {type(exc).__name__}: {exc}") from None
    marked = [v for v in vars(module).values() if callable(v) and getattr(v, "__catui_workflow__", False)]
    if len(marked) == 1:
        return marked[0]
    if not marked and inspect.iscoroutinefunction(getattr(module, "main", None)):
        return module.main
    if marked:
        raise CatuiError(f"{path}: {len(marked)} functions carry @workflow; keep one")
    raise CatuiError(f"{path}: no @workflow function (decorate one async function with catui.workflows.workflow)")


async def run_file(path: Path, *, args: Any = None, options: RunOptions | None = None, budget: float | None = None,
                   resume_run_id: str | None = None, on_start: Callable[[str], None] | None = None) -> WorkflowOutcome:
    """Run ``FILE.js`` or ``FILE.py`` (or resume ``resume_run_id`` of it) and return how it ended."""
    base = options or RunOptions()
    suffix = path.suffix.lower()
    if suffix not in (".js", ".mjs", ".py"):
        raise CatuiError(f"{path}: a workflow is a .js or .py file")
    from catui.workflows.script_file import read_script_file

    source = read_script_file(path)
    return await _run(source=source, kind="python" if suffix == ".py" else "js", script_path=path.resolve(),
                      args=args, options=base, budget=budget, resume_run_id=resume_run_id, on_start=on_start)


async def resume(run_id: str, *, options: RunOptions | None = None,
                 on_start: Callable[[str], None] | None = None) -> WorkflowOutcome:
    """Resume run ``run_id``: journaled agents are replayed, the rest run; the same script and args."""
    base = options or RunOptions()
    record = read_record(base.cwd, run_id)
    copy = Path(record.get("scriptCopy") or "")
    if record.get("kind") == "python":
        copy = Path(record.get("scriptPath") or "")
    if not copy.is_file():
        raise CatuiError(f"run {run_id}: its script {copy} is gone; it cannot be resumed")
    return await _run(source=copy.read_text(encoding="utf-8"), kind=str(record.get("kind") or "js"),
                      script_path=Path(record.get("scriptPath") or copy), args=record.get("args"), options=base,
                      budget=record.get("budget"), resume_run_id=run_id, on_start=on_start)


async def run_function(fn: Callable[..., Any], *, args: Any = None, options: RunOptions | None = None,
                       budget: float | None = None) -> Any:
    """Run a Python workflow function now and return its value (raises CatuiError when it fails)."""
    outcome = await _run(source=None, kind="python", script_path=None, args=args, options=options or RunOptions(),
                         budget=budget, resume_run_id=None, on_start=None, function=fn)
    if outcome.status != "completed":
        raise CatuiError(f"workflow {outcome.run_id} failed: {outcome.error}")
    return outcome.result


async def _run(*, source: str | None, kind: str, script_path: Path | None, args: Any, options: RunOptions,
               budget: float | None, resume_run_id: str | None, on_start: Callable[[str], None] | None,
               function: Callable[..., Any] | None = None) -> WorkflowOutcome:
    from catui.workflows.engine import check_syntax

    if kind == "js" and source is not None:
        check_syntax(source)
    if kind == "python" and function is None and script_path is not None:
        function = load_python_workflow(script_path)
    run_id = resume_run_id or new_run_id()
    files = (locate_run(options.cwd, run_id) if resume_run_id else None) or WorkflowFiles.for_project(options.cwd, run_id)
    app = build_app(options)  # its agents ask for the distributed executor themselves (SpawnRequest.remote)
    try:
        runner = WorkflowRunner(files=files, run_agent=app_agent_runner(app, run_id, transcript_dir=files.run_dir),
                                concurrency=max_concurrent_agents(), budget_usd=budget,
                                children=NestedWorkflows(WorkflowSources(options.cwd.resolve(), _plugin_dirs(app))))
        name = (script_path.stem if script_path is not None else getattr(function, "__name__", "workflow"))
        return await execute(runner, kind=kind, source=source, function=function, args=args, name=name,
                             script_path=script_path, resume=resume_run_id is not None, on_start=on_start)
    finally:
        await app.aclose()


def _plugin_dirs(app: AgentApp) -> Callable[[], list[str]]:
    """The plugin folders whose ``workflows/`` a child ``workflow(name)`` may come from (as the tool's ``name``)."""
    def listed() -> list[str]:
        from catui.agents.plugins import plugin_paths  # lazy (catui.lazy): plugins and YAML

        return [*app.options.plugin_dirs, *plugin_paths(app.settings.merged)]
    return listed


def app_agent_runner(app: AgentApp, run_id: str, *, transcript_dir: Path | None = None) -> AgentRunner:
    """``agent()`` calls of run ``run_id`` as children of ``app``'s main session (transcripts in ``transcript_dir``)."""
    system = app.services.subagents
    if system is None:
        raise CatuiError("the host app has no sub-agent runtime")
    return runtime_agent_runner(system.runtime, agents_context(app.session.ctx, stop=asyncio.Event()), run_id,
                                transcript_dir=transcript_dir)
