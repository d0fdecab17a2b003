"""The application: wiring a run's options and settings into the main session and what it shares.

- :mod:`.options`: :class:`RunOptions`, what a front end asks for;
- :mod:`.build`: :func:`build_app` / :func:`start_app`, putting the parts together;
- :mod:`.services`: :class:`AgentApp` (the built application, with the methods front ends call) and
  :class:`AppServices` (what its parts share);
- :mod:`.prompt`, :mod:`.tool_set`, :mod:`.config`, :mod:`.main_agent`: the system prompt, the tool set,
  effort/thinking/sandbox settings, the ``--agent`` definition;
- :mod:`.controls`, :mod:`.status`: what a front end may change or ask while a
  session runs (model, permission mode, stopping tasks, rewinding files, MCP and context status);
- :mod:`.output_format`, :mod:`.batch`: structured output and batch runs, shared by both front ends.

The CLI (:mod:`catui.cli`) and the SDK (:mod:`catui.sdk`) are the two front ends over this package.
The names below are loaded on first use, so importing one module of the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catui.app.build import (
        AgentApp,
        AppServices,
        RunOptions,
        build_app,
        effective_env,
        first_prompt_content,
        start_app,
    )

__all__ = [
    "AgentApp", "AppServices", "RunOptions", "build_app", "effective_env", "first_prompt_content", "start_app",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'catui.app' has no attribute {name!r}")
    value = getattr(importlib.import_module("catui.app.build"), name)
    globals()[name] = value
    return value
