"""Start, run and resume a workflow (a JavaScript file or a Python function) and keep its record."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catui.app import RunOptions, build_app
from catui.errors import CatuiError
from catui.workflows.runner import (
    WorkflowFiles,
    WorkflowRunner,
    elapsed_ms,
    max_concurrent_agents,
    new_run_id,
    read_record,
)


@dataclasses.dataclass(frozen=True)
class WorkflowOutcome:
    """How a run ended."""

    run_id: str
    status: str  # completed | failed
    result: Any = None
    error: str | None = None


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
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatuiError(f"cannot read {path}: {exc.strerror or exc}") from None
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
    from catui.workflows.agents import app_agent_runner
    from catui.workflows.engine import ScriptEngine, ScriptFailed, check_syntax

    if kind == "js" and source is not None:
        check_syntax(source)
    if kind == "python" and function is None and script_path is not None:
        function = load_python_workflow(script_path)
    run_id = resume_run_id or new_run_id()
    files = WorkflowFiles.for_project(options.cwd, run_id)
    app = build_app(dataclasses.replace(options, remote_foreground=True))
    runner = WorkflowRunner(files=files, run_agent=app_agent_runner(app, run_id), concurrency=max_concurrent_agents(),
                            budget_usd=budget)
    if resume_run_id is not None:
        runner.replay = runner.journal.results()
    else:
        runner.journal.append({"type": "launched"})
    name = (script_path.stem if script_path is not None else getattr(function, "__name__", "workflow"))
    copy: Path | None = None
    if source is not None and kind == "js":
        copy = files.script_copy(name, ".js")
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(source, encoding="utf-8")
    started_at = datetime.now(UTC).isoformat()
    started = time.monotonic()
    record: dict[str, Any] = {"runId": run_id, "timestamp": started_at, "kind": kind,
                              "script": source if kind == "js" else None,
                              "scriptPath": str(script_path) if script_path else None,
                              "scriptCopy": str(copy) if copy else None, "args": args, "budget": budget,
                              "result": None, "summary": None, "workflowName": name, "status": "running",
                              "startTime": started_at, "phases": [], "resumedFrom": resume_run_id}
    runner.write_record({**record, **runner.record_fields()})
    if on_start is not None:
        on_start(run_id)
    status, result, error = "completed", None, None
    engine: ScriptEngine | None = None
    try:
        if kind == "js":
            engine = ScriptEngine(source=source or "", args=args, host=runner)
            result = await engine.run()
        else:
            from catui.workflows.api import running_in

            assert function is not None
            result = await running_in(runner, function, args)
    except (ScriptFailed, CatuiError) as exc:
        status, error = "failed", str(exc)
    except Exception as exc:  # a Python workflow that raises ends the run failed with its message
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        await app.aclose()
    meta = engine.meta if engine is not None else {}
    record.update({"status": status, "result": json.loads(json.dumps(result, default=_jsonable)),
                   "error": error, "durationMs": elapsed_ms(started),
                   "summary": meta.get("description"), "phases": meta.get("phases") or [],
                   "workflowName": meta.get("name") or name})
    runner.write_record({**record, **runner.record_fields()})
    return WorkflowOutcome(run_id, status, record["result"], error)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)
