"""Run a workflow (a script or a Python function) on a :class:`WorkflowRunner` and keep its record."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.workflows.runner import WorkflowRunner, elapsed_ms


@dataclasses.dataclass(frozen=True)
class WorkflowOutcome:
    """How a run ended."""

    run_id: str
    status: str  # completed | failed (a stopped run raises CancelledError)
    result: Any = None
    error: str | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    duration_ms: int = 0


async def execute(runner: WorkflowRunner, *, kind: str, source: str | None, function: Callable[..., Any] | None,
                  args: Any, name: str, script_path: Path | None, resume: bool,
                  on_start: Callable[[str], None] | None = None, extra: dict[str, Any] | None = None,
                  on_meta: Callable[[dict[str, Any]], None] | None = None) -> WorkflowOutcome:
    """Run a script (``kind`` ``js``) or a Python function on ``runner``, keeping its record; how it ended.

    ``resume``: replay the journal's results (the run's id and files are ``runner.files``'). ``extra``:
    more record fields (the Workflow tool's task id). ``on_meta``: called with the script's ``meta`` once
    it is known (before the first agent finishes).
    """
    from catui.workflows.engine import ScriptEngine, ScriptFailed

    files = runner.files
    run_id = files.run_id
    if resume:
        runner.replay = runner.journal.results()
    else:
        runner.journal.append({"type": "launched"})
    copy: Path | None = None
    if source is not None and kind == "js":
        copy = files.script_copy(name, ".js")
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(source, encoding="utf-8")
    started_at = datetime.now(UTC).isoformat()
    started = time.monotonic()
    record: dict[str, Any] = {"runId": run_id, "timestamp": started_at, **(extra or {}), "kind": kind,
                              "script": source if kind == "js" else None,
                              "scriptPath": str(script_path) if script_path else None,
                              "scriptCopy": str(copy) if copy else None, "args": args, "budget": runner.budget_usd,
                              "result": None, "summary": None, "workflowName": name, "status": "running",
                              "startTime": started_at, "phases": [], "resumed": resume}
    runner.write_record({**record, **runner.record_fields()})
    if on_start is not None:
        on_start(run_id)
    status, result, error = "completed", None, None
    engine: ScriptEngine | None = None
    try:
        if kind == "js":
            engine = ScriptEngine(source=source or "", args=args, host=runner, on_meta=on_meta)
            result = await engine.run()
        else:
            from catui.workflows.context import running_in

            assert function is not None
            result = await running_in(runner, function, args)
    except asyncio.CancelledError:
        # Stopped (TaskStop, Ctrl-C): the record says so; the journal keeps what finished, for a resume.
        record.update({"status": "stopped", "error": "stopped by request", "durationMs": elapsed_ms(started)})
        runner.write_record({**record, **runner.record_fields()})
        raise
    except (ScriptFailed, CatuiError) as exc:
        status, error = "failed", str(exc)
    except Exception as exc:  # a Python workflow that raises ends the run failed with its message
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    meta = engine.meta if engine is not None else {}
    record.update({"status": status, "result": json.loads(json.dumps(result, default=_jsonable)),
                   "error": error, "durationMs": elapsed_ms(started),
                   "summary": meta.get("description"), "phases": meta.get("phases") or [],
                   "workflowName": meta.get("name") or name})
    runner.write_record({**record, **runner.record_fields()})
    return WorkflowOutcome(run_id, status, record["result"], error, meta, record["durationMs"])


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)
