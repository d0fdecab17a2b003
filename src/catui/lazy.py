"""What catui imports late, and why: a run loads the code of a feature when it uses the feature.

Start-up is a feature (issue 28): a trivial ``catui -p`` run or SDK ``query()`` must be answered in a
fraction of the time Claude Code takes, and each module imported costs every run its load time
whether the run uses it or not. So the trivial print path (``tests/data/print_path_modules.txt``
lists its modules; ``tests/test_print_path_modules.py`` fails when one joins without a deliberate
change to that file) imports only what answering a prompt needs: the CLI, settings, permissions,
the agent definitions, the model provider, the session loop and the tool set. These load when used
(each such import is marked ``# lazy (catui.lazy)`` where it happens):

* **Tool input models** are built on their first validation (``ToolInput``'s ``defer_build``); the
  schemas sent to the model are stored JSON (:mod:`catui.tools.static_schemas`). Building them all
  cost some 60 ms.
* **The Bash sandbox** (``catui.sandbox``): only when the ``sandbox`` setting or option is present
  (``catui.app.config.bash_sandbox``) or a sandboxed command starts.
* **Worktrees and git** (``catui.worktree``): when an agent enters or leaves one, an isolated child
  starts, the opt-in WorktreeMerge tool runs, or the start-up sweep finds recorded worktrees.
* **Plugins and agent/skill files** (``catui.agents.plugins``, YAML front matter): only when the
  settings name plugins, ``--plugin-dir`` is given, or such files exist (the SDK's init message too).
* **MCP** (``catui.mcp``): when servers are configured, or a child asks for its servers.
* **Agent teams** (``catui.subagents.teams``), **forked children** (``catui.subagents.fork``, and with it
  the child planner ``catui.subagents.plan``): only when their flags turn them on, or the first Agent call.
* **The current profile's parts**: its hook fields (``catui.app.hook_fields``) and ToolSearch with the
  deferred-tool view (``catui.tools.tool_search``), only under that profile (or, for ToolSearch, with MCP
  servers); the default 2.1.92 profile without MCP uses neither.
* **The HTML converter** of WebFetch, **cron expressions** (``cronsim``), the **state database**
  (``catui.state``, SQLite): when the first page is fetched, a prompt scheduled, a task recorded.
* **The terminal UI**, the **subcommands** and the **stream-json control protocol**: only in the
  modes that use them (``catui.cli.main``, ``catui.cli.run``).

Large loads (the SDK's modules on first use of ``catui.query`` and friends, the application when an SDK
client connects or the CLI starts a run) happen with the cyclic collector paused (:func:`collector_paused`):
what they make lives to the end of the process, so the collections meanwhile find nothing.

What stays on the trivial path, and its cost (CPU on this 2-core machine, see docs/decisions.md): the
interpreter (~35 ms), asyncio (~25 ms, with ssl and logging), pydantic (~65 ms to import, ~15 ms to create
the ~30 input-model and agent-definition classes, deferred builds included), click (~12 ms), h11 (~8 ms) and
~185 of catui's modules (~75 ms, a third of it creating dataclasses). Taking pydantic off would need agent
definitions and tool descriptors without pydantic classes (input models in modules of their own, loaded
on first validation); not done yet.

Packages that re-export their submodules' names (``catui.worktree``, ``catui.tasks``,
``catui.state``) resolve them on first attribute access through :func:`lazy_exports`, so that
importing one submodule does not import its siblings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package`` that imports ``exports[name]`` on first access.

    ``exports`` maps each re-exported name to the submodule defining it. The value is cached in the
    package's namespace, so each name is looked up once.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
