"""Background agents whose catui process died (kill -9, a reboot): found at start-up and resumed on request.

A task row in state.db that is still ``running``/``queued`` while its owning
process is gone is an *interrupted* agent. The next catui in the project finds
them (:meth:`InterruptedAgents.find`) and, per the ``resumeInterruptedAgents``
setting (``auto`` | ``ask`` | ``off``), resumes them from their output file with
a note that they were interrupted (:meth:`InterruptedAgents.resume`). A row is
*claimed* in one SQLite statement before it resumes, so two catui processes
started together never both resume the same agent. An agent whose
notification the old process had already posted (``meta.notification_posted``)
is never resumed: its parent heard about its end once, and that stays so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from catui.errors import ConfigurationError
from catui.paths import state_db_file
from catui.tasks.notifications import NOTIFICATION_POSTED_KEY

if TYPE_CHECKING:
    from catui.config.settings import Settings
    from catui.subagents.resume import AgentResumer
    from catui.tasks.registry import TaskRegistry

ResumeMode = Literal["auto", "ask", "off"]
RESUME_MODES: tuple[str, ...] = ("auto", "ask", "off")
SETTING = "resumeInterruptedAgents"
REPORTED_KEY = "interruption_reported"

INTERRUPTED_NOTE = (
    "[catui] Your previous run was interrupted: the catui process running you ended (it was killed, or the "
    "machine restarted) before you finished. Your conversation so far is above and nothing you wrote was "
    "lost, but a step may have been cut off: a tool call without a result did not happen as far as you know. "
    "Check where you stopped and continue the task from there; finish with your answer as before."
)


def resume_interrupted_mode(settings: Settings | Mapping[str, Any] | None, *, interactive: bool) -> ResumeMode:
    """The ``resumeInterruptedAgents`` setting; default ``ask`` in the terminal and ``off`` in print mode."""
    value = settings.get(SETTING) if settings is not None else None
    if value is None:
        return "ask" if interactive else "off"
    if value not in RESUME_MODES:
        raise ConfigurationError(
            f"setting {SETTING}={value!r} is not one of auto, ask, off; fix it in your settings.json "
            f"(using {'ask' if interactive else 'off'} meanwhile)"
        )
    mode: ResumeMode = value
    return mode


class InterruptedAgents:
    """Finds this project's interrupted background agents and resumes them in this process."""

    def __init__(self, tasks: TaskRegistry, resumer: AgentResumer) -> None:
        self.tasks = tasks
        self.resumer = resumer

    def find(self) -> list[dict[str, Any]]:
        """Interrupted agents that can still be resumed (oldest first); live rows of dead processes are marked first."""
        # No background task ever ran here: nothing to find, and no state.db (nor SQLite) to open or create.
        if not state_db_file(Path(self.tasks.project_root)).is_file():
            return []
        state = self.tasks.state
        if state is None or not state.path.is_file():
            return []
        state.mark_interrupted()
        return [
            row for row in state.list_tasks(status="interrupted")
            if row.get("type") == "local_agent" and not (row.get("meta") or {}).get(NOTIFICATION_POSTED_KEY)
        ]

    def unreported(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Those of ``rows`` not yet announced to the user, marking them announced (each is said once)."""
        state = self.tasks.state
        fresh: list[dict[str, Any]] = []
        for row in rows:
            meta = dict(row.get("meta") or {})
            if meta.get(REPORTED_KEY):
                continue
            fresh.append(row)
            if state is not None:
                meta[REPORTED_KEY] = True
                state.upsert_task(str(row["id"]), meta=meta)
        return fresh

    async def resume(self, agent_id: str) -> str | None:
        """Resume one interrupted agent in the background; None when it resumed, else why not (one line)."""
        state = self.tasks.state
        if state is None:
            return f"Agent {agent_id} cannot be resumed: state.db is not available"
        transcript = self.resumer.saved_transcript(agent_id)
        if transcript is None:
            return f"Agent {agent_id} cannot be resumed: its output file .catui/tasks/{agent_id}.output is missing"
        if not self._claim(agent_id):
            return f"Agent {agent_id} is not interrupted any more (another catui process took it, or it ended)"
        why_not = await self.resumer.resume_from_transcript(agent_id, INTERRUPTED_NOTE, transcript)
        if why_not is not None:  # give the row back, still interrupted, with the reason
            state.upsert_task(agent_id, status="interrupted", error=why_not)
        return why_not

    def _claim(self, agent_id: str) -> bool:
        """Take the interrupted row for this process; False when another process was first."""
        state = self.tasks.state
        return state is not None and bool(state.claim_interrupted(agent_id, os.getpid()))


def describe(row: Mapping[str, Any]) -> str:
    """``<id> (<agent type>: <description>)`` for messages about an interrupted agent."""
    kind = row.get("agent_type") or "agent"
    return f"{row['id']} ({kind}: {row.get('description') or ''})"
