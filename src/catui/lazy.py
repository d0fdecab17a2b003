"""What catui imports late, and why: a run loads the code of a feature when it uses the feature.

Start-up is a feature (issue 28): a trivial ``catui -p`` run or SDK ``query()`` must be answered in a
fraction of the time Claude Code takes, and each module imported costs every run its load time
whether the run uses it or not. So the trivial print path (``tests/data/print_path_modules.txt``
lists its modules; ``tests/test_print_path_modules.py`` fails when one joins without a deliberate
change to that file) imports only what answering a prompt needs: the CLI, settings, permissions,
the agent definitions, the model provider, the session loop and the tool set. These load when used
(each such import is marked ``# lazy (catui.lazy)`` where it happens):

* **Tool input models, and pydantic with them**: each tool names its model, ``Tool.input_model_ref =
  "module:QualName"``, kept in a sibling ``<tool>_input`` module (``catui.tools.read_input`` for
  Read) that is imported on the first access of ``Tool.input_model``: the first validation of a
  call's input. The schemas sent to the model are stored JSON (:mod:`catui.tools.static_schemas`),
  the name and description are the tool's own, so offering a tool needs no pydantic. A model module
  imports nothing of its tool's module; the tool imports it only inside a call (an ``isinstance``
  check), and ``pydantic.ValidationError`` is looked up by ``except input_validation_error()``,
  evaluated only when a validation failed. The models are built on their first validation too
  (``ToolInput``'s ``defer_build``).
* **Agent definitions' validation**: ``AgentDefinition`` is a plain class; the built-in agents and
  checked agent files are built without validation, and a definition built by keyword (SDK callers,
  JSON agents, a file's unusual values) is validated by the pydantic model of
  ``catui.agents.definition_fields``, imported then.
* **The Bash sandbox** (``catui.sandbox``): only when the ``sandbox`` setting or option is present
  (``catui.app.config.bash_sandbox``) or a sandboxed command starts.
* **Worktrees and git** (``catui.worktree``): when an agent enters or leaves one, an isolated child
  starts, the opt-in WorktreeMerge tool runs, or the start-up sweep finds recorded worktrees.
* **Plugins and agent/skill files** (``catui.agents.plugins``, YAML front matter): only when the
  settings name plugins, ``--plugin-dir`` is given, or such files exist (the SDK's init message too).
* **MCP** (``catui.mcp``): when servers are configured, a child asks for its servers, or a driver adds
  servers with ``setMcpServers``.
* **Agent teams** (``catui.subagents.teams``), **forked children** (``catui.subagents.fork``, and with it
  the child planner ``catui.subagents.plan``): only when their flags turn them on. The run of a child
  (``catui.subagents.run``, its limits and models) loads with the first Agent call.
* **The current profile's parts**: its hook fields (``catui.app.hook_fields``), and ToolSearch with the
  deferred-tool view (``catui.tools.tool_search``), only under that profile (ToolSearch also with MCP
  servers); the default 2.1.92 profile without MCP uses neither.
* **The HTML converter** of WebFetch, **cron expressions** (``cronsim``), the **state database**
  (``catui.state``, SQLite): when the first page is fetched, a prompt scheduled, a task recorded.
* **click and the CLI itself** for ``catui --help``: the help is click's rendering stored as text
  (``catui.cli.stored_help``) and printed from ``catui.cli.entry`` on a terminal at least 80 columns
  wide; ``catui sessions | logs | stop`` are answered there too (``catui.bgsessions.quick``).
* **Compaction** (``catui.session.compaction``): before a request of a conversation of two messages or
  more (one message is never compacted), on ``/compact``, or when the provider refuses a request as too
  long. **A memory agent's tools** (``catui.subagents.memory_tools``): only for an agent with ``memory``.
  **The run's controls** (``catui.app.controls``): when a front end changes the permission mode, stops
  a task or rewinds files.
* **The terminal UI**, the **subcommands** and the **stream-json control protocol**: only in the
  modes that use them (``catui.cli.main``, ``catui.cli.run``); AskUserQuestion
  (``catui.tools.ask_user_question``) only in interactive sessions, the only ones that offer it.

Large loads are kept out of the cyclic collector's young generations: the CLI freezes what importing
the application made (``catui.cli.main``), and the SDK loads its modules and the application through
:func:`long_lived_load`. Those objects live to the end of the process; left young, each collection the
allocations trigger walks them again (~11 ms of CPU a run; now 1-2 ms).

The dataclasses that stay on the path (about a hundred) reuse their generated methods' compiled code
from a file kept beside catui's bytecode (:mod:`catui.dataclass_code`, entered by the CLI's entry point and
by :func:`long_lived_load`): Python 3.11 compiles each generated method anew, ~30 ms a run.

What stays on the trivial path, with its CPU cost on this machine (docs/decisions.md has the figures): the
interpreter, asyncio (with ssl and logging), click, h11 and ~183 of catui's modules. pydantic left it in
the second round (issue 28): a run imports it when it validates a tool call's input or an agent
definition given by keyword.

Packages that re-export their submodules' names (``catui.worktree``, ``catui.tasks``,
``catui.state``) resolve them on first attribute access through :func:`lazy_exports`, so that
importing one submodule does not import its siblings.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
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


@contextmanager
def long_lived_load() -> Iterator[None]:
    """Load a large part of catui (the SDK's modules, the application) as long-lived objects.

    What an import makes (modules, classes, the built-in agents) lives until the process ends. Left to
    the cyclic collector, it is walked by every young collection the allocations trigger meanwhile
    (~80 when the SDK loads the application) and then again by the older ones. So the collector is
    paused while the block runs, and what exists afterwards is moved to the oldest generation
    (``gc.freeze`` then ``gc.unfreeze``: where survivors of those collections would have ended up),
    which young collections skip. A program that froze objects itself (``gc.get_freeze_count()``) keeps
    them frozen: then only the pause applies. The collector's enabled state comes back as it was. The
    dataclasses the block defines reuse their methods' compiled code (:mod:`catui.dataclass_code`).
    """
    from catui.dataclass_code import reused_dataclass_code

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with reused_dataclass_code():
            yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
