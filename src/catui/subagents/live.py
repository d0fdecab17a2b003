"""What this process knows of its sub-agents between drivers: inboxes and finished conversations."""

from __future__ import annotations

from catui.subagents.run import SubagentRun

KEEP_FINISHED_RUNS = 256
"""Finished conversations kept for SendMessage to resume; older ones are dropped (their files stay)."""


class LiveAgents:
    """Inboxes of running children and the conversations of finished ones, shared by the drivers and SendMessage."""

    def __init__(self, keep_finished: int = KEEP_FINISHED_RUNS) -> None:
        self.inboxes: dict[str, list[str]] = {}
        self.finished: dict[str, SubagentRun] = {}
        self._keep = keep_finished
        self._wake: set[str] = set()

    def attach_inbox(self, run: SubagentRun) -> None:
        """Deliver messages queued for ``run`` with its next tool_result round."""
        agent_id = run.agent_id
        self.inboxes.setdefault(agent_id, [])
        def pending() -> list[str]:
            box = self.inboxes.get(agent_id)
            queued = list(box) if box else []
            if box:
                box.clear()
            return queued

        run.session.add_pending_messages(pending)

    def queue(self, agent_id: str, text: str) -> None:
        """Queue ``text`` for a running child's next tool round."""
        self.inboxes.setdefault(agent_id, []).append(text)

    def queue_notice(self, agent_id: str, text: str) -> None:
        """Queue a nested background agent's ``<task-notification>`` for its running parent agent.

        Unlike a plain message, a notice left unread when the parent ends continues the parent
        (see :meth:`take_wake`), so that it is never lost.
        """
        self.queue(agent_id, text)
        self._wake.add(agent_id)

    def take_wake(self, agent_id: str) -> bool:
        """Whether a notice was queued for ``agent_id`` since the last call (and forget it)."""
        if agent_id in self._wake:
            self._wake.discard(agent_id)
            return True
        return False

    def close_inbox(self, agent_id: str) -> list[str]:
        """Remove a child's inbox; returns what it had not read."""
        return self.inboxes.pop(agent_id, None) or []

    def keep_finished(self, run: SubagentRun) -> None:
        """Hold a finished run's conversation so that SendMessage can continue it (newest kept)."""
        self.finished.pop(run.agent_id, None)
        self.finished[run.agent_id] = run
        while len(self.finished) > self._keep:
            self.finished.pop(next(iter(self.finished)))

    def take_finished(self, agent_id: str) -> SubagentRun | None:
        """The finished run of ``agent_id``, no longer held; None when this process does not hold it."""
        return self.finished.pop(agent_id, None)
