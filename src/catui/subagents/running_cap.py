"""The running-agents cap of the current Claude Code contract (catui.config.compat, point 5).

In 2.1.332 at most N sub-agents run at once in a session, foreground and
background together (``CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS``, default 20), and
an Agent call beyond that is refused at once with the observed text instead of
waiting. A place is taken before anything is prepared (so calls of one message
that start together cannot all slip past the count) and given back when the
agent ends. The 2.1.92 profile queues background agents instead
(:class:`catui.subagents.background.BackgroundAgents`).
"""

from __future__ import annotations


def cap_refusal(limit: int) -> str:
    """The tool_result text of a refused spawn (observed-cc-now.md section 3)."""
    return (
        f"Concurrent subagent limit reached. You can run {limit} subagents at once. Do not retry. If the user "
        "wants more concurrent subagents, ask them to increase CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS."
    )


class RunningCap:
    """Counts running sub-agents against ``limit``; :meth:`take` before a spawn, :meth:`give_back` at its end."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.running = 0
        self.refused = 0

    def take(self) -> bool:
        """Take a place; False (and counted as refused) when all are taken."""
        if self.running >= self.limit:
            self.refused += 1
            return False
        self.running += 1
        return True

    def give_back(self) -> None:
        self.running = max(0, self.running - 1)
