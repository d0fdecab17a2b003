"""Workflows from Python: the same runner as the JavaScript ``Workflow`` scripts.

    from catui.workflows import agent, parallel, phase, workflow, run_workflow

    @workflow
    async def review(args):
        phase("Read")
        files = await agent(f"List the Python files under {args['dir']}", schema=FileList)
        notes = await parallel([lambda f=f: agent(f"Review {f}") for f in files.paths])
        return {"notes": notes}

    result = run_workflow(review, args={"dir": "src"})
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from os import PathLike, fspath
from typing import Any, TypeVar

from catui.errors import CatuiError
from catui.workflows.context import current_runner

T = TypeVar("T")


async def agent(prompt: str, *, schema: Any = None, label: str | None = None, phase: str | None = None,
                model: str | None = None, effort: str | None = None, isolation: str | None = None,
                agent_type: str | None = None) -> Any:
    """Run one agent and return its answer (text), or with ``schema`` its structured result.

    ``schema``: a pydantic model class (the result is an instance of it) or a JSON Schema dict (a dict).
    Raises :class:`catui.workflows.AgentFailed` when the agent fails (catch it to go on).
    """
    model_class: Any = schema if isinstance(schema, type) and hasattr(schema, "model_json_schema") else None
    json_schema = model_class.model_json_schema() if model_class is not None else schema
    opts = {k: v for k, v in {"label": label, "phase": phase, "schema": json_schema, "model": model,
                               "effort": effort, "isolation": isolation, "agentType": agent_type}.items() if v is not None}
    value = await current_runner().agent(prompt, opts)
    return model_class.model_validate(value) if model_class is not None else value


async def parallel(thunks: Sequence[Callable[[], Awaitable[T]]]) -> list[T | None]:
    """Call each zero-argument callable and await all together; a failed one gives None (as in scripts)."""
    async def one(thunk: Callable[[], Awaitable[T]]) -> T | None:
        try:
            return await thunk()
        except CatuiError:
            return None
    return list(await asyncio.gather(*(one(t) for t in thunks)))


async def pipeline(items: Sequence[Any], *stages: Callable[..., Awaitable[Any]]) -> list[Any]:
    """Each item through every stage in turn (``stage(value, item, index)``); items run side by side."""
    async def one(index: int, item: Any) -> Any:
        value = item
        for stage in stages:
            value = await stage(value, item, index)
        return value
    return list(await asyncio.gather(*(one(i, item) for i, item in enumerate(items))))


async def phase(title: str) -> None:
    """Start a new phase (agents started from now on belong to it)."""
    current_runner().phase(title)


async def log(message: str) -> None:
    """A line in the run's log."""
    current_runner().log(message)


async def sub_workflow(name_or_path: str | PathLike[str], args: Any = None) -> Any:
    """Run another workflow as one step of this one and return its value (a script's ``workflow(name, args)``).

    ``name_or_path``: the name of a saved workflow (``.claude/workflows/<name>.js``, a plugin's, a built-in) or
    the path of a script file. The child shares this run's cap, budget, stop and journal; it may not start
    workflows of its own. Raises :class:`catui.workflows.AgentFailed` when it cannot run or fails.
    """
    ref: Any = name_or_path if isinstance(name_or_path, str) else {"scriptPath": fspath(name_or_path)}
    return await current_runner().sub_workflow(ref, args)


def workflow(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` (an async function of ``args``) as a file's workflow entry point."""
    fn.__catui_workflow__ = True  # type: ignore[attr-defined]
    return fn


def run_workflow(fn: Callable[..., Any], args: Any = None, *, options: Any = None, budget: float | None = None) -> Any:
    """Run a workflow function to its end and return its value (from synchronous code).

    ``options``: a :class:`catui.app.RunOptions` (model, cwd, permission mode). Raises CatuiError on failure.
    Inside a running event loop use ``await run_workflow_async(...)``.
    """
    return asyncio.run(run_workflow_async(fn, args, options=options, budget=budget))


async def run_workflow_async(fn: Callable[..., Any], args: Any = None, *, options: Any = None,
                             budget: float | None = None) -> Any:
    """:func:`run_workflow` for async code."""
    from catui.workflows.service import run_function

    return await run_function(fn, args=args, options=options, budget=budget)
