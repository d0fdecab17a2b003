"""What SendMessage reaches (spec 14.1): running agents' inboxes, finished agents to resume, names."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from catui.subagents.background import BackgroundAgents
from catui.subagents.foreground import ForegroundDriver
from catui.subagents.live import LiveAgents
from catui.subagents.names import AgentNames
from catui.subagents.resume import AgentResumer
from catui.tasks.registry import TaskRegistry


def coordinator_reminder(message: str, summary: str | None = None) -> str:
    """How a SendMessage reaches a running agent: appended to its next tool_result round."""
    about = f" ({summary})" if summary else ""
    return (
        "<system-reminder>\n"
        f"The coordinator sent you a message while you were working{about}:\n"
        f"{message}\n"
        "Address it before you finish your task.\n"
        "</system-reminder>"
    )


class AgentMessages(Protocol):
    """What SendMessage asks of the agents it reaches (:class:`AgentMessaging`, or the handle that builds it
    on first use: ``catui.subagents.install.MessagingHandle``)."""

    @property
    def names(self) -> AgentNames: ...

    @property
    def tasks(self) -> TaskRegistry: ...

    def running_agent(self, agent_id: str) -> bool: ...

    def queue_message(self, agent_id: str, text: str) -> None: ...

    def holds_finished(self, agent_id: str) -> bool: ...

    def resume(self, agent_id: str, text: str, *, tool_use_id: str | None = None) -> bool: ...

    def saved_transcript(self, agent_id: str) -> Path | None: ...

    async def resume_from_transcript(self, agent_id: str, text: str, transcript: Path) -> str | None: ...

    def known_agents(self) -> dict[str, str]: ...


class AgentMessaging:
    """The agents of one application as SendMessage sees them (``ToolServices.messaging``)."""

    def __init__(
        self, names: AgentNames, tasks: TaskRegistry, live: LiveAgents, foreground: ForegroundDriver,
        background: BackgroundAgents, resumer: AgentResumer,
    ) -> None:
        self.names = names
        self.tasks = tasks
        self.live = live
        self.foreground = foreground
        self.background = background
        self.resumer = resumer

    def running_agent(self, agent_id: str) -> bool:
        """Whether ``agent_id`` is a child running now (background, or foreground and able to take messages)."""
        return self.background.is_running(agent_id) or self.foreground.is_movable(agent_id)

    def queue_message(self, agent_id: str, text: str) -> None:
        """Deliver ``text`` to a running child with its next tool_result round."""
        self.live.queue(agent_id, text)

    def holds_finished(self, agent_id: str) -> bool:
        """Whether this process holds the conversation of the finished agent ``agent_id``."""
        return agent_id in self.live.finished

    def resume(self, agent_id: str, text: str, *, tool_use_id: str | None = None) -> bool:
        """Continue a finished agent held in memory, in the background; False when it is not held.
        ``tool_use_id`` (the resuming call) is what its next notification names."""
        return self.background.resume_held(agent_id, text, tool_use_id=tool_use_id)

    def saved_transcript(self, agent_id: str) -> Path | None:
        return self.resumer.saved_transcript(agent_id)

    async def resume_from_transcript(self, agent_id: str, text: str, transcript: Path) -> str | None:
        return await self.resumer.resume_from_transcript(agent_id, text, transcript)

    def known_agents(self) -> dict[str, str]:
        """Agent ids SendMessage can reach, with a label: ``name`` or description."""
        out: dict[str, str] = {}
        for task in self.tasks.list():
            if task.type == "local_agent":
                out[task.id] = task.description
        for run in self.foreground.movable_runs():
            out[run.agent_id] = run.description
        return out
