"""Slash commands about the work around the conversation: /agents (list, show, create) and /tasks.

``/tasks`` lists this session's background agents and shells (a resumed
session's earlier ones included, as history) and the project's interrupted
agents; ``/tasks show|stop|resume ID`` take an id or a unique prefix of at
least four characters.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.authoring import NewAgent, split_tools, write_agent_file
from catui.cli.commands.agents_listing import format_listing
from catui.cli.commands.agents_show import format_agent
from catui.cli.commands.project_state import format_age
from catui.cli.tui.slash_commands import CommandHost, SlashCommand
from catui.errors import ConfigurationError
from catui.paths import user_config_dirs

if TYPE_CHECKING:
    from catui.tasks.model import Task

AGENTS_USAGE = "/agents [list | show NAME | create [NAME]]"
TASKS_USAGE = "/tasks [show ID | stop ID | resume ID]"
MIN_PREFIX = 4


async def agents_command(host: CommandHost, argument: str) -> None:
    """``/agents``: the agent registry; ``show NAME``; ``create`` asks a few questions and writes the file."""
    verb, _, rest = argument.partition(" ")
    registry = host.app.registry
    if verb in ("", "list"):
        registry.reload_if_changed()
        for line in format_listing(registry).splitlines():
            host.say(line)
    elif verb == "show":
        name = rest.strip()
        agent = registry.get(name) if name else None
        if agent is None:
            known = ", ".join(a.agent_type for a in registry.active)
            raise ConfigurationError(f"no agent named {name!r}; the agents are: {known}")
        for line in format_agent(agent, registry).splitlines():
            host.say(line)
    elif verb == "create":
        await _create_agent(host, rest.strip())
    else:
        raise ConfigurationError(f"unknown subcommand {verb!r}; use {AGENTS_USAGE}")


async def _create_agent(host: CommandHost, name: str) -> None:
    host.say("New agent (Ctrl-C cancels):", "bold")
    answers: dict[str, str] = {}
    questions = [
        ("name", "Name (what the Agent tool's subagent_type will be): "),
        ("description", "When should it be used? (one line): "),
        ("tools", "Tools, comma-separated (Enter: every tool): "),
        ("model", "Model (sonnet, opus, haiku; Enter: the main agent's): "),
        ("scope", "Save for [p]roject or [u]ser? [p] "),
        ("prompt", "Its system prompt (end a line with \\ for more lines): "),
    ]
    for key, question in questions:
        if key == "name" and name:
            answers[key] = name
            continue
        answer = await host.ask(question)
        if answer is None:
            host.say("Cancelled; no agent created.", "dim")
            return
        answers[key] = answer.strip()
    agent = NewAgent(name=answers["name"], description=answers["description"], prompt=answers["prompt"],
                     tools=split_tools(answers["tools"]), model=answers["model"])
    scope_user = answers["scope"].lower().startswith("u")
    folder = (user_config_dirs()[0] if scope_user else Path(host.app.project_root) / ".claude") / "agents"
    path = write_agent_file(folder, agent)
    host.app.registry.reload_if_changed()
    host.say(f"Created {path}; the agent {agent.name.strip()!r} can be used from the next turn.", "dim")


async def tasks_command(host: CommandHost, argument: str) -> None:
    """``/tasks``: background agents and shells; ``show``, ``stop``, ``resume`` one of them."""
    verb, _, rest = argument.partition(" ")
    ident = rest.strip()
    if verb in ("", "list"):
        _list_tasks(host)
        return
    if verb not in ("show", "stop", "resume") or not ident:
        raise ConfigurationError(f"use {TASKS_USAGE}")
    if verb == "resume":
        await _resume_task(host, ident)
        return
    task = _find_task(host.app.tasks.list(), ident)
    if verb == "show":
        _show_task(host, task)
    elif not task.is_live:
        host.say(f"Task {task.id} is not running ({task.status}).", "dim")
    else:
        stopped = await host.app.tasks.stop(task.id)
        host.say(f"Stopped {stopped.id} ({stopped.status}).", "dim")


def _list_tasks(host: CommandHost) -> None:
    tasks = host.app.tasks.list()
    interrupted = _interrupted_rows(host)
    if not tasks and not interrupted:
        host.say("No background tasks in this session.", "dim")
        return
    now = time.time()
    for task in tasks:
        kind = task.agent_type or {"local_bash": "shell", "local_workflow": "workflow"}.get(task.type, "agent")
        host.say(f"  {task.id}  {task.status:<11} {kind:<16} {format_age(task.started_at, now):>8}  "
                 f"{task.description}")
    for row in interrupted:
        host.say(f"  {row['id']}  interrupted (another process; /tasks resume {row['id']})  {row.get('description')}")


def _interrupted_rows(host: CommandHost) -> list[dict[str, Any]]:
    system = host.app.services.subagents
    finder = system.interrupted if system is not None else None
    if finder is None:
        return []
    known = {task.id for task in host.app.tasks.list()}
    return [row for row in finder.find() if row["id"] not in known]


def _find_task(tasks: list[Task], ident: str) -> Task:
    exact = [t for t in tasks if t.id == ident]
    if exact:
        return exact[0]
    if len(ident) < MIN_PREFIX:
        raise ConfigurationError(f"no task {ident!r}; give the id or at least {MIN_PREFIX} of its first characters")
    found = [t for t in tasks if t.id.startswith(ident)]
    if len(found) != 1:
        what = "no task" if not found else f"{len(found)} tasks"
        raise ConfigurationError(f"{what} in this session match {ident!r}; /tasks lists them")
    return found[0]


def _show_task(host: CommandHost, task: Task) -> None:
    fields = [("id", task.id), ("type", task.type), ("agent type", task.agent_type), ("status", task.status),
              ("description", task.description), ("tokens", task.total_tokens), ("tool uses", task.tool_uses),
              ("output file", task.output_file), ("error", task.error)]
    for label, value in fields:
        if value not in (None, ""):
            host.say(f"  {label + ':':<13} {value}")
    if task.result:
        host.say("  result:")
        for line in str(task.result).splitlines():
            host.say(f"    {line}")


async def _resume_task(host: CommandHost, ident: str) -> None:
    system = host.app.services.subagents
    finder = system.interrupted if system is not None else None
    if finder is None:
        raise ConfigurationError("background agents are not available in this session")
    rows = [row for row in finder.find() if str(row["id"]) == ident or
            (len(ident) >= MIN_PREFIX and str(row["id"]).startswith(ident))]
    if len(rows) != 1:
        raise ConfigurationError(f"no single interrupted agent matches {ident!r}; /tasks lists them")
    why_not = await finder.resume(str(rows[0]["id"]))
    if why_not is not None:
        raise ConfigurationError(why_not)
    host.say(f"Resuming {rows[0]['id']} in the background; its notification follows when it ends.", "dim")


WORK_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("agents", "list, show or create agents", agents_command, "[list|show NAME|create]"),
    SlashCommand("tasks", "background agents and shells: show, stop, resume", tasks_command,
                 "[show|stop|resume ID]"),
)
