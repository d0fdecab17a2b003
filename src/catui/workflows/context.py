"""The workflow run the Python API's functions (agent, phase, log …) belong to: a context variable."""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable
from typing import Any

from catui.errors import CatuiError

_current: contextvars.ContextVar[Any] = contextvars.ContextVar("catui_workflow_runner")


def current_runner() -> Any:
    """The running workflow's runner. Raises CatuiError outside a workflow."""
    runner = _current.get(None)
    if runner is None:
        raise CatuiError("agent()/phase()/log() run inside a workflow: call run_workflow(fn) or `catui workflow run`")
    return runner


async def running_in(runner: Any, fn: Callable[..., Any], args: Any) -> Any:
    """Run ``fn`` (of ``args``, or of nothing) with ``runner`` as the current workflow."""
    token = _current.set(runner)
    try:
        value = fn(args) if len(inspect.signature(fn).parameters) else fn()
        return await value if inspect.isawaitable(value) else value
    finally:
        _current.reset(token)
