"""Start-up handling of interrupted background agents, for print mode and the interactive terminal.

Per ``resumeInterruptedAgents`` (see :mod:`catui.subagents.interrupted`):
``auto`` resumes them all, ``ask`` asks one line (the terminal only), ``off``
(and ``ask`` with nobody to ask) says once per agent that it was interrupted and
how to resume it by hand.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError, ConfigurationError
from catui.paths import state_db_file
from catui.subagents.interrupted import describe, resume_interrupted_mode

if TYPE_CHECKING:
    from catui.app.services import AgentApp

Say = Callable[[str], object]
Ask = Callable[[str], Awaitable[str]]


async def handle_interrupted_agents(app: AgentApp, *, interactive: bool, say: Say, ask: Ask | None = None) -> list[str]:
    """Find this project's interrupted background agents and act per the setting; returns the ids resumed."""
    system = app.services.subagents
    if system is None or not system.has_background:
        return []
    try:
        mode = resume_interrupted_mode(app.settings, interactive=interactive)
    except ConfigurationError as exc:  # a bad setting is reported, never fatal: the default applies
        say(f"warning: {exc}")
        mode = "ask" if interactive else "off"
    if not state_db_file(Path(app.project_root)).is_file():
        return []  # no background task ever ran here; the sub-agent runtime stays unbuilt (catui.lazy)
    interrupted = system.interrupted
    if interrupted is None:
        return []
    try:
        rows = interrupted.find()
    except CatuiError as exc:  # a busy or damaged state.db must not keep catui from starting
        say(f"warning: cannot look for interrupted background agents: {exc}")
        return []
    if not rows:
        return []
    if mode == "ask" and ask is not None:
        chosen = await _ask_which(rows, ask)
    elif mode == "auto":
        chosen = rows
    else:
        for row in interrupted.unreported(rows):
            say(f"background agent {describe(row)} was interrupted when its catui process ended; resume it with "
                f"`catui tasks resume {row['id']}` (or set resumeInterruptedAgents to auto)")
        return []
    resumed: list[str] = []
    for row in chosen:
        why_not = await interrupted.resume(str(row["id"]))
        if why_not is None:
            resumed.append(str(row["id"]))
            say(f"resuming interrupted background agent {describe(row)}")
        else:
            say(why_not)
    return resumed


async def _ask_which(rows: list[dict[str, Any]], ask: Ask) -> list[dict[str, Any]]:
    """One line for one agent (y/n); for several, all / none / each (then y/n per agent)."""
    if len(rows) == 1:
        answer = await ask(f"Background agent {describe(rows[0])} was interrupted. Resume it? [y/N] ")
        return rows if _yes(answer) else []
    answer = await ask(f"{len(rows)} background agents were interrupted. Resume [a]ll, [n]one or [e]ach? ")
    choice = answer.strip().lower()[:1]
    if choice == "a":
        return rows
    if choice != "e":
        return []
    return [row for row in rows if _yes(await ask(f"Resume {describe(row)}? [y/N] "))]


def _yes(answer: str) -> bool:
    return answer.strip().lower() in ("y", "yes")
