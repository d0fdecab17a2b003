"""The workflows a session runs, as the terminal's ``/workflows`` view shows them: phases, agents, tokens.

The Workflow tool registers each run it launches in a :class:`LiveWorkflows` (kept on the app's services);
a :class:`LiveWorkflow` reads its runner's progress entries and counts each running agent's tokens from the
usage events the agent reports, so the view can be redrawn at any moment without asking anyone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from catui.session.events import UsageEvent
from catui.session.usage import total_tokens
from catui.workflows.runner import WorkflowRunner


@dataclass
class AgentLine:
    """One ``agent()`` call of a run as the view shows it."""

    label: str
    phase: str | None
    state: str  # running | done | error | replayed
    tokens: int = 0
    agent_id: str | None = None
    error: str | None = None


@dataclass
class LiveWorkflow:
    """One launched run: what the view needs of it while it runs and after it ended."""

    task_id: str
    run_id: str
    name: str
    summary: str
    runner: WorkflowRunner
    phases: list[str] = field(default_factory=list)
    """The titles of ``meta.phases`` (known before the first agent runs), in order."""
    status: str = "running"
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    running_tokens: dict[str, int] = field(default_factory=dict)
    """Tokens of each agent so far (by agent id), from its usage events."""

    def observe(self, event: Any) -> None:
        """One event of one of the run's agents (the agents' ``emit``): their usage counts."""
        if isinstance(event, UsageEvent) and event.agent_id is not None:
            self.running_tokens[event.agent_id] = self.running_tokens.get(event.agent_id, 0) + total_tokens(event.usage)

    def set_meta(self, meta: dict[str, Any]) -> None:
        phases = meta.get("phases")
        if isinstance(phases, list):
            self.phases = [str(p.get("title")) for p in phases if isinstance(p, dict) and p.get("title")]

    def finish(self, status: str, error: str | None) -> None:
        self.status, self.error, self.ended = status, error, time.monotonic()

    @property
    def current_phase(self) -> str | None:
        return self.runner.current_phase

    def phase_titles(self) -> list[str]:
        """``meta.phases`` and any phase the script entered that they do not name, in order."""
        titles = list(self.phases)
        for entry in self.runner.progress:
            if entry.get("type") == "workflow_phase" and entry.get("title") not in titles:
                titles.append(str(entry.get("title")))
        return titles

    def group_running(self, title: str) -> bool | None:
        """For a child workflow's group: whether any of its agents still runs (None: ``title`` is no group)."""
        if title not in self.runner.groups:
            return None
        return any(line.phase == title and line.state == "running" for line in self.agents())

    def agents(self) -> list[AgentLine]:
        """Every agent call so far, in the order they started, with its state and tokens."""
        lines: list[AgentLine] = []
        by_id: dict[str, AgentLine] = {}
        for entry in list(self.runner.progress):
            if entry.get("type") != "workflow_agent":
                continue
            agent_id = entry.get("agentId")
            state = entry.get("state")
            line = by_id.get(agent_id) if agent_id is not None else None
            if line is None:
                line = AgentLine(str(entry.get("label")), entry.get("phase"), "running", agent_id=agent_id)
                lines.append(line)
                if agent_id is not None:
                    by_id[agent_id] = line
            if state == "done":
                line.state = "replayed" if entry.get("replayed") else "done"
                line.tokens = int(entry.get("tokens") or line.tokens)
            elif state == "error":
                line.state, line.error = "error", entry.get("error")
        for line in lines:
            if line.state in ("running", "error") and line.agent_id is not None:
                line.tokens = self.running_tokens.get(line.agent_id, line.tokens)
        return lines

    def duration_s(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started


class LiveWorkflows:
    """The workflow runs of one session, by task id, oldest first."""

    def __init__(self) -> None:
        self.runs: dict[str, LiveWorkflow] = {}

    def add(self, run: LiveWorkflow) -> None:
        self.runs[run.task_id] = run

    def list(self) -> list[LiveWorkflow]:
        return list(self.runs.values())

    def any_running(self) -> bool:
        return any(run.status == "running" for run in self.runs.values())
